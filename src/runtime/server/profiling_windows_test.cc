#include "runtime/server/profiling_windows.h"

#include <gtest/gtest.h>

namespace perseus::server {
namespace {

TEST(StageObservationsTest, OneRowPerMeasuredReportOfTheStage) {
  RankInfo a{0, 0, 0, 0, "a", "a", {1410, 1200}, "", 0}, b{1, 0, 1, 0, "b", "b", {1410, 1200}, "", 0};
  ProfilingState p;
  p.clocks_mhz = {{1410, 1200}, {1410, 1200}};
  p.windows.push_back({{{0, 0}, {0, 0}}, "reference", 0, 10});
  p.windows.push_back({{{1, 0}, {1, 1}}, "cross", 10, 30});
  WindowReportMap reports;
  WindowReport r;
  r.rank = 0;
  r.window = 1;
  r.iterations = 2;
  r.cycle_time_s = 3;
  r.energy_j = 900;
  r.forward = {8, 0.5, 0.04};
  r.backward = {8, 1.0, 0.13};
  reports[{1, 0}] = r;
  r.window = 0;
  r.energy_j = -1;  // unmeasured: skipped
  reports[{0, 0}] = r;
  r.rank = 1;
  reports[{0, 1}] = r;
  std::vector<profiling::WindowObservation> obs = StageObservations(p, 0, {&a}, reports);
  ASSERT_EQ(obs.size(), 1u);
  EXPECT_EQ(obs[0].forward_index, 1);
  EXPECT_EQ(obs[0].backward_index, 0);
  EXPECT_DOUBLE_EQ(obs[0].mid_time_s, 20);
  EXPECT_DOUBLE_EQ(obs[0].energy_j, 900);
  EXPECT_EQ(obs[0].forward_count, 8);
  EXPECT_TRUE(StageObservations(p, 1, {&b}, reports).empty());
}

TEST(ProfileFromEstimatesTest, MeasuredClocksOnlyScaledByChunks) {
  profiling::StageEstimate e;
  profiling::ClockEstimate c;
  c.clock_mhz = 1410;
  c.measured = true;
  c.forward_time_s = 1.5;
  c.forward_energy_j = 10;
  c.backward_time_s = 3;
  c.backward_energy_j = 30;
  e.clocks.push_back(c);
  c.clock_mhz = 1200;
  c.measured = false;
  e.clocks.push_back(c);
  e.blocking_power_w = 5;
  Result<Profile> p = ProfileFromEstimates({e}, 2, {1000});
  ASSERT_TRUE(p.ok()) << p.status().ToString();
  ASSERT_EQ(p->stages[0].at(Instruction::kForward).size(), 1u);
  EXPECT_DOUBLE_EQ(p->stages[0].at(Instruction::kForward)[0].time_s, 3.0);
  EXPECT_DOUBLE_EQ(p->stages[0].at(Instruction::kBackward)[0].energy_j, 60.0);
  EXPECT_DOUBLE_EQ(MedianBlockingPowerW({e}), 5);
  // A fit below the blocking power (noise) is raised to it.
  e.blocking_power_w = 20;  // forward: 10 J in 1.5 s is 6.7 W
  EXPECT_DOUBLE_EQ(ProfileFromEstimates({e}, 1, {1000})->stages[0].at(Instruction::kForward)[0].energy_j, 30.0);
  // A fit above the GPU's power limit (noise) is lowered to it.
  e.clocks[0].backward_energy_j = 3 * 5000;  // 5 kW
  EXPECT_DOUBLE_EQ(ProfileFromEstimates({e}, 1, {440})->stages[0].at(Instruction::kBackward)[0].energy_j, 3 * 440.0);
  EXPECT_EQ(ProfileFromEstimates({e}, 1, {}).status().code(), Status::Code::kInternal);
  e.clocks[0].measured = false;
  EXPECT_EQ(ProfileFromEstimates({e}, 1, {1000}).status().code(), Status::Code::kInternal);
}

}  // namespace
}  // namespace perseus::server
