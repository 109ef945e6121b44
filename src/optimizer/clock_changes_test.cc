// LimitClockChanges against exhaustive search on tiny problems, and the
// frontier with a limit.
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <functional>
#include <limits>
#include <random>
#include <string>
#include <tuple>

#include "optimizer/testing/brute_force.h"
#include "perseus/optimizer.h"

namespace perseus {
namespace {

Problem MakeProblem(const Profile& profile, ScheduleKind kind, int stages, int microbatches, double blocking_w) {
  ProblemSpec spec;
  spec.schedule = {kind, stages, microbatches, 1};
  spec.blocking_power_w = blocking_w;
  Result<Problem> p = BuildProblem(profile, spec);
  EXPECT_TRUE(p.ok()) << p.status().ToString();
  return std::move(*p);
}

// Energy a GPU's choice adds over `base` at the base plan's iteration time:
// computation energy, plus blocking power for the time it no longer computes.
double AddedJ(const Problem& problem, const std::vector<int>& order, const PlanChoice& base, const PlanChoice& plan) {
  double added = 0;
  for (int id : order) {
    const FreqPoint& from = problem.nodes[id].options[base[id]];
    const FreqPoint& to = problem.nodes[id].options[plan[id]];
    added += (to.energy_j - from.energy_j) + problem.blocking_power_w * (from.time_s - to.time_s);
  }
  return added;
}

// Seconds the GPU's computations take beyond the base plan's, summed over
// those that got slower.
double AddedS(const Problem& problem, const std::vector<int>& order, const PlanChoice& base, const PlanChoice& plan) {
  double added = 0;
  for (int id : order) {
    added += std::max(0.0, problem.nodes[id].options[plan[id]].time_s - problem.nodes[id].options[base[id]].time_s);
  }
  return added;
}

// Every assignment of the GPU's computations to options (no slower than the
// base plan's, or with `any_speed` any) with at most `k` changes around the
// cycle: the least `cost` of the plan (infinity if none).
double BruteForceLeast(const Problem& problem, int gpu, const PlanChoice& base, int k, bool any_speed,
                       const std::function<double(const PlanChoice&)>& cost) {
  const std::vector<int>& order = problem.gpu_order[gpu];
  PlanChoice plan = base;
  double best = std::numeric_limits<double>::infinity();
  std::function<void(size_t)> visit = [&](size_t i) {
    if (i == order.size()) {
      if (ClockChangesPerGpu(problem, plan)[gpu] <= k) best = std::min(best, cost(plan));
      return;
    }
    const ProblemNode& node = problem.nodes[order[i]];
    for (int o = 0; o < static_cast<int>(node.options.size()); ++o) {
      if (!any_speed && node.options[o].time_s > node.options[base[order[i]]].time_s * (1 + 1e-12)) continue;
      plan[order[i]] = o;
      visit(i + 1);
    }
    plan[order[i]] = base[order[i]];
  };
  visit(0);
  return best;
}

// Options no slower: the least added energy.
double BruteForceAddedJ(const Problem& problem, int gpu, const PlanChoice& base, int k) {
  return BruteForceLeast(problem, gpu, base, k, /*any_speed=*/false,
                         [&](const PlanChoice& plan) { return AddedJ(problem, problem.gpu_order[gpu], base, plan); });
}

// Any options: the least added time.
double BruteForceAddedS(const Problem& problem, int gpu, const PlanChoice& base, int k) {
  return BruteForceLeast(problem, gpu, base, k, /*any_speed=*/true,
                         [&](const PlanChoice& plan) { return AddedS(problem, problem.gpu_order[gpu], base, plan); });
}

TEST(LimitClockChanges, MatchesExhaustiveSearchPerGpu) {
  std::mt19937 rng(5);
  int limited = 0, slowed_gpus = 0;
  for (int trial = 0; trial < 300; ++trial) {
    const int stages = 2 + trial % 2, microbatches = 2 + trial % 3;
    const ScheduleKind kind = trial % 4 == 3 ? ScheduleKind::kGPipe : ScheduleKind::k1F1B;
    Problem problem = MakeProblem(testing::RandomProfile(rng, stages, 3), kind, stages, microbatches, 30 + trial % 50);
    PlanChoice base(problem.nodes.size());
    for (size_t i = 0; i < base.size(); ++i) base[i] = static_cast<int>(rng() % problem.nodes[i].options.size());
    const int k = static_cast<int>(rng() % 4);
    const PlanChoice out = LimitClockChanges(problem, base, k);
    const std::vector<int> before = ClockChangesPerGpu(problem, base), after = ClockChangesPerGpu(problem, out);
    bool slowed = false;
    for (int g = 0; g < stages; ++g) {
      const std::string label = "trial " + std::to_string(trial) + " gpu " + std::to_string(g) + " k " + std::to_string(k);
      const std::vector<int>& order = problem.gpu_order[g];
      if (before[g] <= k) {
        for (int id : order) ASSERT_EQ(out[id], base[id]) << label << ": already within the limit";
        continue;
      }
      ++limited;
      // The least limit that options no slower, or else any options, can
      // meet (too few shared clocks for k: the fewest changes possible).
      for (int fewest = k;; ++fewest) {
        const double best_j = BruteForceAddedJ(problem, g, base, fewest);
        if (best_j < std::numeric_limits<double>::infinity()) {
          EXPECT_LE(after[g], fewest) << label;
          EXPECT_NEAR(AddedJ(problem, order, base, out), best_j, 1e-9 * (1 + std::abs(best_j))) << label;
          EXPECT_EQ(AddedS(problem, order, base, out), 0) << label;
          break;
        }
        const double best_s = BruteForceAddedS(problem, g, base, fewest);
        if (best_s < std::numeric_limits<double>::infinity()) {
          EXPECT_LE(after[g], fewest) << label;
          EXPECT_NEAR(AddedS(problem, order, base, out), best_s, 1e-9) << label << ": slowed as little as it can";
          slowed = true, ++slowed_gpus;
          break;
        }
      }
    }
    if (!slowed) {
      EXPECT_LE(EvaluatePlan(problem, out).time_s, EvaluatePlan(problem, base).time_s * (1 + 1e-12)) << trial;
    }
  }
  EXPECT_GT(limited, 200);
  EXPECT_GT(slowed_gpus, 0) << "no GPU needed slower options: the case is not covered";
}

TEST(LimitClockChanges, FrontierPlansKeepTheLimitAndStayPareto) {
  std::mt19937 rng(11);
  int checked = 0;
  for (int trial = 0; trial < 20; ++trial) {
    Problem problem = MakeProblem(testing::RandomProfile(rng, 3, 4), ScheduleKind::k1F1B, 3, 4, 60);
    FrontierOptions options;
    options.max_clock_changes_per_gpu = trial % 3;
    Result<Frontier> f = SolveFrontier(problem, options);
    ASSERT_TRUE(f.ok()) << f.status().ToString();
    for (size_t i = 0; i < f->plans.size(); ++i) {
      const FrontierPlan& p = f->plans[i];
      const std::vector<int> changes = ClockChangesPerGpu(problem, p.choice);
      for (int g = 0; g < problem.num_stages(); ++g) {
        // Where the GPU's computations share too few clocks the plan has the fewest possible.
        const int fewest = ClockChangesPerGpu(problem, LimitClockChanges(problem, p.choice, 0))[g];
        EXPECT_LE(changes[g], std::max(options.max_clock_changes_per_gpu, fewest)) << trial;
        checked += fewest <= options.max_clock_changes_per_gpu;
      }
      const PlanCost cost = EvaluatePlan(problem, p.choice);
      EXPECT_NEAR(cost.time_s, p.time_s, 1e-12);
      EXPECT_NEAR(cost.energy_j, p.energy_j, 1e-9);
      EXPECT_LE(p.lower_bound_j, p.energy_j * (1 + 1e-9)) << "the unlimited bound still holds";
      if (i > 0) {
        EXPECT_GT(p.time_s, f->plans[i - 1].time_s);
        EXPECT_LT(p.energy_j, f->plans[i - 1].energy_j);
      }
    }
    // Nor is a plan limited from an unlimited one without its runs moved
    // (moving them alone lost such faster points: a review).
    Result<Frontier> unlimited = SolveFrontier(problem, FrontierOptions{});
    ASSERT_TRUE(unlimited.ok());
    for (const FrontierPlan& p : unlimited->plans) {
      const PlanCost cost = EvaluatePlan(problem, LimitClockChanges(problem, p.choice, options.max_clock_changes_per_gpu));
      const FrontierPlan* mine = f->PlanForTime(cost.time_s);
      ASSERT_NE(mine, nullptr) << trial;
      EXPECT_LE(mine->energy_j, cost.energy_j * (1 + 1e-12)) << trial << " at " << cost.time_s;
    }
    // The plans on one clock per GPU are within every limit: none is beaten
    // by nothing on the frontier.
    for (const PlanChoice& choice : OneClockPerGpuPlans(problem)) {
      const PlanCost cost = EvaluatePlan(problem, choice);
      const FrontierPlan* mine = f->PlanForTime(cost.time_s);
      ASSERT_NE(mine, nullptr) << trial;
      EXPECT_LE(mine->energy_j, cost.energy_j * (1 + 1e-12)) << trial;
    }
  }
  EXPECT_GT(checked, 100);
  FrontierOptions bad;
  bad.max_clock_changes_per_gpu = -2;
  std::mt19937 r2(1);
  EXPECT_EQ(SolveFrontier(MakeProblem(testing::RandomProfile(r2, 2, 2), ScheduleKind::k1F1B, 2, 2, 40), bad).status().code(),
            Status::Code::kInvalidArgument);
}

// A lower clock measured faster than the highest (Bloom's 1395 MHz is, on
// every stage): no one clock is no slower for all of a GPU's computations,
// so the limit makes plans slower; it once let such a GPU exceed the limit,
// and then a slowed plan kept its faster source plan's bound, above its own
// energy (both found in review).
TEST(LimitClockChanges, ALowerClockFasterThanTheHighestStillGetsTheLimitAndAValidBound) {
  // The review's profile: the backward is fastest at 905 MHz, not 1265.
  Result<Profile> profile = ParseProfileCsv(
      "stage,instruction,frequency,time,energy\n"
      "0,forward,1265,0.06041839326820875,21.2579753949905\n"
      "0,forward,1220,0.06057823117832723,16.89607549986656\n"
      "0,forward,1040,0.07293494817875061,18.83287337608964\n"
      "0,forward,905,0.07360915567302986,24.87075910984845\n"
      "0,forward,860,0.07929606792788532,18.408381103512845\n"
      "0,backward,1265,0.08513697752473627,37.15900218869792\n"
      "0,backward,1220,0.0849302934421939,25.59443619946342\n"
      "0,backward,1040,0.08233320916715987,31.97260053882184\n"
      "0,backward,905,0.07994112546509724,35.893997937533676\n"
      "0,backward,860,0.11121512190649382,52.4935347832975\n",
      "faster_lower_clock.csv", 1);
  ASSERT_TRUE(profile.ok()) << profile.status().ToString();
  int checked = 0;
  for (auto [kind, microbatches, chunks] : {std::tuple{ScheduleKind::kInterleaved1F1B, 3, 2},
                                            std::tuple{ScheduleKind::kInterleaved1F1B, 2, 2},
                                            std::tuple{ScheduleKind::kGPipe, 12, 1}}) {
    ProblemSpec spec;
    spec.schedule = {kind, 1, microbatches, chunks};
    spec.blocking_power_w = 83.64;
    Result<Problem> problem = BuildProblem(*profile, spec);
    ASSERT_TRUE(problem.ok()) << problem.status().ToString();
    for (int k : {0, 1, 4}) {
      FrontierOptions options;
      options.max_clock_changes_per_gpu = k;
      Result<Frontier> f = SolveFrontier(*problem, options);
      ASSERT_TRUE(f.ok()) << f.status().ToString();
      for (size_t i = 0; i < f->plans.size(); ++i) {
        const FrontierPlan& p = f->plans[i];
        const std::string label = ScheduleName(kind) + std::string(" k ") + std::to_string(k) + " at " + std::to_string(p.time_s);
        for (int c : ClockChangesPerGpu(*problem, p.choice)) EXPECT_LE(c, k) << label;
        EXPECT_LE(p.lower_bound_j, p.energy_j) << label;
        if (i > 0) {
          EXPECT_LE(p.lower_bound_j, f->plans[i - 1].lower_bound_j) << label << ": bounds never rise with time";
        }
        ++checked;
      }
      // Every computation at one clock is within any limit: the limited
      // frontier is never worse than the cheapest such plan (limited plans
      // alone were: the second review's case).
      for (const FreqPoint& clock : problem->nodes[0].options) {
        const PlanCost cost = EvaluatePlan(*problem, testing::EveryComputationAt(*problem, clock.freq_mhz));
        const FrontierPlan* mine = f->PlanForTime(cost.time_s);
        ASSERT_NE(mine, nullptr);
        EXPECT_LE(mine->energy_j, cost.energy_j * (1 + 1e-12)) << ScheduleName(kind) << " k " << k << " at " << clock.freq_mhz;
      }
    }
  }
  EXPECT_GT(checked, 9);
}

// Every per-GPU clock assignment (each GPU's computations at one clock they
// all list), reduced to the Pareto frontier, time ascending.
std::vector<testing::ExactPoint> ExhaustiveOneClockFrontier(const Problem& problem) {
  const int gpus = problem.num_stages();
  std::vector<std::vector<int>> mhz(gpus);  // every computation here lists the same clocks
  for (int g = 0; g < gpus; ++g) {
    for (const FreqPoint& o : problem.nodes[problem.gpu_order[g][0]].options) mhz[g].push_back(o.freq_mhz);
  }
  std::vector<testing::ExactPoint> points;
  std::vector<int> index(gpus, 0);
  for (;;) {
    PlanChoice choice(problem.num_nodes());
    for (int g = 0; g < gpus; ++g) {
      for (int id : problem.gpu_order[g]) {
        const std::vector<FreqPoint>& options = problem.nodes[id].options;
        for (int o = 0; o < static_cast<int>(options.size()); ++o) {
          if (options[o].freq_mhz == mhz[g][index[g]]) choice[id] = o;
        }
      }
    }
    const PlanCost cost = EvaluatePlan(problem, choice);
    points.push_back({cost.time_s, cost.energy_j});
    int g = 0;
    while (g < gpus && ++index[g] == static_cast<int>(mhz[g].size())) index[g++] = 0;
    if (g == gpus) break;
  }
  std::sort(points.begin(), points.end(), [](const auto& a, const auto& b) {
    return a.time_s != b.time_s ? a.time_s < b.time_s : a.energy_j < b.energy_j;
  });
  std::vector<testing::ExactPoint> frontier;
  for (const auto& p : points) {
    if (frontier.empty() || p.energy_j < frontier.back().energy_j) frontier.push_back(p);
  }
  return frontier;
}

// The search is a heuristic: against every assignment on random problems
// (2-4 GPUs, 4 clocks, 1F1B and GPipe), its plans must each run one clock per
// GPU, start at the highest clocks, and come close to the best at the
// all-max time, at the least energy and along the frontier.
TEST(OneClockPerGpuPlans, RunOneClockPerGpuAndComeCloseToExhaustiveSearch) {
  std::mt19937 rng(23);
  double worst_no_slowdown = 0, worst_least = 0, sum_least = 0, worst_along = 0, sum_along = 0;
  int cases = 0, exact_least = 0, points = 0;
  for (int trial = 0; trial < 200; ++trial) {
    const int stages = 2 + trial % 3;
    const ScheduleKind kind = trial % 2 ? ScheduleKind::k1F1B : ScheduleKind::kGPipe;
    Profile profile = testing::RandomProfile(rng, stages, 4);
    if (trial % 4 == 3) {
      // As on Bloom's profile: the second clock faster than the highest, and
      // cheaper, on every stage (the walk once missed the plans faster than
      // all-max there; found in review).
      for (StageProfile& stage : profile.stages) {
        for (std::vector<FreqPoint>& points : stage.points) {
          if (points.size() < 2) continue;
          points[1].time_s = points[0].time_s * 0.95;
          points[1].energy_j = std::min(points[1].energy_j, points[0].energy_j * 0.9);
        }
      }
    }
    Problem problem = MakeProblem(profile, kind, stages, 4, 30 + trial % 5 * 40);
    const std::vector<PlanChoice> plans = OneClockPerGpuPlans(problem);
    ASSERT_FALSE(plans.empty());
    EXPECT_EQ(plans[0], AllMaxPlan(problem)) << "the descent starts at the highest clocks";
    double least_j = std::numeric_limits<double>::infinity(), no_slowdown_j = least_j;
    const PlanCost all_max = EvaluatePlan(problem, plans[0]);
    for (const PlanChoice& choice : plans) {
      for (int c : ClockChangesPerGpu(problem, choice)) ASSERT_EQ(c, 0) << trial;
      const PlanCost cost = EvaluatePlan(problem, choice);
      least_j = std::min(least_j, cost.energy_j);
      if (cost.time_s <= all_max.time_s * (1 + 1e-12)) no_slowdown_j = std::min(no_slowdown_j, cost.energy_j);
    }
    const std::vector<testing::ExactPoint> exact = ExhaustiveOneClockFrontier(problem);
    const double exact_least_j = exact.back().energy_j;
    const double exact_no_slowdown_j = testing::ExactEnergyAtMost(exact, all_max.time_s * (1 + 1e-12));
    EXPECT_LE(exact_least_j, least_j * (1 + 1e-12)) << "exhaustive search sees every plan";
    for (const testing::ExactPoint& e : exact) {
      double mine = std::numeric_limits<double>::infinity();
      for (const PlanChoice& choice : plans) {
        const PlanCost cost = EvaluatePlan(problem, choice);
        if (cost.time_s <= e.time_s * (1 + 1e-12)) mine = std::min(mine, cost.energy_j);
      }
      worst_along = std::max(worst_along, mine / e.energy_j - 1);
      sum_along += mine / e.energy_j - 1;
      ++points;
    }
    worst_no_slowdown = std::max(worst_no_slowdown, no_slowdown_j / exact_no_slowdown_j - 1);
    worst_least = std::max(worst_least, least_j / exact_least_j - 1);
    sum_least += least_j / exact_least_j - 1;
    exact_least += least_j <= exact_least_j * (1 + 1e-12);
    ++cases;
  }
  // Measured 2026-11-29: exact at no slowdown in every case; least energy
  // exact in 197 of 200, worst 1.34%, mean 0.014%; along the frontier worst
  // 9.0%, mean 0.095% (a point between two of ours is charged the faster).
  EXPECT_LE(worst_no_slowdown, 1e-9);
  EXPECT_LE(worst_least, 0.03);
  EXPECT_LE(sum_least / cases, 0.001);
  EXPECT_LE(sum_along / points, 0.003);
  std::printf("one clock per GPU vs exhaustive, %d cases: no slowdown worst %.3f%%; least energy worst %.3f%%, "
              "mean %.4f%%, exact in %d; along the frontier (%d points) worst %.3f%%, mean %.4f%%\n", cases,
              100 * worst_no_slowdown, 100 * worst_least, 100 * sum_least / cases, exact_least, points,
              100 * worst_along, 100 * sum_along / points);
}

// MoveClockRuns against every assignment of clocks to the same runs, on the
// limited plans of random problems: it never adds a change, never passes the
// deadline, never costs more, and comes close to the best.
TEST(MoveClockRuns, KeepsTheChangesAndDeadlineAndComesCloseToExhaustiveSearch) {
  std::mt19937 rng(31);
  double worst = 0, sum = 0;
  int cases = 0, exact = 0, improved = 0;
  for (int trial = 0; trial < 120; ++trial) {
    const int stages = 2 + trial % 2;
    Problem problem = MakeProblem(testing::RandomProfile(rng, stages, 4), ScheduleKind::k1F1B, stages, 3, 40 + trial % 4 * 30);
    Result<Frontier> f = SolveFrontier(problem, FrontierOptions{});
    ASSERT_TRUE(f.ok());
    const FrontierPlan& source = f->plans[trial % f->plans.size()];
    const PlanChoice limited = LimitClockChanges(problem, source.choice, 1 + trial % 2);
    const PlanCost before = EvaluatePlan(problem, limited);
    const double deadline_s = std::max(before.time_s, source.time_s);
    const PlanChoice moved = MoveClockRuns(problem, limited, deadline_s);
    const PlanCost after = EvaluatePlan(problem, moved);
    EXPECT_LE(after.time_s, deadline_s * (1 + 1e-12)) << trial;
    EXPECT_LE(after.energy_j, before.energy_j * (1 + 1e-12)) << trial;
    const std::vector<int> changes_before = ClockChangesPerGpu(problem, limited), changes_after = ClockChangesPerGpu(problem, moved);
    for (int g = 0; g < stages; ++g) EXPECT_LE(changes_after[g], changes_before[g]) << trial;
    // Exhaustive: every clock for every run (a run: consecutive computations of
    // one clock on a GPU, around the cycle), the cheapest within the deadline.
    std::vector<std::vector<int>> runs;
    for (const std::vector<int>& order : problem.gpu_order) {
      const size_t n = order.size();
      auto mhz = [&](size_t k) { return problem.nodes[order[k % n]].options[limited[order[k % n]]].freq_mhz; };
      size_t first = 0;
      while (first < n && mhz(first) == mhz(first + n - 1)) ++first;
      if (first == n) first = 0;
      for (size_t k = first; k < first + n; ++k) {
        if (k == first || mhz(k) != mhz(k - 1)) runs.emplace_back();
        runs.back().push_back(order[k % n]);
      }
    }
    if (runs.size() > 7) continue;  // 4^7 plans at most
    double best_j = std::numeric_limits<double>::infinity();
    std::vector<int> index(runs.size(), 0);
    for (;;) {
      PlanChoice plan = limited;
      for (size_t r = 0; r < runs.size(); ++r) {
        for (int id : runs[r]) plan[id] = index[r];  // every option index is a clock here (same list)
      }
      const PlanCost c = EvaluatePlan(problem, plan);
      if (c.time_s <= deadline_s * (1 + 1e-12)) best_j = std::min(best_j, c.energy_j);
      size_t r = 0;
      while (r < runs.size() && ++index[r] == 4) index[r++] = 0;
      if (r == runs.size()) break;
    }
    EXPECT_LE(best_j, after.energy_j * (1 + 1e-12)) << "exhaustive search sees every assignment";
    worst = std::max(worst, after.energy_j / best_j - 1);
    sum += after.energy_j / best_j - 1;
    exact += after.energy_j <= best_j * (1 + 1e-9);
    improved += after.energy_j < before.energy_j * (1 - 1e-9);
    ++cases;
  }
  std::printf("move clock runs vs exhaustive, %d cases (%d improved): worst %.3f%%, mean %.4f%%, exact in %d\n", cases,
              improved, 100 * worst, 100 * sum / cases, exact);
  // Measured 2026-11-29: 120 cases, 62 improved, exact in 108, worst 8.19%, mean 0.185%.
  EXPECT_GT(cases, 60);
  EXPECT_GT(improved, 10);
  EXPECT_GE(exact, cases * 4 / 5);
  EXPECT_LE(sum / cases, 0.005);
}

TEST(LimitClockChanges, ACancelledLimitStopsAndLeavesPlansAlone) {
  // Every computation lists the same three clocks, so a limit can be met.
  Result<Profile> profile = ParseProfileCsv(
      "stage,instruction,frequency,time,energy\n"
      "0,forward,1410,0.010,3.0\n0,forward,1200,0.011,2.6\n0,forward,1000,0.013,2.5\n"
      "0,backward,1410,0.020,6.0\n0,backward,1200,0.022,5.2\n0,backward,1000,0.026,5.0\n"
      "1,forward,1410,0.014,4.2\n1,forward,1200,0.0155,3.6\n1,forward,1000,0.018,3.4\n"
      "1,backward,1410,0.028,8.4\n1,backward,1200,0.031,7.3\n1,backward,1000,0.036,7.0\n",
      "test.csv", 2);
  ASSERT_TRUE(profile.ok()) << profile.status().ToString();
  Problem problem = MakeProblem(*profile, ScheduleKind::k1F1B, 2, 6, 60);
  Result<Frontier> f = SolveFrontier(problem, FrontierOptions{});
  ASSERT_TRUE(f.ok());
  int most = 0;
  for (const FrontierPlan& p : f->plans) {
    for (int c : ClockChangesPerGpu(problem, p.choice)) most = std::max(most, c);
  }
  ASSERT_GT(most, 0);
  const std::atomic<bool> cancel{true};
  Frontier cancelled = *f;
  LimitFrontierClockChanges(problem, 0, &cancelled, &cancel);
  int after = 0;
  for (const FrontierPlan& p : cancelled.plans) {
    for (int c : ClockChangesPerGpu(problem, p.choice)) after = std::max(after, c);
  }
  EXPECT_EQ(after, most);  // nothing was limited
  Frontier limited = *f;
  LimitFrontierClockChanges(problem, 0, &limited);  // not cancelled: limited
  int limited_most = 0;
  for (const FrontierPlan& p : limited.plans) {
    for (int c : ClockChangesPerGpu(problem, p.choice)) limited_most = std::max(limited_most, c);
  }
  EXPECT_LT(limited_most, most);
}

}  // namespace
}  // namespace perseus
