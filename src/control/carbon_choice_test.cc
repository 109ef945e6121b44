#include "control/carbon_choice.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>
#include <tuple>

namespace perseus::control {
namespace {

KnobSet ThreeOptions() {
  KnobSet k;
  k.reference = {"fast", 1.0, 3.6e6};
  k.options = {{"fast", 1.0, 3.6e6}, {"mid", 1.1, 3.0e6}, {"slow", 1.5, 2.5e6}};
  k.pareto = k.options;
  return k;
}

// Random options on a convex (time, energy) curve, fastest first.
KnobSet RandomKnobs(std::mt19937& rng, int n) {
  std::uniform_real_distribution<double> u(0.02, 0.3);
  KnobSet k;
  double t = 1, e = 1000;
  double slope = 3000;
  for (int i = 0; i < n; ++i) {
    k.options.push_back({"o" + std::to_string(i), t, e, i});
    const double dt = u(rng);
    t += dt;
    e -= slope * dt;
    slope *= 0.2 + u(rng);
    e = std::max(e, 1.0);
  }
  k.pareto = k.options;
  k.reference = k.options.front();
  return k;
}

TEST(CarbonChoice, TheHullInRateAndPowerHasTheOptionsOfTheTimeEnergyHull) {
  // Perspective maps the (time, energy) hull onto the (rate, power) hull.
  std::mt19937 rng(5);
  for (int trial = 0; trial < 50; ++trial) {
    KnobSet k = RandomKnobs(rng, 2 + trial % 6);
    k.options = carbon::LowerConvexHull(k.options);
    const std::vector<RatePower> hull = RatePowerHull(k);
    ASSERT_EQ(hull.size(), k.options.size()) << trial;
    for (size_t i = 0; i < hull.size(); ++i) EXPECT_EQ(hull[i].option, static_cast<int>(hull.size() - 1 - i));
  }
  // With a pause the slowest options can fall off: pausing and running fast beats them.
  KnobSet k = ThreeOptions();
  const std::vector<RatePower> paused = RatePowerHull(k, true);
  EXPECT_EQ(paused.front().option, -1);
  EXPECT_EQ(paused.front().power_w, 0);
  EXPECT_EQ(paused.back().option, 0);
  // A pause that holds the GPUs draws their idle power: on the hull while
  // that is below the slowest option's power, off it (dominated) above.
  k.pause_power_w = 1e6;  // slow: rate 2/3, 1.67e6 W
  const std::vector<RatePower> held = RatePowerHull(k, true);
  ASSERT_EQ(held.front().option, -1);
  EXPECT_EQ(held.front().power_w, 1e6);
  ASSERT_EQ(held.size(), 4u);  // the slow option is back on it: pausing costs power now
  EXPECT_EQ(held[1].option, 2);
  k.pause_power_w = 2e6;
  EXPECT_EQ(RatePowerHull(k, true).front().option, 2);
}

// A data-parallel job of D pipelines with only `running` of them on option o
// (the others shed, at the pause's power) makes progress f * rate_o at
// f * power_o + (1 - f) * the pause's power, f = running / D: a point between
// the pause and o, so never below the hull with the pause, and the plan that
// pauses the whole job for 1 - f of the time costs no more carbon
// (docs/carbon.md, "Pausing in the server"). This is convexity, checked on
// the hull the decision uses (it fails if RatePowerHull misses a point).
TEST(CarbonChoice, SheddingPipelinesIsNeverBelowTheHullWithThePause) {
  std::mt19937 rng(11);
  std::uniform_real_distribution<double> u(0, 1);
  for (int trial = 0; trial < 200; ++trial) {
    KnobSet k = RandomKnobs(rng, 2 + trial % 6);
    k.options = carbon::LowerConvexHull(k.options);
    const std::vector<RatePower> points = RatePowerPoints(k);
    const double least_w = std::min_element(points.begin(), points.end(), [](const RatePower& a, const RatePower& b) {
                             return a.power_w < b.power_w;
                           })->power_w;
    k.pause_power_w = trial % 2 == 0 ? 0 : u(rng) * least_w;  // released, or held below the slowest option
    const std::vector<RatePower> hull = RatePowerHull(k, true);
    ASSERT_EQ(hull.front().option, -1) << trial;
    auto hull_power_w = [&](double rate) {  // the hull's least power at `rate`
      for (size_t i = 1; i < hull.size(); ++i) {
        if (rate > hull[i].rate) continue;
        const double share = (rate - hull[i - 1].rate) / (hull[i].rate - hull[i - 1].rate);
        return hull[i - 1].power_w + share * (hull[i].power_w - hull[i - 1].power_w);
      }
      return hull.back().power_w;
    };
    const int pipelines = 2 + trial % 7;
    for (const RatePower& o : points) {
      for (int running = 1; running < pipelines; ++running) {
        const double f = static_cast<double>(running) / pipelines;
        const double shed_w = f * o.power_w + (1 - f) * k.pause_power_w;
        EXPECT_LE(hull_power_w(f * o.rate), shed_w * (1 + 1e-12)) << trial << " option " << o.option;
      }
    }
  }
}

TEST(CarbonChoice, ChoosesByIntensityAndMu) {
  const std::vector<RatePower> hull = RatePowerHull(ThreeOptions());  // slow, mid, fast
  ASSERT_EQ(hull.size(), 3u);
  EXPECT_EQ(hull[ChooseOnHull(hull, 0, 1)].option, 0);     // clean grid: progress wins
  EXPECT_EQ(hull[ChooseOnHull(hull, 500, 0)].option, 2);   // mu 0: least power
  EXPECT_EQ(hull[ChooseOnHull(hull, 500, 1e4)].option, 0);  // progress priced high
}

// The greedy plan against brute force over every assignment of hull points
// to windows, with one window mixing two adjacent points to meet the work
// exactly (an LP optimum has at most one such window when intensities differ).
double BruteForceCarbon(const std::vector<RatePower>& hull, const std::vector<double>& ci, double work) {
  const int n = static_cast<int>(ci.size()), k = static_cast<int>(hull.size());
  double best = INFINITY;
  std::vector<int> pick(n, 0);
  for (;;) {
    double base_work = 0, base_carbon = 0;
    for (int w = 0; w < n; ++w) {
      base_work += hull[pick[w]].rate;
      base_carbon += ci[w] * hull[pick[w]].power_w;
    }
    if (base_work >= work - 1e-12) best = std::min(best, base_carbon);
    for (int w = 0; w < n; ++w) {  // window w moves part of the way to its next point
      if (pick[w] + 1 >= k) continue;
      const double dr = hull[pick[w] + 1].rate - hull[pick[w]].rate;
      const double part = (work - base_work) / dr;
      if (part > 0 && part < 1) {
        best = std::min(best, base_carbon + part * ci[w] * (hull[pick[w] + 1].power_w - hull[pick[w]].power_w));
      }
    }
    int w = 0;
    while (w < n && ++pick[w] == k) pick[w++] = 0;
    if (w == n) break;
  }
  return best / kJoulesPerKwh;  // per second of window
}

TEST(CarbonChoice, PlanWorkIsTheLeastCarbonPlanAgainstBruteForce) {
  std::mt19937 rng(11);
  std::uniform_real_distribution<double> intensity(20, 800);
  int checked = 0;
  for (int trial = 0; trial < 300; ++trial) {
    const bool pause = trial % 3 == 0;
    KnobSet knobs = RandomKnobs(rng, 2 + trial % 4);
    // Every other pause holds the GPUs: it draws a share of the slowest option's power.
    if (trial % 2 == 0) knobs.pause_power_w = 0.3 * knobs.options.back().energy_j / knobs.options.back().time_s;
    const std::vector<RatePower> hull = RatePowerHull(knobs, pause);
    const int n = 2 + trial % 4;
    std::vector<double> ci(n);
    for (double& c : ci) c = intensity(rng);
    const double lo = n * hull.front().rate, hi = n * hull.back().rate;
    const double work = lo + (hi - lo) * std::uniform_real_distribution<double>(0.05, 0.95)(rng);
    const std::vector<double> share(n, 1.0);
    const WorkPlan plan = PlanWork(hull, ci, share, work);
    ASSERT_TRUE(plan.feasible);
    EXPECT_NEAR(plan.work, work, 1e-9 * work);
    const double greedy = PlanCarbonG(hull, plan, ci, share, 1.0);
    EXPECT_NEAR(greedy, BruteForceCarbon(hull, ci, work), 1e-9 * greedy) << "trial " << trial;
    // Every window runs what mu chooses, but for the one that mixes.
    int mixed = 0;
    for (int w = 0; w < n; ++w) {
      const WindowMix& m = plan.windows[w];
      if (m.fast_share > 0) {
        ++mixed;
      } else {
        const double best = plan.mu_g_per_s * hull[m.slow].rate - ci[w] * hull[m.slow].power_w / kJoulesPerKwh;
        const int c = ChooseOnHull(hull, ci[w], plan.mu_g_per_s);
        EXPECT_NEAR(plan.mu_g_per_s * hull[c].rate - ci[w] * hull[c].power_w / kJoulesPerKwh, best, 1e-9);
      }
    }
    EXPECT_LE(mixed, 1);
    ++checked;
  }
  EXPECT_EQ(checked, 300);
}

TEST(CarbonChoice, PlanWorkSlowsDirtyWindowsMostAndReportsInfeasibility) {
  const std::vector<RatePower> hull = RatePowerHull(ThreeOptions());
  std::vector<double> ci = {100, 500, 100, 500, 100, 500, 100, 500, 100, 500};
  const std::vector<double> share(ci.size(), 1.0);
  const WorkPlan plan = PlanWork(hull, ci, share, 10 / 1.05);
  ASSERT_TRUE(plan.feasible);
  EXPECT_NEAR(plan.work, 10 / 1.05, 1e-9);
  double dirty = 0, clean = 0;
  for (size_t w = 0; w < ci.size(); ++w) (ci[w] > 200 ? dirty : clean) += plan.windows[w].Rate(hull);
  EXPECT_LT(dirty, clean);
  EXPECT_FALSE(PlanWork(hull, ci, share, 11).feasible);
  EXPECT_EQ(PlanWork(hull, ci, share, 1).mu_g_per_s, 0);  // the slowest everywhere suffices
  // A partial window counts by its share.
  EXPECT_NEAR(PlanWork(hull, {100, 100}, {1, 0.5}, 1.5).work, 1.5, 1e-12);
  EXPECT_FALSE(PlanWork(hull, {100, 100}, {1, 0.5}, 1.6).feasible);
}

// The greedy as the LP's structure states it (every window at the least
// power, every step of every window sorted by cost, bought in that order):
// PlanWork runs it from the other end.
WorkPlan PlanWorkBySorting(const std::vector<RatePower>& hull, const std::vector<double>& ci,
                           const std::vector<double>& share, double work) {
  const int n = static_cast<int>(ci.size()), last = static_cast<int>(hull.size()) - 1;
  WorkPlan plan;
  plan.windows.assign(n, WindowMix{});
  for (int w = 0; w < n; ++w) plan.work += share[w] * hull[0].rate;
  const std::vector<double> slope = StepSlopes(hull);
  std::vector<std::tuple<double, int, int>> steps;
  for (int w = 0; w < n; ++w) {
    for (int k = 0; k < last && share[w] > 0; ++k) {
      steps.emplace_back(ci[w] * slope[k], w, k);
    }
  }
  std::sort(steps.begin(), steps.end());
  for (const auto& [cost, w, k] : steps) {
    if (plan.work >= work) break;
    const double gain = share[w] * (hull[k + 1].rate - hull[k].rate);
    plan.mu_g_per_s = cost;
    const double part = std::min(1.0, (work - plan.work) / gain);
    plan.windows[w] = part < 1 ? WindowMix{k, k + 1, part} : WindowMix{k + 1, k + 1, 0};
    plan.work += part * gain;
  }
  plan.feasible = plan.work >= work * (1 - 1e-12);
  return plan;
}

// What one comparison with buying in sorted order found.
struct SortedComparison {
  bool sliver = false, mixed = false, infeasible = false, least = false;
};

// The same plan as buying in sorted order, step for step (see below for the sliver).
SortedComparison ExpectSameAsSorting(const std::vector<RatePower>& hull, const std::vector<double>& ci,
                                     const std::vector<double>& share, double work, int trial) {
  const int n = static_cast<int>(ci.size());
  double hi = 0;
  for (int w = 0; w < n; ++w) hi += share[w] * hull.back().rate;
  const WorkPlan got = PlanWork(hull, ci, share, work);
  const WorkPlan want = PlanWorkBySorting(hull, ci, share, work);
  SortedComparison c;
  EXPECT_EQ(got.feasible, want.feasible) << "trial " << trial;
  // Where buying in order ends a hair short of the work (rounding), it
  // buys a sliver (share < 1e-12) of one more step and reports that step's
  // price; if that step is the same window's next, the sliver overwrites
  // the window's partial step, which then runs a whole step faster than
  // planned (the sorted greedy's bug, which giving back does not have).
  for (const WindowMix& m : want.windows) c.sliver |= m.fast_share > 0 && m.fast_share < 1e-12;
  if (c.sliver) {  // giving back makes the work, at no more carbon than the sorted plan's
    EXPECT_TRUE(got.feasible);
    EXPECT_NEAR(got.work, work, 1e-9 * std::max(1.0, hi)) << "trial " << trial;
    EXPECT_LE(PlanCarbonG(hull, got, ci, share, 1.0), PlanCarbonG(hull, want, ci, share, 1.0) * (1 + 1e-9));
    return c;
  }
  EXPECT_EQ(got.mu_g_per_s, want.mu_g_per_s) << "trial " << trial;
  EXPECT_NEAR(got.work, want.work, 1e-9 * std::max(1.0, hi)) << "trial " << trial;
  for (int w = 0; w < n; ++w) {
    EXPECT_NEAR(got.windows[w].Rate(hull), want.windows[w].Rate(hull), 1e-9) << "trial " << trial << " window " << w;
    EXPECT_NEAR(got.windows[w].PowerW(hull), want.windows[w].PowerW(hull), 1e-9 * hull.back().power_w)
        << "trial " << trial << " window " << w;
    c.mixed |= got.windows[w].fast_share > 0;
  }
  c.infeasible = !got.feasible;
  c.least = got.mu_g_per_s == 0;
  return c;
}

// Work between a little less than the least power makes and a little more than the fastest does.
double RandomWork(std::mt19937& rng, const std::vector<RatePower>& hull, const std::vector<double>& share) {
  double lo = 0, hi = 0;
  for (double s : share) {
    lo += s * hull.front().rate;
    hi += s * hull.back().rate;
  }
  return lo + (hi - lo) * std::uniform_real_distribution<double>(-0.1, 1.1)(rng);
}

// The same plan as buying in sorted order, step for step: ties (repeated
// intensities), partial and empty windows, a pause, too little and too much work.
TEST(CarbonChoice, PlanWorkGivesBackInTheReverseOrderOfBuying) {
  std::mt19937 rng(17);
  int mixed = 0, infeasible = 0, least = 0, slivers = 0;
  for (int trial = 0; trial < 2000; ++trial) {
    const std::vector<RatePower> hull = RatePowerHull(RandomKnobs(rng, 1 + trial % 7), trial % 3 == 0);
    const int n = 1 + static_cast<int>(rng() % 40);
    std::vector<double> ci(n), share(n, 1.0);
    for (double& c : ci) c = trial % 2 ? 100.0 * (1 + rng() % 4) : std::uniform_real_distribution<double>(20, 800)(rng);
    if (trial % 5 == 0) share.back() = std::uniform_real_distribution<double>(0, 1)(rng);
    if (trial % 7 == 0) share[rng() % n] = 0;
    const SortedComparison c = ExpectSameAsSorting(hull, ci, share, RandomWork(rng, hull, share), trial);
    if (::testing::Test::HasFailure()) return;
    slivers += c.sliver;
    mixed += c.mixed;
    infeasible += c.infeasible;
    least += c.least;
  }
  EXPECT_GT(mixed, 1000);  // every case is reached
  EXPECT_GT(infeasible, 50);
  EXPECT_GT(least, 50);
  EXPECT_LT(slivers, 20);
}

// A frontier's worth of options (tens of hull points) over a week or more of
// windows, as the deadline and the told-length decisions plan: PlanWork
// first bisects the price down to a few steps, and still gives back exactly
// what buying in order would.
TEST(CarbonChoice, PlanWorkOnFineHullsAndLongHorizonsGivesBackInTheReverseOrderOfBuying) {
  std::mt19937 rng(23);
  int mixed = 0, slivers = 0;
  for (int trial = 0; trial < 200; ++trial) {
    KnobSet knobs;
    const int options = 10 + trial % 60;
    for (int i = 0; i < options; ++i) {  // energy falls ever more slowly as time grows, with a little noise
      const double t = 1 + 0.6 * i / options;
      const double e = 600 + 400 / (t * t * t) + std::uniform_real_distribution<double>(0, 2)(rng);
      knobs.options.push_back({"o" + std::to_string(i), t, e, i});
    }
    knobs.reference = knobs.options.front();
    knobs.pause_power_w = trial % 4 == 1 ? 150 : 0;
    const std::vector<RatePower> hull = RatePowerHull(knobs, trial % 2 == 1);
    const int n = 24 + static_cast<int>(rng() % 400);
    std::vector<double> ci(n), share(n, 1.0);
    for (double& c : ci) c = trial % 3 ? std::uniform_real_distribution<double>(20, 800)(rng) : 100.0 * (1 + rng() % 3);
    share.back() = std::uniform_real_distribution<double>(0.01, 1)(rng);
    const SortedComparison c = ExpectSameAsSorting(hull, ci, share, RandomWork(rng, hull, share), trial);
    if (::testing::Test::HasFailure()) return;
    slivers += c.sliver;
    mixed += c.mixed;
  }
  EXPECT_GT(mixed, 150);
  EXPECT_LT(slivers, 5);
}

// A job whose resumes each cost a restart plans with a restart's less time
// for every resume it makes: two dirty spells, two pauses, two restarts
// (three from a job paused now), each restart's energy at its window's
// intensity.
TEST(CarbonChoice, PlanWorkWithRestartsLeavesTimeForEveryResumeItMakes) {
  const std::vector<RatePower> hull = RatePowerHull(ThreeOptions(), true);
  const std::vector<double> ci = {100, 100, 900, 900, 100, 100, 900, 900, 100, 100};
  const std::vector<double> share(ci.size(), 1.0);
  auto total = [](const std::vector<double>& s) {
    double sum = 0;
    for (double x : s) sum += x;
    return sum;
  };
  const RestartingPlan free = PlanWorkWithRestarts(hull, ci, share, 5, 0, 1000, false);
  EXPECT_EQ(free.planned_restarts, 0);
  EXPECT_EQ(free.share, share);
  EXPECT_EQ(free.restart_carbon_g, 0);

  const RestartingPlan running = PlanWorkWithRestarts(hull, ci, share, 5, 0.5, 1000, false);
  EXPECT_EQ(running.resumes, 2);  // after each dirty spell
  EXPECT_EQ(running.planned_restarts, 2);
  EXPECT_NEAR(total(running.share), 9, 1e-9);
  EXPECT_TRUE(running.plan.feasible);
  EXPECT_NEAR(running.plan.work, 5, 1e-9);
  for (int w : {2, 3, 6, 7}) EXPECT_LT(RunPoint(hull, running.plan.windows[w]).option, 0) << "window " << w;
  EXPECT_NEAR(running.restart_carbon_g, 2 * 100 * 0.5 * 1000 / kJoulesPerKwh, 1e-12);

  const RestartingPlan paused = PlanWorkWithRestarts(hull, ci, share, 5, 0.5, 1000, true);
  EXPECT_GE(paused.resumes, 3);  // now, and after each dirty spell
  EXPECT_TRUE(paused.converged);
  EXPECT_LE(paused.resumes, paused.planned_restarts);
  EXPECT_NEAR(total(paused.share), 10 - 0.5 * paused.planned_restarts, 1e-9);
  EXPECT_NEAR(paused.plan.work, 5, 1e-9);

  // A restart under way takes its time off too.
  const RestartingPlan restarting = PlanWorkWithRestarts(hull, ci, share, 5, 0.5, 1000, false, 0.25);
  EXPECT_EQ(restarting.planned_restarts, 2);
  EXPECT_NEAR(total(restarting.share), 10 - 2 * 0.5 - 0.25, 1e-9);
  EXPECT_NEAR(restarting.plan.work, 5, 1e-9);
}

// On random grids the plan covers its work in the time its restarts leave,
// and makes no more resumes than it left time for (all but a few plans
// that were still changing after kRestartRounds). (Many keep time for more
// restarts than they make: planned for fewer, they would make more.)
TEST(CarbonChoice, PlanWorkWithRestartsKeepsTimeForItsResumesOnRandomGrids) {
  std::mt19937 rng(23);
  std::uniform_real_distribution<double> c(20, 900), r(0.05, 1.5);
  int checked = 0, unconverged = 0;
  for (int trial = 0; trial < 400; ++trial) {
    const KnobSet knobs = RandomKnobs(rng, 2 + trial % 5);
    const std::vector<RatePower> hull = RatePowerHull(knobs, true);
    const int n = 6 + trial % 30;
    std::vector<double> ci(n), share(n, 1.0);
    for (double& x : ci) x = c(rng);
    const double restart = r(rng), work = n * std::uniform_real_distribution<double>(0.1, 0.6)(rng);
    const RestartingPlan p = PlanWorkWithRestarts(hull, ci, share, work, restart, 500, trial % 2 == 1);
    double covered = 0;
    for (double x : p.share) covered += x;
    EXPECT_NEAR(covered, std::max(n - p.planned_restarts * restart, 1e-9), 1e-9) << trial;
    if (!p.plan.feasible) continue;
    ++checked;
    EXPECT_NEAR(p.plan.work, work, 1e-9 * work) << trial;
    int resumes = 0;  // counted here: a window run after one paused (or first, from a pause)
    for (size_t w = 0; w < p.plan.windows.size(); ++w) {
      const bool before = w == 0 ? trial % 2 == 1 : RunPoint(hull, p.plan.windows[w - 1]).option < 0;
      resumes += before && RunPoint(hull, p.plan.windows[w]).option >= 0;
    }
    EXPECT_EQ(p.resumes, resumes) << trial;
    if (p.converged) {
      EXPECT_LE(resumes, p.planned_restarts) << trial;
    }
    unconverged += !p.converged;
  }
  EXPECT_GT(checked, 300);
  EXPECT_LE(unconverged, checked / 50) << "of " << checked;
}

}  // namespace
}  // namespace perseus::control
