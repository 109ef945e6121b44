#include "control/clock_change_limit.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <string>

#include "perseus/gpu_model.h"

namespace perseus::control {
namespace {

// The bundled GPT-3 XL example on an A100 and its frontier (the no-slowdown
// plan changes clocks often).
struct Job {
  Problem problem;
  Frontier frontier;
};

Job SolvedJob(const std::string& name = "gpt3-xl-a100") {
  Result<Example> example = FindExample(name);
  EXPECT_TRUE(example.ok());
  Result<Problem> problem = BuildProblem(example->profile, example->spec);
  EXPECT_TRUE(problem.ok());
  Result<Frontier> frontier = SolveFrontier(*problem, FrontierOptions{});
  EXPECT_TRUE(frontier.ok());
  return {std::move(*problem), std::move(*frontier)};
}

int MostChanges(const Problem& problem, const PlanChoice& choice) {
  const std::vector<int> changes = ClockChangesPerGpu(problem, choice);
  return *std::max_element(changes.begin(), changes.end());
}

TEST(LimitClockChangesForLatency, FastOrUnmeasuredSwitchesLeaveTheFrontierAsSolved) {
  Job job = SolvedJob();
  const PlanChoice before = job.frontier.NoSlowdownPlan()->choice;
  for (auto [spec_limit, latency_s] : {std::pair{3, 0.005}, {0, -1.0}, {-1, 0.005}, {-1, -1.0}}) {
    // The solve applies the spec's limit itself.
    EXPECT_EQ(SolveClockChangeLimit(spec_limit, latency_s), spec_limit);
    Frontier f = job.frontier;
    const ClockChangeDecision d = LimitClockChangesForLatency(job.problem, spec_limit, latency_s, &f);
    EXPECT_EQ(d.limit, spec_limit);
    EXPECT_FALSE(d.automatic);
    EXPECT_FALSE(d.frontier_limited);
    EXPECT_EQ(f.NoSlowdownPlan()->choice, before);
  }
  // Slow switches: the frontier is solved unlimited and limited afterwards.
  EXPECT_EQ(SolveClockChangeLimit(3, 0.1), -1);
  EXPECT_EQ(SolveClockChangeLimit(-1, 0.1), -1);
}

// The spec's limit under slow switches: kept, with the limited plans' runs
// moved only where the latency model says the no-slowdown plan is then no
// later (or cheaper within the tolerance). Until 2026-11-30 a spec's limit
// always moved them, and with 100 ms switches the closed loop on GPT-3 8 x 12
// ran 2.40% slower than all-max at limit 2 instead of 1.66%.
// The spec's limit `k` under `latency_s` switches against brute force over the
// two ways, each frontier limited in full and judged by the plan it would run
// (its no-slowdown plan) with the latency: the cheaper within the tolerance,
// else the quicker, the cheaper where both are as late. Counts the cases
// where moved runs would be late and unmoved ones not.
void CheckSpecLimit(const Job& job, int k, double latency_s, int* left_in_place) {
  const double deadline_s = job.frontier.all_max.time_s * (1 + kLatencySlowdownTolerance);
  const std::string at = "limit " + std::to_string(k) + ", " + std::to_string(latency_s) + " s";
  Frontier f = job.frontier;
  const ClockChangeDecision d = LimitClockChangesForLatency(job.problem, k, latency_s, &f);
  EXPECT_EQ(d.limit, k) << at;
  EXPECT_FALSE(d.automatic) << at;
  EXPECT_TRUE(d.frontier_limited) << at;
  for (const FrontierPlan& p : f.plans) EXPECT_LE(MostChanges(job.problem, p.choice), k) << at;
  Frontier way[2] = {job.frontier, job.frontier};
  PlanCost cost[2];
  for (bool move_runs : {false, true}) {
    LimitFrontierClockChanges(job.problem, k, &way[move_runs], nullptr, 0, move_runs);
    ASSERT_NE(way[move_runs].NoSlowdownPlan(), nullptr) << at;
    cost[move_runs] = EvaluatePlanWithClockLatency(job.problem, way[move_runs].NoSlowdownPlan()->choice, latency_s);
  }
  const bool on_time[2] = {cost[0].time_s <= deadline_s, cost[1].time_s <= deadline_s};
  const bool as_late = std::abs(cost[1].time_s - cost[0].time_s) <= 1e-9 * cost[0].time_s;
  bool moved = cost[1].time_s < cost[0].time_s;  // both late
  if (on_time[0] != on_time[1]) moved = on_time[1];
  if (on_time[0] == on_time[1] && (on_time[0] || as_late)) moved = cost[1].energy_j < cost[0].energy_j;
  EXPECT_EQ(d.runs_moved, moved) << at;
  ASSERT_EQ(f.plans.size(), way[moved].plans.size()) << at;
  for (size_t i = 0; i < f.plans.size(); ++i) EXPECT_EQ(f.plans[i].choice, way[moved].plans[i].choice) << at;
  if (!on_time[1] && on_time[0]) ++*left_in_place;
}

TEST(LimitClockChangesForLatency, ASpecsLimitUnderSlowSwitchesMovesRunsOnlyWhereTheyStayOnTime) {
  Job job = SolvedJob();
  const PlanChoice unlimited = job.frontier.NoSlowdownPlan()->choice;
  int left_in_place = 0;
  for (double latency_s : {0.012, 0.02, 0.05, 0.2}) {  // all slow (> kSlowClockSwitchS): the frontier is unlimited
    for (int k : {1, 3, 5, 9, 15, 25}) {
      ASSERT_LT(k, MostChanges(job.problem, unlimited));
      CheckSpecLimit(job, k, latency_s, &left_in_place);
    }
  }
  EXPECT_GT(left_in_place, 0) << "no limit where moved runs run late: the test checks nothing new";
  // The bundled BLOOM example at 8 changes: both ways equally late at every
  // latency, moving the runs cheaper (a second review found the unmoved way
  // run, the times compared without a tie).
  const Job bloom = SolvedJob("bloom-a100");
  for (double latency_s : {0.02, 0.1}) CheckSpecLimit(bloom, 8, latency_s, &left_in_place);
}

TEST(LimitClockChangesForLatency, SlowSwitchesGetTheCheapestLimitWithinTheTolerance) {
  Job job = SolvedJob();
  const PlanChoice unlimited = job.frontier.NoSlowdownPlan()->choice;
  const double all_max_s = job.frontier.all_max.time_s;
  const double latency_s = 0.25 * all_max_s / MostChanges(job.problem, unlimited);  // several computations long
  ASSERT_GT(EvaluatePlanWithClockLatency(job.problem, unlimited, latency_s).time_s, all_max_s * 1.01)
      << "the example must be slowed by late switches";
  Frontier f = job.frontier;
  const ClockChangeDecision d = LimitClockChangesForLatency(job.problem, -1, latency_s, &f);
  ASSERT_TRUE(d.automatic);
  ASSERT_GE(d.limit, 0);
  EXPECT_LE(d.limited.time_s, all_max_s * (1 + kLatencySlowdownTolerance));
  EXPECT_GT(d.unlimited.time_s, all_max_s * 1.01);
  // Every plan keeps to the limit, and the no-slowdown plan is the one chosen.
  for (const FrontierPlan& p : f.plans) EXPECT_LE(MostChanges(job.problem, p.choice), d.limit);
  const PlanCost chosen = EvaluatePlanWithClockLatency(job.problem, f.NoSlowdownPlan()->choice, latency_s);
  EXPECT_LE(chosen.time_s, all_max_s * (1 + kLatencySlowdownTolerance));
  EXPECT_EQ(d.limited.time_s, chosen.time_s);  // what the warning reports is the plan that runs
  EXPECT_EQ(d.limited.energy_j, chosen.energy_j);
  // The frontier is the limit's, as LimitFrontierClockChanges makes it on its
  // own (the decision hands it the one-clock plans it searched already).
  Frontier again = job.frontier;
  LimitFrontierClockChanges(job.problem, d.limit, &again, nullptr, 0, d.runs_moved);
  ASSERT_EQ(again.plans.size(), f.plans.size());
  for (size_t k = 0; k < f.plans.size(); ++k) EXPECT_EQ(again.plans[k].choice, f.plans[k].choice) << k;
  // Brute force over every limit: none no slower than all-max uses less energy.
  for (int k = 0; k <= MostChanges(job.problem, unlimited); ++k) {
    const PlanChoice limited = LimitClockChanges(job.problem, unlimited, k);
    for (bool move_runs : {false, true}) {
      const PlanChoice plan = move_runs ? MoveLimitedPlansRuns(job.problem, unlimited, limited) : limited;
      const PlanCost c = EvaluatePlanWithClockLatency(job.problem, plan, latency_s);
      if (c.time_s > all_max_s * (1 + kLatencySlowdownTolerance)) continue;
      EXPECT_GE(c.energy_j, d.limited.energy_j * (1 - 1e-12)) << "limit " << k << " is cheaper than " << d.limit;
    }
  }
  // Nor does a plan on one clock per GPU that the frontier holds under any limit.
  for (const PlanChoice& choice : OneClockPerGpuPlans(job.problem)) {
    const PlanCost c = EvaluatePlan(job.problem, choice);
    if (c.time_s <= all_max_s * (1 + Frontier::kNoSlowerThan)) {
      EXPECT_GE(c.energy_j, d.limited.energy_j * (1 - 1e-12));
    }
  }
}

// The shared A100 profiles (docs/design.md), 8 stages, 83.64 W; where the
// plan that runs differs from the one the limit is judged by.
Job SharedJob(const std::string& model, int microbatches) {
  Result<Profile> profile =
      LoadProfileCsv(std::string(PERSEUS_SHARED_DATA) + "/sosp24/stage_profile/" + model + "+a100_sxm_bf16.csv", 8);
  EXPECT_TRUE(profile.ok()) << profile.status().ToString();
  ProblemSpec spec;
  spec.schedule = {ScheduleKind::k1F1B, 8, microbatches, 1};
  spec.blocking_power_w = 83.64;
  Result<Problem> problem = BuildProblem(*profile, spec);
  EXPECT_TRUE(problem.ok());
  Result<Frontier> frontier = SolveFrontier(*problem, FrontierOptions{});
  EXPECT_TRUE(frontier.ok());
  return {std::move(*problem), std::move(*frontier)};
}

TEST(LimitClockChangesForLatency, OnTheSharedProfilesThePlanThatRunsDecides) {
  if (!std::filesystem::exists(std::string(PERSEUS_SHARED_DATA) + "/sosp24/stage_profile")) {
    GTEST_SKIP() << "shared data not found at " << PERSEUS_SHARED_DATA << "; skipping (CI has ../shared)";
  }
  // Both ways late: the first version judged a late way by a stand-in (the
  // cheapest one-clock plan) and ran the slower, dearer one (a review).
  int left_in_place = 0;
  const Job gpt3 = SharedJob("gpt3-175b", 12);
  for (double latency_s : {0.1, 0.2}) CheckSpecLimit(gpt3, 8, latency_s, &left_in_place);
  CheckSpecLimit(SharedJob("bloom", 12), 4, 0.1, &left_in_place);
  // The automatic limit: the warning reports the plan that runs, here not
  // the one the limit was judged by.
  const Job bloom = SharedJob("bloom", 24);
  Frontier f = bloom.frontier;
  const ClockChangeDecision d = LimitClockChangesForLatency(bloom.problem, -1, 0.05, &f);
  ASSERT_TRUE(d.automatic);
  const PlanCost runs = EvaluatePlanWithClockLatency(bloom.problem, f.NoSlowdownPlan()->choice, 0.05);
  EXPECT_EQ(d.limited.time_s, runs.time_s);
  EXPECT_EQ(d.limited.energy_j, runs.energy_j);
}

TEST(IsSlowClockSwitch, AboveTenMsAndAQuarterOfAComputation) {
  EXPECT_TRUE(IsSlowClockSwitch(0.1, 0.017));
  EXPECT_FALSE(IsSlowClockSwitch(0.008, 0.001));  // under 10 ms
  EXPECT_FALSE(IsSlowClockSwitch(0.03, 0.2));     // short next to 200-ms computations
  EXPECT_TRUE(IsSlowClockSwitch(0.06, 0.2));
}

}  // namespace
}  // namespace perseus::control
