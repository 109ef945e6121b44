// The optimizer on the real measurements of the Perseus paper (../shared/data/
// sosp24: GPT-3 175B stages on A100, 8 stages, 83.64 W blocking power),
// compared with the frontiers the original optimizer produced from them.
// Skips with a message when the shared data is absent (a user's clone).
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>

#include "common/csv_reader.h"
#include "optimizer/testing/brute_force.h"
#include "perseus/optimizer.h"

namespace perseus {
namespace {

const std::string kData = PERSEUS_SHARED_DATA;
const std::string kProfile = kData + "/sosp24/stage_profile/gpt3-175b+a100_sxm_bf16.csv";
constexpr double kBlockingW = 83.64;

#define REQUIRE_SHARED_DATA()                                                                   \
  if (!std::filesystem::exists(kProfile)) {                                                    \
    GTEST_SKIP() << "shared data not found at " << kProfile << "; skipping (CI has ../shared)"; \
  }

Problem Gpt3(int microbatches, bool quantize_ms = false, ScheduleKind kind = ScheduleKind::k1F1B, int chunks = 1) {
  Result<Profile> profile = LoadProfileCsv(kProfile, 8);
  EXPECT_TRUE(profile.ok()) << profile.status().ToString();
  if (quantize_ms) {  // the original's model: every time rounded to whole milliseconds
    for (auto& stage : profile->stages)
      for (auto& pts : stage.points)
        for (auto& p : pts) p.time_s = std::round(p.time_s * 1000) / 1000;
  }
  ProblemSpec spec;
  spec.schedule = {kind, 8, microbatches, chunks};
  spec.blocking_power_w = kBlockingW;
  Result<Problem> problem = BuildProblem(*profile, spec);
  EXPECT_TRUE(problem.ok()) << problem.status().ToString();
  return std::move(*problem);
}

double Savings(const Frontier& f, const FrontierPlan* p) { return 1 - p->energy_j / f.all_max.energy_j; }

struct OriginalPoint {
  double time_s, energy_j;
};

std::vector<OriginalPoint> OriginalFrontier(int microbatches) {
  std::string path = kData + "/sosp24/frontier/gpt3-175b+a100_sxm_bf16_mb" + std::to_string(microbatches) + ".csv";
  Result<CsvTable> t = ReadCsvFile(path);
  EXPECT_TRUE(t.ok()) << t.status().ToString();
  std::vector<OriginalPoint> out;
  for (const CsvRow& row : t->rows) out.push_back({*t->Number(row, 0), *t->Number(row, 1)});
  return out;
}

class Sosp24 : public ::testing::TestWithParam<int> {};

TEST(Sosp24Schedules, SweepReachesTheFastestTimeAtScale) {
  // Long pipelines put computations a hair (under 1e-9 s) from a hull vertex;
  // the sweep once stalled there, short of the all-max time (interleaved 8x64).
  REQUIRE_SHARED_DATA();
  struct Case {
    ScheduleKind kind;
    int microbatches, chunks;
  };
  for (Case c : {Case{ScheduleKind::kInterleaved1F1B, 64, 2}, Case{ScheduleKind::kInterleaved1F1B, 96, 2},
                 Case{ScheduleKind::kGPipe, 96, 1}, Case{ScheduleKind::k1F1B, 96, 1}}) {
    FrontierOptions options;
    options.lower_bound_samples = 0;
    Result<Frontier> f = SolveFrontier(Gpt3(c.microbatches, false, c.kind, c.chunks), options);
    ASSERT_TRUE(f.ok()) << f.status().ToString();
    const std::string label = std::string(ScheduleName(c.kind)) + " x" + std::to_string(c.microbatches);
    EXPECT_TRUE(f->stats.sweep_complete) << label;
    EXPECT_EQ(f->plans.front().time_s, f->all_max.time_s) << label;
    EXPECT_GT(Savings(*f, f->NoSlowdownPlan()), 0.10) << label;
  }
}

TEST_P(Sosp24, NoSlowdownPlanSavesAtLeastThePaper) {
  REQUIRE_SHARED_DATA();
  const int m = GetParam();
  Problem problem = Gpt3(m);
  Result<Frontier> f = SolveFrontier(problem, FrontierOptions{});
  ASSERT_TRUE(f.ok()) << f.status().ToString();
  EXPECT_TRUE(f->stats.lower_bound_checked);
  const FrontierPlan* ns = f->NoSlowdownPlan();
  ASSERT_NE(ns, nullptr);
  EXPECT_LE(ns->time_s, f->all_max.time_s * (1 + 1e-12));  // as fast as all-max (to rounding)
  EXPECT_GE(Savings(*f, ns), m == 12 ? 0.158 : 0.142);
  EXPECT_LE(ns->energy_j / ns->lower_bound_j - 1, 0.005) << "within 0.5% of the lower bound";
}

// Our frontier saves at least the original's at every relative time.
void BeatsTheOriginal(const Frontier& f, int m) {
  if (m == 12) {  // the original's savings at 1%, 5%, 10% slowdown, re-evaluated on real values
    EXPECT_GE(Savings(f, f.PlanForTime(f.all_max.time_s * 1.01)), 0.171);
    EXPECT_GE(Savings(f, f.PlanForTime(f.all_max.time_s * 1.05)), 0.211);
    EXPECT_GE(Savings(f, f.PlanForTime(f.all_max.time_s * 1.10)), 0.229);
  }
  // Along the whole frontier: each frontier's times relative to its own
  // fastest point (the original's time axis is its quantised, fitted model,
  // whose fastest point claims to beat all-max), energies in joules (the
  // original's are its own model's, which flatter it by up to 2.7%).
  int compared = 0;
  std::vector<OriginalPoint> original = OriginalFrontier(m);
  double original_fastest_s = original.back().time_s;
  for (const OriginalPoint& o : original) {
    const FrontierPlan* ours = f.PlanForTime(f.plans.front().time_s * o.time_s / original_fastest_s);
    ASSERT_NE(ours, nullptr) << "original point at " << o.time_s;
    EXPECT_LE(ours->energy_j, o.energy_j) << "original point " << o.time_s << " s, " << o.energy_j << " J";
    ++compared;
  }
  EXPECT_GT(compared, 600);
}

TEST_P(Sosp24, BeatsTheOriginalAtEverySlowdown) {
  REQUIRE_SHARED_DATA();
  const int m = GetParam();
  Problem problem = Gpt3(m);
  // A plan every unit time, and plans at about 300 times: these frontiers
  // span 520 and 954 unit times, so that thins them about as much as
  // `perseus optimize`'s 1,000 thins 8 x 96's 3,030.
  FrontierOptions coarse;
  coarse.max_plans = 300;
  for (const FrontierOptions& options : {FrontierOptions{}, coarse}) {
    SCOPED_TRACE(options.max_plans);
    BeatsTheOriginal(*SolveFrontier(problem, options), m);
  }
}

INSTANTIATE_TEST_SUITE_P(Microbatches, Sosp24, ::testing::Values(12, 24));

// Bloom's 1395 MHz is faster than its 1410 on every stage, so no one clock is
// no slower for all of a GPU's computations, and plans limited from the
// unlimited frontier's had to slow down: with one change per GPU (none, around
// a cycle) the cheapest saved 16.85% at +7.8% time on 8 x 12, where every GPU at
// one lower clock saves more (a review). The limited frontier now holds the
// plans on one clock per GPU: none of the even ones beats it.
TEST(Sosp24ClockChanges, BloomsLimitedFrontierIsNeverBeatenByOneClockOnEveryGpu) {
  const std::string bloom = kData + "/sosp24/stage_profile/bloom+a100_sxm_bf16.csv";
  REQUIRE_SHARED_DATA();
  Result<Profile> profile = LoadProfileCsv(bloom, 8);
  ASSERT_TRUE(profile.ok()) << profile.status().ToString();
  ProblemSpec spec;
  spec.schedule = {ScheduleKind::k1F1B, 8, 12, 1};
  spec.blocking_power_w = kBlockingW;
  Result<Problem> problem = BuildProblem(*profile, spec);
  ASSERT_TRUE(problem.ok()) << problem.status().ToString();
  FrontierOptions options;
  options.max_clock_changes_per_gpu = 1;
  Result<Frontier> f = SolveFrontier(*problem, options);
  ASSERT_TRUE(f.ok()) << f.status().ToString();
  double best_even_saving = 0;
  for (const FreqPoint& clock : problem->nodes[0].options) {
    const PlanCost cost = EvaluatePlan(*problem, testing::EveryComputationAt(*problem, clock.freq_mhz));
    best_even_saving = std::max(best_even_saving, 1 - cost.energy_j / f->all_max.energy_j);
    const FrontierPlan* mine = f->PlanForTime(cost.time_s);
    ASSERT_NE(mine, nullptr);
    EXPECT_LE(mine->energy_j, cost.energy_j * (1 + 1e-12)) << clock.freq_mhz << " MHz on every GPU";
  }
  EXPECT_GT(best_even_saving, 0.2);
  EXPECT_GE(Savings(*f, &f->MinEnergyPlan()), best_even_saving - 1e-12);
  for (const FrontierPlan& p : f->plans) {
    for (int c : ClockChangesPerGpu(*problem, p.choice)) EXPECT_LE(c, 1);
    EXPECT_LE(p.lower_bound_j, p.energy_j);
  }
}

}  // namespace
}  // namespace perseus
