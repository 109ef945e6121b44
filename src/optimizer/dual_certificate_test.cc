// The dual-flow certificate against the independent min-cost-flow solve.
#include "optimizer/dual_certificate.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>
#include <vector>

#include "optimizer/frontier_sweep.h"
#include "optimizer/lower_bound.h"
#include "optimizer/sweep_replay.h"
#include "optimizer/testing/brute_force.h"
#include "perseus/gpu_model.h"
#include "perseus/optimizer.h"

namespace perseus::optimizer {
namespace {

Problem Build(const Profile& profile, ScheduleKind kind, int microbatches, int chunks, double blocking_w) {
  ProblemSpec spec;
  spec.schedule = {kind, profile.num_stages() / (kind == ScheduleKind::kInterleaved1F1B ? chunks : 1), microbatches,
                   chunks};
  spec.blocking_power_w = blocking_w;
  Result<Problem> problem = BuildProblem(profile, spec);
  EXPECT_TRUE(problem.ok()) << problem.status().ToString();
  return *problem;
}

struct Swept {
  double fastest_s, slowest_s;
  std::vector<std::pair<double, double>> curve;  // (time, relaxation cost), time descending
};

// Runs the sweep to the end; returns its range and curve.
Swept Sweep(FrontierSweep& sweep) {
  Swept s{0, sweep.time_s(), {{sweep.time_s(), sweep.relaxation_cost_j()}}};
  while (sweep.Step()) s.curve.emplace_back(sweep.time_s(), sweep.relaxation_cost_j());
  s.fastest_s = sweep.time_s();
  return s;
}

double CostAt(const Swept& s, double t) {
  for (size_t k = 1; k < s.curve.size(); ++k) {
    if (t >= s.curve[k].first) {
      const auto& [t0, c0] = s.curve[k];
      const auto& [t1, c1] = s.curve[k - 1];
      return c0 + (t - t0) / (t1 - t0) * (c1 - c0);
    }
  }
  return s.curve.back().second;
}

// On random problems of every schedule, at several times along the sweep:
// the certificate's line touches the relaxation where it was taken, agrees
// with the min-cost-flow solve there, and stays below the relaxation
// everywhere else (it is a bound, not an estimate).
TEST(DualFlowTangent, MatchesTheMinCostFlowSolveAndBoundsEverywhere) {
  std::mt19937 rng(17);
  const ScheduleKind kinds[] = {ScheduleKind::k1F1B, ScheduleKind::kGPipe, ScheduleKind::kInterleaved1F1B};
  int certified = 0;
  for (int trial = 0; trial < 60; ++trial) {
    const ScheduleKind kind = kinds[trial % 3];
    const int chunks = kind == ScheduleKind::kInterleaved1F1B ? 2 : 1;
    const Profile profile = testing::RandomProfile(rng, (2 + trial % 3) * chunks, 2 + trial % 4);
    const int stages = 2 + trial % 3;
    const int microbatches = kind == ScheduleKind::kInterleaved1F1B ? stages * (1 + trial % 2) : 2 + trial % 5;
    const Problem problem = Build(profile, kind, microbatches, chunks, trial % 2 ? 83.64 : 0);
    const std::vector<NodeCosts> costs = BuildNodeCosts(problem);
    FrontierSweep sweep(problem, costs);
    const Swept swept = Sweep(sweep);
    SweepReplay replay(sweep);
    std::vector<double> d;
    for (int k = 1; k <= 4; ++k) {
      const double t = swept.fastest_s + (swept.slowest_s - swept.fastest_s) * k / 5;
      replay.DurationsAt(t, d);
      Result<EnergyLowerBound::Tangent> cert = DualFlowTangent(problem, costs, d, t);
      ASSERT_TRUE(cert.ok()) << "trial " << trial << " T " << t << ": " << cert.status().ToString();
      const double scale = std::max(1.0, std::abs(cert->cost_j));
      EXPECT_NEAR(cert->cost_j, CostAt(swept, t), 1e-6 * scale) << "trial " << trial << " T " << t;
      Result<EnergyLowerBound> lb = EnergyLowerBound::Compute(problem, costs, {t});
      ASSERT_TRUE(lb.ok()) << lb.status().ToString();
      EXPECT_NEAR(cert->cost_j, lb->tangents()[0].cost_j, 1e-6 * scale) << "trial " << trial;
      for (const auto& [t2, c2] : swept.curve) {
        EXPECT_LE(cert->cost_j + cert->slope * (t2 - t), c2 + 1e-6 * std::max(1.0, std::abs(c2)))
            << "trial " << trial << ": the line crosses the relaxation at T " << t2;
      }
      ++certified;
    }
  }
  EXPECT_EQ(certified, 240);
}

// Durations that meet the deadline but are not optimal there (the optimum of
// a faster time, certified at a slower one): no flow meets the conditions,
// or the line lands below the true optimum; never a false certificate.
TEST(DualFlowTangent, RejectsDurationsThatAreNotOptimal) {
  std::mt19937 rng(3);
  int rejected = 0;
  for (int trial = 0; trial < 30; ++trial) {
    const Profile profile = testing::RandomProfile(rng, 3, 3);
    const Problem problem = Build(profile, ScheduleKind::k1F1B, 4, 1, 83.64);
    const std::vector<NodeCosts> costs = BuildNodeCosts(problem);
    FrontierSweep sweep(problem, costs);
    const Swept swept = Sweep(sweep);
    SweepReplay replay(sweep);
    std::vector<double> fast;
    const double t_fast = swept.fastest_s + 0.2 * (swept.slowest_s - swept.fastest_s);
    const double t_slow = swept.fastest_s + 0.7 * (swept.slowest_s - swept.fastest_s);
    replay.DurationsAt(t_fast, fast);
    double cost = 0;
    for (size_t i = 0; i < fast.size(); ++i) cost += costs[i].HullCost(fast[i]);
    if (cost <= CostAt(swept, t_slow) * (1 + 1e-6)) continue;  // not worse there: nothing to reject
    Result<EnergyLowerBound::Tangent> cert = DualFlowTangent(problem, costs, fast, t_slow);
    if (cert.ok()) {
      EXPECT_LE(cert->cost_j, CostAt(swept, t_slow) * (1 + 1e-9) + 1e-9) << "trial " << trial;
      EXPECT_LT(cert->cost_j, cost * (1 - 1e-6)) << "trial " << trial << ": a suboptimal plan certified";
    }
    ++rejected;
  }
  EXPECT_GT(rejected, 10);
}

// Larger than the min-cost-flow check's automatic limit (4,096
// computations): the default solve is now certified.
TEST(DualFlowTangent, TheDefaultSolveCertifiesLargeProblems) {
  std::mt19937 rng(5);
  const Profile profile = testing::RandomProfile(rng, 4, 2);
  const Problem problem = Build(profile, ScheduleKind::k1F1B, 600, 1, 83.64);
  ASSERT_GT(problem.num_nodes(), kAutoCheckMaxNodes);
  FrontierOptions options;
  options.unit_time_s = 1e-2;
  // On one thread the certificate is made after the plans; on more, beside
  // them on a thread of its own: the same check either way.
  for (int threads : {1, 2}) {
    options.threads = threads;
    Result<Frontier> f = SolveFrontier(problem, options);
    ASSERT_TRUE(f.ok()) << f.status().ToString();
    EXPECT_TRUE(f->stats.lower_bound_checked) << threads << " threads: " << f->stats.lower_bound_max_error;
    EXPECT_GT(f->stats.lower_bound_s, 0);
    EXPECT_LT(f->stats.lower_bound_max_error, 1e-6);
  }
}

}  // namespace
}  // namespace perseus::optimizer
