// No solve hangs: hundreds of random small problems of every schedule, each
// solved under its own time limit, with the independent lower-bound check on.
// The generator leans towards what broke before: identical stages (a 4 x 4
// GPipe problem of identical GPT-3-like stages at zero blocking power sent
// LEMON's network simplex into a cycle on floating-point data), profiles with
// repeated times or energies, a few widely spaced clocks, zero and large
// blocking power. A case that runs past its limit prints its seed and shape
// and ends the test binary, so a hang is a failure with a reproducer, never a
// stuck CI job.
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <mutex>
#include <random>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "optimizer/discretize.h"
#include "optimizer/frontier_sweep.h"
#include "optimizer/node_costs.h"
#include "optimizer/testing/brute_force.h"
#include "perseus/optimizer.h"

namespace perseus {
namespace {

constexpr auto kCaseLimit = std::chrono::seconds(30);  // each case takes milliseconds

// Ends the process when a case runs past its limit: a solver thread cannot be
// cancelled from outside, and a hang must fail, not stall.
class Watchdog {
 public:
  Watchdog() : thread_([this] { Run(); }) {}
  ~Watchdog() {
    {
      std::lock_guard<std::mutex> lock(mu_);
      stop_ = true;
    }
    cv_.notify_all();
    thread_.join();
  }
  void Start(std::string label) {
    std::lock_guard<std::mutex> lock(mu_);
    label_ = std::move(label);
    deadline_ = std::chrono::steady_clock::now() + kCaseLimit;
    armed_ = true;
    cv_.notify_all();
  }
  void Done() {
    std::lock_guard<std::mutex> lock(mu_);
    armed_ = false;
  }

