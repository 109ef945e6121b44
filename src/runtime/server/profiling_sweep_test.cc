#include "runtime/server/profiling_sweep.h"

#include <gtest/gtest.h>

namespace perseus::server {
namespace {

TEST(SweepClocksTest, IntersectsStridesAndKeepsLowest) {
  RankInfo a{0, 0, 0, 0, "a", "a", {1410, 1395, 1380, 1365, 1350, 1335}};
  RankInfo b{1, 1, 0, 0, "b", "b", {1395, 1380, 1365, 1350, 1335, 1320}};
  ProfilingOptions o;
  o.clock_stride = 2;
  EXPECT_EQ(SweepClocks({&a, &b}, o), (std::vector<int>{1395, 1365, 1335}));
  o.clock_stride = 3;
  EXPECT_EQ(SweepClocks({&a, &b}, o), (std::vector<int>{1395, 1350, 1335}));
  o.min_clock_mhz = 1360;
  EXPECT_EQ(SweepClocks({&a, &b}, o), (std::vector<int>{1395, 1365}));
  RankInfo c{2, 2, 0, 0, "c", "c", {900}};
  EXPECT_TRUE(SweepClocks({&a, &c}, ProfilingOptions{}).empty());
}

TEST(AdvanceSweepTest, StopsAfterConsecutiveRises) {
  StageSweep s;
  s.clocks_mhz = {7, 6, 5, 4, 3, 2, 1};
  ProfilingOptions o;  // 3 rises
  for (double e : {10.0, 9.0, 9.5, 8.0, 8.5, 9.0}) {
    ASSERT_FALSE(s.done);
    AdvanceSweep(&s, e, o);
  }
  EXPECT_FALSE(s.done);  // rises: 1, reset, 1, 2
  AdvanceSweep(&s, 9.5, o);
  EXPECT_TRUE(s.done);
  EXPECT_EQ(s.index, 6);
}

TEST(AdvanceSweepTest, StopsAtTheLowestClock) {
  StageSweep s;
  s.clocks_mhz = {2, 1};
  AdvanceSweep(&s, 5, ProfilingOptions{});
  EXPECT_FALSE(s.done);
  AdvanceSweep(&s, 4, ProfilingOptions{});
  EXPECT_TRUE(s.done);
  EXPECT_EQ(s.clock_mhz(), 1);
}

TEST(MeasuredProfileTest, AveragesRanksAndScalesChunks) {
  RankInfo a{0, 0, 0, 0, "a", "a", {1410}}, b{1, 1, 0, 0, "b", "b", {1410}};
  MeasurementMap m;
  m[{0, 1410}] = Measurement{0, 1410, {2, 2.0, 20}, {2, 4.0, 40}, 1, 50, 1};
  m[{1, 1410}] = Measurement{1, 1410, {2, 4.0, 40}, {2, 8.0, 80}, 1, 70, 1};
  StageSweep sweep;
  sweep.clocks_mhz = {1410};
  sweep.done = true;
  Result<Profile> p = BuildMeasuredProfile({{&a, &b}}, m, {sweep}, 1, 2);
  ASSERT_TRUE(p.ok()) << p.status().ToString();
  EXPECT_DOUBLE_EQ(p->stages[0].at(Instruction::kForward)[0].time_s, 3.0);    // mean 1.5 x 2 chunks
  EXPECT_DOUBLE_EQ(p->stages[0].at(Instruction::kBackward)[0].energy_j, 60.0);  // mean 30 x 2
  EXPECT_DOUBLE_EQ(*MeasuredBlockingPowerW(m), 60.0);
  EXPECT_FALSE(MeasuredStagePoint({&a, &b}, m, 1410, 2).has_value());
}

}  // namespace
}  // namespace perseus::server
