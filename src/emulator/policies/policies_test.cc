// The policies on small jobs: every no-slowdown policy keeps the all-max
// iteration time, the Zeus knobs stay within their budget, and the plans
// compare as they must (brute force on a tiny pipeline).
#include <gtest/gtest.h>

#include <algorithm>
#include <set>

#include "emulator/job_evaluation.h"
#include "emulator/pipeline_run.h"
#include "emulator/policies/clock_knob.h"
#include "emulator/policy.h"
#include "emulator/test_job.h"

namespace perseus::emulator {
namespace {

JobConditions Nominal(int pipelines) { return ConditionsAt(pipelines, {}, {}, 0); }

JobConditions OneStraggler(int pipelines, double factor) {
  return ConditionsAt(pipelines, {{factor, 0, 0, 0, -1}}, {}, 0);
}

JobOutcome RunJob(const Problem& p, Policy& policy, const JobConditions& c) {
  return EvaluateJob(p, c, policy.Decide(c).plans);
}

class PoliciesTest : public ::testing::Test {
 protected:
  void SetUp() override {
    problem_ = SmallProblem(4, 8, 2);
    Result<Frontier> f = SolveFrontier(problem_, FrontierOptions{});
    ASSERT_TRUE(f.ok()) << f.status().ToString();
    frontier_ = std::move(*f);
  }
  Problem problem_;
  Frontier frontier_;
};

TEST_F(PoliciesTest, AllMaxRunsEveryComputationAtTheTopClock) {
  auto policy = MakeAllMaxPolicy(problem_);
  EXPECT_EQ(policy->name(), "allmax");
  Decision d = policy->Decide(OneStraggler(3, 1.2));
  ASSERT_EQ(d.plans.size(), 2u);
  EXPECT_EQ(d.plans[0], AllMaxPlan(problem_));
  EXPECT_EQ(d.plans[1], AllMaxPlan(problem_));
}

TEST_F(PoliciesTest, ZeusKnobsStayWithinTheirBudget) {
  for (double budget : {0.0, 0.02, 0.1}) {
    for (const JobConditions& c : {Nominal(4), OneStraggler(4, 1.3)}) {
      JobOutcome base = RunJob(problem_, *MakeAllMaxPolicy(problem_), c);
      auto global = MakeZeusGlobalPolicy(problem_, budget);
      auto per_stage = MakeZeusPerStagePolicy(problem_, budget);
      JobOutcome g = RunJob(problem_, *global, c), s = RunJob(problem_, *per_stage, c);
      EXPECT_LE(g.time_s, base.time_s * (1 + budget) * (1 + 1e-9)) << budget;
      EXPECT_LE(s.time_s, base.time_s * (1 + budget) * (1 + 1e-9)) << budget;
      EXPECT_LE(g.energy_j, base.energy_j);
      EXPECT_LE(s.energy_j, g.energy_j * (1 + 1e-12));  // starts from the best global clock
      if (budget >= 0.1) {
        EXPECT_LT(g.energy_j, base.energy_j * 0.99);
      }
    }
  }
}

TEST_F(PoliciesTest, ZeusGlobalUsesOneClockEverywhere) {
  Decision d = MakeZeusGlobalPolicy(problem_, 0.1)->Decide(Nominal(2));
  std::set<int> clocks;
  for (size_t i = 0; i < d.plans[0].size(); ++i) clocks.insert(problem_.nodes[i].options[d.plans[0][i]].freq_mhz);
  EXPECT_EQ(clocks.size(), 1u);
  EXPECT_LT(*clocks.begin(), 1410);
}

TEST_F(PoliciesTest, EnvPipeKeepsTheEnvelopeAtMaxAndDoesNotSlowDown) {
  Decision d = MakeEnvPipePolicy(problem_)->Decide(Nominal(1));
  PlanCost c = EvaluatePlan(problem_, d.plans[0]);
  PlanCost m = EvaluatePlan(problem_, AllMaxPlan(problem_));
  EXPECT_LE(c.time_s, m.time_s * (1 + 1e-9));
  EXPECT_LT(c.energy_j, m.energy_j);
  for (int i = 0; i < problem_.num_nodes(); ++i) {
    const ProblemNode& n = problem_.nodes[i];
    if (n.stage == problem_.num_stages() - 1) {
      EXPECT_EQ(d.plans[0][i], 0) << "last stage runs at max";
    }
  }
}

TEST_F(PoliciesTest, PerseusIntrinsicIsNoSlowerAndBeatsEnvPipe) {
  JobConditions c = Nominal(3);
  JobOutcome base = RunJob(problem_, *MakeAllMaxPolicy(problem_), c);
  JobOutcome envpipe = RunJob(problem_, *MakeEnvPipePolicy(problem_), c);
  auto intrinsic = MakePerseusIntrinsicPolicy(problem_, frontier_);
  JobOutcome perseus = RunJob(problem_, *intrinsic, c);
  EXPECT_LE(perseus.time_s, base.time_s * (1 + 1e-9));
  EXPECT_LE(perseus.energy_j, envpipe.energy_j);
  Decision d = intrinsic->Decide(c);
  ASSERT_EQ(d.lower_bound_j.size(), 1u);
  EXPECT_LE(3 * d.lower_bound_j[0], perseus.energy_j * (1 + 1e-9));
}

TEST_F(PoliciesTest, PerseusSlowsOnTimePipelinesToTheStraggler) {
  auto perseus = MakePerseusPolicy(problem_, frontier_);
  auto intrinsic = MakePerseusIntrinsicPolicy(problem_, frontier_);
  const double fast_s = frontier_.NoSlowdownPlan()->time_s;
  for (double factor : {1.05, 1.1, 1.3, 2.0}) {
    JobConditions c = OneStraggler(4, factor);
    Decision d = perseus->Decide(c);
    const double t_on_time = EvaluatePlan(problem_, d.plans[0]).time_s;
    EXPECT_LE(t_on_time, fast_s * factor * (1 + 1e-9));
    EXPECT_LE(t_on_time, frontier_.MinEnergyPlan().time_s * (1 + 1e-9));
    EXPECT_EQ(d.plans[1], frontier_.NoSlowdownPlan()->choice) << "the straggler keeps the fastest plan";
    JobOutcome with = RunJob(problem_, *perseus, c), without = RunJob(problem_, *intrinsic, c);
    EXPECT_NEAR(with.time_s, without.time_s, 1e-12);
    EXPECT_LT(with.energy_j, without.energy_j);
  }
  // Far beyond T*, on-time pipelines run the minimum-energy plan.
  EXPECT_EQ(perseus->Decide(OneStraggler(2, 3.0)).plans[0], frontier_.MinEnergyPlan().choice);
}

TEST_F(PoliciesTest, PerseusReplansThrottledPipelinesAndSlowsTheOthers) {
  JobConditions c = ConditionsAt(3, {}, {{1, 2, 0, 960, 0, -1}}, 0);
  Decision d = MakePerseusPolicy(problem_, frontier_)->Decide(c);
  ASSERT_EQ(d.plans.size(), 2u);
  const PipelineConditions& capped = c.classes[1];
  const double all_max_s = RunPipeline(problem_, AllMaxPlan(problem_), capped).time_s;
  EXPECT_LE(RunPipeline(problem_, d.plans[1], capped).time_s, all_max_s * (1 + 1e-9));
  EXPECT_EQ(d.lower_bound_j[1], -1);
  EXPECT_GT(EvaluatePlan(problem_, d.plans[0]).time_s, frontier_.NoSlowdownPlan()->time_s);
  JobOutcome perseus = RunJob(problem_, *MakePerseusPolicy(problem_, frontier_), c);
  JobOutcome base = RunJob(problem_, *MakeAllMaxPolicy(problem_), c);
  EXPECT_LE(perseus.time_s, base.time_s * (1 + 1e-9));
  EXPECT_LT(perseus.energy_j, base.energy_j);
}

// On a pipeline small enough to enumerate every plan, the least-energy plan
// with no slowdown bounds every policy from below.
TEST(PoliciesBruteForce, NoPolicyBeatsTheOptimum) {
  Problem p = SmallProblem(2, 2, 1);
  const PlanCost all_max = EvaluatePlan(p, AllMaxPlan(p));
  PlanChoice c(p.nodes.size(), 0);
  double best_j = all_max.energy_j;
  for (;;) {
    PlanCost cost = EvaluatePlan(p, c);
    if (cost.time_s <= all_max.time_s * (1 + 1e-12)) best_j = std::min(best_j, cost.energy_j);
    size_t i = 0;
    while (i < c.size() && ++c[i] == static_cast<int>(p.nodes[i].options.size())) c[i++] = 0;
    if (i == c.size()) break;
  }
  Result<Frontier> f = SolveFrontier(p, FrontierOptions{});
  ASSERT_TRUE(f.ok());
  JobConditions one = ConditionsAt(1, {}, {}, 0);
  std::vector<std::unique_ptr<Policy>> policies;
  policies.push_back(MakeEnvPipePolicy(p));
  policies.push_back(MakePerseusIntrinsicPolicy(p, *f));
  policies.push_back(MakeZeusPerStagePolicy(p, 0));
  for (auto& policy : policies) {
    PlanCost cost = EvaluatePlan(p, policy->Decide(one).plans[0]);
    EXPECT_LE(cost.time_s, all_max.time_s * (1 + 1e-9)) << policy->name();
    EXPECT_GE(cost.energy_j, best_j * (1 - 1e-12)) << policy->name();
  }
  EXPECT_LE(f->NoSlowdownPlan()->energy_j, best_j * 1.02) << "Perseus is within 2% of the optimum";
}

TEST(ClockKnob, PlanForStageClocksPicksTheHighestClockNotAboveTheKnob) {
  Problem p = SmallProblem(2, 2, 1);
  EXPECT_EQ(CandidateClocks(p), (std::vector<int>{1410, 1260, 1110, 960}));
  PlanChoice c = PlanForStageClocks(p, {1300, 500});
  for (size_t i = 0; i < c.size(); ++i) {
    EXPECT_EQ(p.nodes[i].options[c[i]].freq_mhz, p.nodes[i].stage == 0 ? 1260 : 960);
  }
}

}  // namespace
}  // namespace perseus::emulator