 private:
  void Run() {
    std::unique_lock<std::mutex> lock(mu_);
    while (!stop_) {
      if (!armed_) {
        cv_.wait(lock);
        continue;
      }
      if (cv_.wait_until(lock, deadline_) == std::cv_status::timeout && armed_ &&
          std::chrono::steady_clock::now() >= deadline_) {
        std::fprintf(stderr, "solver_fuzz_test: %s did not finish within %lld s: a hang\n", label_.c_str(),
                     static_cast<long long>(kCaseLimit.count()));
        std::fflush(stderr);
        std::_Exit(1);
      }
    }
  }
  std::mutex mu_;
  std::condition_variable cv_;
  std::string label_;
  std::chrono::steady_clock::time_point deadline_;
  bool armed_ = false, stop_ = false;
  std::thread thread_;
};

// GPT-3 175B / A100 stage 0 at a few clocks (the shape of the shared profile:
// energy not monotone in the clock below 1050 MHz).
Profile Gpt3LikeProfile(int stages, int clocks, std::mt19937& rng, bool identical) {
  struct Row {
    int mhz;
    double fwd_s, fwd_j, bwd_s, bwd_j;
  };
  // The shared profile's rows (a 690 MHz row extrapolated).
  static const Row kRows[] = {
      {1410, 0.05016166687011708, 23.80547200000007, 0.092953779220581, 44.584247999999675},
      {1230, 0.05481546783447264, 19.817703999999914, 0.10076145935058589, 37.10376800000016},
      {1050, 0.06367572975158689, 17.584519999999554, 0.11590795326232908, 32.58273599999957},
      {870, 0.07654167366027828, 18.055039999999103, 0.13870770835876461, 33.32536799999885},
      {690, 0.0965, 19.7, 0.175, 36.1}};
  std::uniform_real_distribution<double> u(0.85, 1.15);
  Profile p;
  p.stages.resize(stages);
  for (int s = 0; s < stages; ++s) {
    const double scale = identical ? 1.0 : u(rng);
    for (int k = 0; k < clocks; ++k) {
      const Row& r = kRows[k];
      p.stages[s].points[0].push_back({r.mhz, r.fwd_s * scale, r.fwd_j * scale});
      p.stages[s].points[1].push_back({r.mhz, r.bwd_s * scale, r.bwd_j * scale});
    }
  }
  return p;
}

// Random profile, with some stages copied and some values repeated.
Profile DegenerateRandomProfile(std::mt19937& rng, int stages, int options, bool split = false) {
  Profile p = testing::RandomProfile(rng, stages, options, split);
  std::uniform_int_distribution<int> coin(0, 3);
  if (coin(rng) == 0) {
    for (int s = 1; s < stages; ++s) p.stages[s] = p.stages[0];
  }
  if (coin(rng) == 0 && options > 1) {  // two clocks with the same time, or the same energy
    for (auto& stage : p.stages) {
      for (auto& points : stage.points) {
        if (points.size() < 2) continue;  // split halves the profile does not list
        if (coin(rng) < 2) points[1].time_s = points[0].time_s;
        else points[1].energy_j = points[0].energy_j;
      }
    }
  }
  return p;
}

struct Case {
  ScheduleKind kind;
  int stages, microbatches, chunks;
  double blocking_w;
  Profile profile;
  std::string label;
};

Case RandomCase(uint32_t seed) {
  std::mt19937 rng(seed);
  static const ScheduleKind kKinds[] = {ScheduleKind::k1F1B, ScheduleKind::kGPipe, ScheduleKind::kInterleaved1F1B};
  Case c;
  c.kind = kKinds[seed % 3];
  c.stages = std::uniform_int_distribution<int>(1, 5)(rng);
  c.microbatches = std::uniform_int_distribution<int>(1, 6)(rng);
  c.chunks = c.kind == ScheduleKind::kInterleaved1F1B ? 2 : 1;
  if (c.kind == ScheduleKind::kInterleaved1F1B) {
    // Megatron's interleaving needs microbatches to be a multiple of stages.
    c.microbatches = c.stages * std::uniform_int_distribution<int>(1, 2)(rng);
  }
  static const double kBlocking[] = {0, 0, 20, 83.64, 300};
  c.blocking_w = kBlocking[std::uniform_int_distribution<int>(0, 4)(rng)];
  const int options = std::uniform_int_distribution<int>(1, 5)(rng);
  const int profile_stages = c.stages * c.chunks;
  if (seed % 2 == 0) {
    c.profile = Gpt3LikeProfile(profile_stages, options, rng, seed % 4 == 0);
  } else {
    c.profile = DegenerateRandomProfile(rng, profile_stages, options);
  }
  c.label = "seed " + std::to_string(seed) + " (" + ScheduleName(c.kind) + ", " + std::to_string(c.stages) + " x " +
            std::to_string(c.microbatches) + ", " + std::to_string(options) + " clocks, blocking " +
            std::to_string(c.blocking_w) + " W)";
  return c;
}

// Zero-bubble schedules (split backwards): ZB-H1, DualPipeV and ZB-V.
Case RandomSplitCase(uint32_t seed) {
  std::mt19937 rng(seed);
  Case c;
  static const ScheduleKind kKinds[] = {ScheduleKind::kZBH1, ScheduleKind::kDualPipeV, ScheduleKind::kZBV};
  c.kind = kKinds[seed % 3];
  c.stages = std::uniform_int_distribution<int>(1, 4)(rng);
  c.chunks = VShaped(c.kind) ? 2 : 1;
  c.microbatches = c.kind == ScheduleKind::kDualPipeV ? 2 * c.stages + std::uniform_int_distribution<int>(0, 3)(rng)
                                                      : std::uniform_int_distribution<int>(1, 6)(rng);
  static const double kBlocking[] = {0, 20, 83.64, 300};
  c.blocking_w = kBlocking[std::uniform_int_distribution<int>(0, 3)(rng)];
  const int options = std::uniform_int_distribution<int>(1, 4)(rng);
  c.profile = DegenerateRandomProfile(rng, seed % 3 == 0 ? c.stages * c.chunks : c.stages, options, true);
  c.label = "seed " + std::to_string(seed) + " (" + ScheduleName(c.kind) + ", " + std::to_string(c.stages) + " x " +
            std::to_string(c.microbatches) + ", " + std::to_string(options) + " clocks, blocking " +
            std::to_string(c.blocking_w) + " W)";
  return c;
}

Result<Problem> BuildCaseProblem(const Case& c) {
  ProblemSpec spec;
  spec.schedule = {c.kind, c.stages, c.microbatches, c.chunks};
  spec.blocking_power_w = c.blocking_w;
  return BuildProblem(c.profile, spec);
}

// The case that was reported: 4 x 4 GPipe, identical stages at 1410/1230/1050/870 MHz, no blocking power.
TEST(SolverFuzz, TheReportedGPipeHangFinishes) {
  Watchdog watchdog;
  std::mt19937 rng(1);
  ProblemSpec spec;
  spec.schedule = {ScheduleKind::kGPipe, 4, 4, 1};
  spec.blocking_power_w = 0;
  Result<Problem> problem = BuildProblem(Gpt3LikeProfile(4, 4, rng, true), spec);
  ASSERT_TRUE(problem.ok()) << problem.status().ToString();
  FrontierOptions options;  // the default: one independent bound check
  watchdog.Start("the 4 x 4 GPipe case");
  Result<Frontier> f = SolveFrontier(*problem, options);
  watchdog.Done();
  ASSERT_TRUE(f.ok()) << f.status().ToString();
  EXPECT_TRUE(f->stats.lower_bound_checked) << f->stats.lower_bound_max_error;
}

TEST(SolverFuzz, EveryRandomSmallProblemOfEverySchedulesFinishesWithACheckedBound) {
  Watchdog watchdog;
  int solved = 0, checked = 0;
  double max_error = 0;
  for (uint32_t seed = 1; seed <= 800; ++seed) {
    Case c = seed <= 600 ? RandomCase(seed) : RandomSplitCase(seed);
    Result<Problem> problem = BuildCaseProblem(c);
    ASSERT_TRUE(problem.ok()) << c.label << ": " << problem.status().ToString();
    FrontierOptions options;
    options.unit_time_s = seed % 5 == 0 ? 1e-4 : 1e-3;
    options.lower_bound_samples = 1 + static_cast<int>(seed % 4);
    options.max_plans = seed % 3 == 0 ? static_cast<int>(1 + seed % 50) : 0;  // also with few record times
    watchdog.Start(c.label);
    Result<Frontier> f = SolveFrontier(*problem, options);
    watchdog.Done();
    ASSERT_TRUE(f.ok()) << c.label << ": " << f.status().ToString();
    ASSERT_FALSE(f->plans.empty()) << c.label;
    if (options.max_plans > 0) {
      EXPECT_LE(f->stats.candidate_plans, 4 * options.max_plans + 3) << c.label << ", max plans " << options.max_plans;
    }
    ++solved;
    checked += f->stats.lower_bound_checked;
    max_error = std::max(max_error, f->stats.lower_bound_max_error);
    EXPECT_TRUE(f->stats.lower_bound_checked)
        << c.label << ": the independent bound disagrees by " << f->stats.lower_bound_max_error;
    for (const FrontierPlan& p : f->plans) {
      EXPECT_LE(p.lower_bound_j, p.energy_j * (1 + 1e-9)) << c.label;
    }
  }
  std::printf("%d problems solved, %d with the bound checked independently (largest relative difference %.2g)\n",
              solved, checked, max_error);
}

// The sweep reuses a step's cut network for the next where that is exact
// (FrontierSweep::TryStep). Against the sweep that builds every network
// afresh, on the same random problems of every schedule: the same steps, the
// same times and the same relaxation costs, up to rounding.
TEST(SolverFuzz, ReusedCutNetworksTraceTheSameRelaxation) {
  long steps = 0, reused = 0;
  for (uint32_t seed = 1; seed <= 400; ++seed) {
    Case c = seed <= 300 ? RandomCase(seed) : RandomSplitCase(seed);
    Result<Problem> problem = BuildCaseProblem(c);
    ASSERT_TRUE(problem.ok()) << c.label << ": " << problem.status().ToString();
    const std::vector<optimizer::NodeCosts> costs = optimizer::BuildNodeCosts(*problem);
    optimizer::FrontierSweep fresh(*problem, costs), reusing(*problem, costs);
    fresh.set_reuse_networks(false);
    for (;;) {
      const bool more = fresh.Step();
      ASSERT_EQ(reusing.Step(), more) << c.label << " at step " << fresh.steps();
      if (!more) break;
      ASSERT_NEAR(reusing.time_s(), fresh.time_s(), 1e-9 * fresh.time_s()) << c.label << " step " << fresh.steps();
      ASSERT_NEAR(reusing.relaxation_cost_j(), fresh.relaxation_cost_j(), 1e-9 * std::abs(fresh.relaxation_cost_j()))
          << c.label << " step " << fresh.steps();
    }
    EXPECT_EQ(fresh.reused_networks(), 0);
    steps += reusing.steps();
    reused += reusing.reused_networks();
  }
  std::printf("%ld sweep steps, %ld on a reused network\n", steps, reused);
  EXPECT_GT(reused, steps / 10);  // it does reuse
}

// Random problems of every schedule.
std::vector<Case> RandomCases() {
  std::vector<Case> cases;
  for (uint32_t seed = 1; seed <= 300; ++seed) cases.push_back(seed <= 200 ? RandomCase(seed) : RandomSplitCase(seed));
  return cases;
}

// Plans of a discretizer as it runs by default and of one that `reference`
// sets up otherwise, at deadlines along the cases' sweeps (every
// `every_steps`-th step): they must be the same. Returns the plans compared.
long ExpectSamePlansAsReference(const std::function<void(optimizer::Discretizer&)>& reference,
                                const std::vector<Case>& cases, int every_steps = 1) {
  long plans = 0;
  for (const Case& c : cases) {
    Result<Problem> problem = BuildCaseProblem(c);
    EXPECT_TRUE(problem.ok()) << c.label << ": " << problem.status().ToString();
    if (!problem.ok()) return plans;
    const std::vector<optimizer::NodeCosts> costs = optimizer::BuildNodeCosts(*problem);
    optimizer::Discretizer by_default(*problem, costs), other(*problem, costs);
    reference(other);
    optimizer::FrontierSweep sweep(*problem, costs);
    for (int step = 0;; ++step) {
      // Deadlines a little past the relaxation's time too: slack to fill and trade.
      for (double slack : {0.0, 0.003}) {
        if (step % every_steps != 0) break;
        const double deadline_s = sweep.time_s() * (1 + slack);
        const PlanChoice plan = by_default.Run(sweep.durations_s(), deadline_s, 0, /*pair_moves=*/true);
        const PlanChoice reference_plan = other.Run(sweep.durations_s(), deadline_s, 0, /*pair_moves=*/true);
        EXPECT_EQ(plan, reference_plan) << c.label << " at step " << step << ", deadline " << deadline_s;
        if (plan != reference_plan) return plans;
        ++plans;
      }
      if (!sweep.Step()) break;
    }
  }
  return plans;
}

// The discretizer dismisses a dependency's pair search when the two
// computations' SeriesCosts show that no pair within the dependency's whole
// span is cheaper (Discretizer::PairMayGain). Against the discretizer that
// searches every binding pair: the same plans.
TEST(SolverFuzz, DismissingPairsByTheirSeriesCostsChangesNoPlan) {
  std::printf("%ld plans compared\n", ExpectSamePlansAsReference(
                                          [](optimizer::Discretizer& d) { d.set_series_filter(false); }, RandomCases()));
}

// The filling sorts its moves by insertion from the order of its last sort,
// handing over to std::sort when that is far off (Discretizer::SortGivenMoves).
// Against the discretizer that sorts with std::sort alone: the same plans. The
// random problems are small enough never to hand over; an 8 x 48 one does, at
// its first plans (its moves then come in computation order).
TEST(SolverFuzz, SortingTheFillingsMovesFromTheirLastOrderChangesNoPlan) {
  auto std_sort_alone = [](optimizer::Discretizer& d) { d.set_adaptive_sort(false); };
  std::printf("%ld plans compared\n", ExpectSamePlansAsReference(std_sort_alone, RandomCases()));
  std::mt19937 rng(7);
  Case large;
  large.kind = ScheduleKind::k1F1B;
  large.stages = 8;
  large.microbatches = 48;
  large.chunks = 1;
  large.blocking_w = 83.64;
  large.profile = Gpt3LikeProfile(8, 5, rng, false);
  large.label = "GPT-3-like 8 x 48";
  std::printf("%ld plans compared at 8 x 48\n", ExpectSamePlansAsReference(std_sort_alone, {large}, 16));
}

// The no-slowdown plan's search also starts from the cheapest plan of the
// discretizer's earlier calls (Discretizer::Search; RecordSlice makes the
// plan just before it first), one start more than a discretizer that has
// forgotten them, so its plan is never dearer and sometimes cheaper. Large
// problems (above 128 computations) get no search for their other plans, and
// a shortcut past the search's bookkeeping once lost that start unnoticed.
TEST(SolverFuzz, TheNoSlowdownSearchStartsFromTheEarlierPlanToo) {
  constexpr long kPerPlanVisits = 1L << 14, kNoSlowdownVisits = 1L << 24;  // as frontier.cc's
  int cheaper = 0, compared = 0;
  for (uint32_t seed = 1; seed <= 6; ++seed) {
    std::mt19937 rng(seed);
    ProblemSpec spec;
    spec.schedule = {seed % 2 ? ScheduleKind::k1F1B : ScheduleKind::kGPipe, 4,
                     std::uniform_int_distribution<int>(17, 24)(rng), 1};
    spec.blocking_power_w = 50;
    Result<Problem> problem = BuildProblem(testing::RandomProfile(rng, 4, 3 + static_cast<int>(seed % 6)), spec);
    ASSERT_TRUE(problem.ok()) << problem.status().ToString();
    ASSERT_GT(problem->num_nodes(), 128);
    const std::vector<optimizer::NodeCosts> costs = optimizer::BuildNodeCosts(*problem);
    optimizer::Discretizer chained(*problem, costs), alone(*problem, costs);
    optimizer::FrontierSweep sweep(*problem, costs);
    // The plans go from fast to slow: the earlier one is at the next
    // (faster) step of the sweep, the searched one at this step's time.
    std::vector<double> slower_s = sweep.durations_s();
    double slower_time_s = sweep.time_s();
    for (int step = 0; sweep.Step(); ++step) {
      const std::vector<double> faster_s = sweep.durations_s();
      const double faster_time_s = sweep.time_s();
      if (step % 8 != 0) {
        slower_s = faster_s, slower_time_s = faster_time_s;
        continue;
      }
      chained.Forget();
      chained.Run(faster_s, faster_time_s, kPerPlanVisits, /*pair_moves=*/true);
      const PlanChoice with = chained.Run(slower_s, slower_time_s, kNoSlowdownVisits, true);
      alone.Forget();
      const PlanChoice without = alone.Run(slower_s, slower_time_s, kNoSlowdownVisits, true);
      const double with_j = EvaluatePlan(*problem, with).energy_j, without_j = EvaluatePlan(*problem, without).energy_j;
      const double tolerance_j = 1e-9 * std::abs(without_j);  // random profiles' energies may be negative
      EXPECT_LE(with_j, without_j + tolerance_j) << "seed " << seed << " step " << step;
      cheaper += with_j < without_j - tolerance_j;
      ++compared;
      slower_s = faster_s, slower_time_s = faster_time_s;
    }
  }
  std::printf("%d of %d no-slowdown plans cheaper for the earlier plan\n", cheaper, compared);
  EXPECT_GT(cheaper, 0) << "the earlier plan never helped: is it still a start?";
}

}  // namespace
}  // namespace perseus
