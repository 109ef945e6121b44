#include "control/carbon_choice.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>

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
  EXPECT_EQ(paused.back().option, 0);
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
    const std::vector<RatePower> hull = RatePowerHull(RandomKnobs(rng, 2 + trial % 4), pause);
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

}  // namespace
}  // namespace perseus::control
