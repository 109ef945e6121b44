#include "emulator/carbon_optimum.h"

#include <gtest/gtest.h>

#include <cmath>
#include <fstream>
#include <random>

#include "control/carbon_choice.h"
#include "emulator/carbon_evaluation.h"

namespace perseus::carbon {
namespace {

IntensityTrace RandomTrace(std::mt19937& rng, int hours) {
  std::uniform_real_distribution<double> u(30, 700);
  IntensityTrace t;
  t.start_unix_s = 1640995200;
  for (int h = 0; h < hours; ++h) t.carbon_g_per_kwh.push_back(u(rng));
  return t;
}

// Options on a random convex (time, energy) curve plus a few dominated ones
// (the LP is given them all; the greedy keeps the hull).
KnobSet RandomKnobs(std::mt19937& rng, int n) {
  std::uniform_real_distribution<double> u(0.02, 0.3);
  KnobSet k;
  double t = 1, e = 1000, slope = 3000;
  for (int i = 0; i < n; ++i) {
    k.options.push_back({"o" + std::to_string(i), t, e, i});
    if (i % 2 == 1) k.options.push_back({"dominated", t * 1.01, e * 1.02, -1});
    const double dt = u(rng);
    t += dt;
    e = std::max(1.0, e - slope * dt);
    slope *= 0.2 + u(rng);
  }
  k.reference = {"ref", 1, 1000};
  k.pareto = ParetoFront(k.options);
  return k;
}

// GLPK's simplex on every option and the greedy on the hull give the same optimum.
TEST(CarbonOptimum, TheGreedyIsTheLinearProgramsOptimum) {
  std::mt19937 rng(17);
  for (int trial = 0; trial < 60; ++trial) {
    const IntensityTrace trace = RandomTrace(rng, 40);
    KnobSet knobs = RandomKnobs(rng, 2 + trial % 5);
    OptimumConfig config;
    config.work_h = 3 + trial % 17;
    config.slowdown_budget = 0.01 + 0.02 * (trial % 7);
    config.allow_pause = trial % 2 == 1;
    config.budget_at_every_hour = trial % 3 == 2;  // the floors: every pausing and holding case too
    if (trial % 4 == 3) {  // a pause holding the GPUs: some idle power, at times above the slowest option's
      const KnobOption& slowest = knobs.options.back();
      knobs.pause_power_w = std::uniform_real_distribution<double>(0.1, 1.2)(rng) * slowest.energy_j / slowest.time_s;
    }
    Result<OptimumResult> lp = SolveOptimumLp(trace, trial % 5, knobs, config);
    ASSERT_TRUE(lp.ok()) << lp.status().ToString();
    Result<OptimumResult> greedy = SolveOptimumGreedy(trace, trial % 5, knobs, config);
    ASSERT_TRUE(greedy.ok()) << greedy.status().ToString();
    EXPECT_NEAR(greedy->carbon_g, lp->carbon_g, 1e-7 * lp->carbon_g) << "trial " << trial;
    EXPECT_DOUBLE_EQ(greedy->time_h, lp->time_h);
  }
}

TEST(CarbonOptimum, PausingNeverCostsAndFinishingIsChecked) {
  std::mt19937 rng(23);
  const IntensityTrace trace = RandomTrace(rng, 60);
  const KnobSet knobs = RandomKnobs(rng, 4);
  OptimumConfig run{20, 0.25, false}, pause{20, 0.25, true};
  const double ran_g = SolveOptimumGreedy(trace, 0, knobs, run)->carbon_g;
  EXPECT_LE(SolveOptimumGreedy(trace, 0, knobs, pause)->carbon_g, ran_g * (1 + 1e-12));  // equal but for rounding
  // The fastest option is the reference: no budget cannot be beaten by more time.
  OptimumConfig none{20, 0, false};
  Result<OptimumResult> lp = SolveOptimumLp(trace, 0, knobs, none);
  ASSERT_TRUE(lp.ok());
  double allmax = 0;
  for (int h = 0; h < 20; ++h) allmax += trace.carbon_g_per_kwh[h] * 1000 / 1 * 3600 / 3.6e6;
  EXPECT_NEAR(lp->carbon_g, allmax, 1e-9 * allmax);
  // A job the fastest option cannot finish in time is an error naming the start.
  KnobSet slow = knobs;
  slow.reference.time_s = 0.5;
  Result<OptimumResult> bad = SolveOptimumLp(trace, 3, slow, none);
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.status().message().rfind("carbon optimum from window 3: GLPK simplex", 0), 0u) << bad.status().message();
  for (bool every_hour : {false, true}) {
    none.budget_at_every_hour = every_hour;
    Result<OptimumResult> greedy = SolveOptimumGreedy(trace, 3, slow, none);
    ASSERT_FALSE(greedy.ok());
    EXPECT_EQ(greedy.status().message().rfind("carbon optimum from window 3: infeasible", 0), 0u)
        << greedy.status().message();
  }
}

// On the shared GPT-3 job and CAISO 2022, a week: the two agree, and the
// optimum is at least as good as the fixed mix spending the same budget.
TEST(CarbonOptimum, AgreesOnTheSharedJobAndBeatsTheFixedMix) {
  const std::string shared = PERSEUS_SHARED_DATA;
  const std::string profile = shared + "/sosp24/stage_profile/gpt3-175b+a100_sxm_bf16.csv";
  const std::string trace_path = shared + "/carbon/eia2022_CISO_hourly_ci.csv";
  if (!std::ifstream(profile) || !std::ifstream(trace_path)) GTEST_SKIP() << "shared data absent";
  Result<Profile> p = LoadProfileCsv(profile, 8);
  ASSERT_TRUE(p.ok());
  ProblemSpec spec;
  spec.schedule.stages = 8;
  spec.schedule.microbatches = 12;
  spec.blocking_power_w = 83.64;
  Result<PipelineKnobs> job = BuildPipelineKnobs(*p, spec);
  ASSERT_TRUE(job.ok());
  Result<IntensityTrace> trace = LoadEiaTrace(trace_path);
  ASSERT_TRUE(trace.ok());
  for (double budget : {0.025, 0.05}) {
    const OptimumConfig config{168, budget, false};
    Result<OptimumResult> lp = SolveOptimumLp(*trace, 1000, job->frontier_knobs, config);
    ASSERT_TRUE(lp.ok());
    EXPECT_NEAR(SolveOptimumGreedy(*trace, 1000, job->frontier_knobs, config)->carbon_g, lp->carbon_g, 1e-7 * lp->carbon_g);
    // With the budget kept at every hour: dearer, and the forward greedy is still GLPK's optimum.
    const OptimumConfig guarded{168, budget, false, true};
    Result<OptimumResult> guarded_lp = SolveOptimumLp(*trace, 1000, job->frontier_knobs, guarded);
    ASSERT_TRUE(guarded_lp.ok());
    EXPECT_NEAR(SolveOptimumGreedy(*trace, 1000, job->frontier_knobs, guarded)->carbon_g, guarded_lp->carbon_g,
                1e-7 * guarded_lp->carbon_g);
    EXPECT_GT(guarded_lp->carbon_g, lp->carbon_g);
    ReplayConfig mix = FixedMixForSlowdown(job->frontier_knobs, budget);
    mix.work_h = 168;
    const ReplayResult fixed = ReplayJob(*trace, 1000, job->frontier_knobs, mix, nullptr);
    EXPECT_NEAR(fixed.time_h, 168 * (1 + budget), 1e-9);  // the mix spends exactly the budget
    EXPECT_LE(lp->carbon_g, fixed.carbon_g);
  }
}

}  // namespace
}  // namespace perseus::carbon
