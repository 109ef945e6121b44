#include "control/power_cap.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <random>

namespace perseus::control {
namespace {

Frontier RandomFrontier(std::mt19937& rng, int plans) {
  std::uniform_real_distribution<double> step(0.01, 0.3), save(0.01, 0.2);
  Frontier f;
  double time_s = 1, energy_j = 1000;
  for (int k = 0; k < plans; ++k) {
    f.plans.push_back({{}, time_s, energy_j, 0});
    time_s *= 1 + step(rng);
    energy_j *= 1 - save(rng);
  }
  return f;
}

// Brute force: every assignment of plans to pipelines, and every time mix of
// two assignments; the highest average rate (iterations per second) within the cap.
double BestRate(const Frontier& f, double blocking_w, const std::vector<double>& slowdowns, double cap_w) {
  const int n = static_cast<int>(f.plans.size()), pipelines = static_cast<int>(slowdowns.size());
  std::vector<std::pair<double, double>> settings;  // (rate, power)
  std::vector<int> plan(pipelines, 0);
  while (true) {
    double t = 0, e = 0;
    for (int p = 0; p < pipelines; ++p) t = std::max(t, f.plans[plan[p]].time_s * slowdowns[p]);
    for (int p = 0; p < pipelines; ++p) e += f.plans[plan[p]].energy_j + blocking_w * (t - f.plans[plan[p]].time_s * slowdowns[p]);
    settings.emplace_back(1 / t, e / t);
    int p = 0;
    while (p < pipelines && ++plan[p] == n) plan[p++] = 0;
    if (p == pipelines) break;
  }
  double best = 0;
  for (const auto& [ra, pa] : settings) {
    if (pa <= cap_w) best = std::max(best, ra);
    for (const auto& [rb, pb] : settings) {
      if (pa <= cap_w && pb > cap_w) {  // f of the time at b: f pb + (1 - f) pa = cap
        const double share = (cap_w - pa) / (pb - pa);
        best = std::max(best, share * rb + (1 - share) * ra);
      }
    }
  }
  return best;
}

TEST(PowerCapTest, MatchesTheBestMixOfEveryAssignment) {
  std::mt19937 rng(7);
  std::uniform_real_distribution<double> slow(1, 1.4), unit(0, 1);
  for (int trial = 0; trial < 300; ++trial) {
    const Frontier f = RandomFrontier(rng, 1 + trial % 4);
    std::vector<double> slowdowns(1 + trial % 3, 1.0);
    if (trial % 2) slowdowns[trial % slowdowns.size()] = slow(rng);
    const double blocking_w = 200 * unit(rng);
    const std::vector<JobSetting> settings = CapSettings(f, blocking_w, slowdowns);
    double lo = 1e18, hi = 0;
    for (const JobSetting& s : settings) {
      lo = std::min(lo, s.power_w);
      hi = std::max(hi, s.power_w);
    }
    const double cap_w = lo + (hi - lo) * unit(rng) * 1.1;
    const CappedPlan plan = PlanUnderPowerCap(settings, {cap_w, 0});
    ASSERT_TRUE(plan.feasible);
    EXPECT_LE(plan.PowerW(), cap_w * (1 + 1e-9));
    EXPECT_NEAR(1 / plan.IterationTimeS(), BestRate(f, blocking_w, slowdowns, cap_w), 1e-9 / f.plans[0].time_s)
        << "trial " << trial;
    for (const JobSetting& s : plan.settings) ASSERT_EQ(s.plan_index.size(), slowdowns.size());
  }
}

TEST(PowerCapTest, NoCapRunsTheFastestAndAnImpossibleCapTheLeastPower) {
  Frontier f;
  f.plans = {{{}, 1.0, 1000, 0}, {{}, 1.2, 800, 0}, {{}, 1.5, 700, 0}};
  const std::vector<JobSetting> settings = CapSettings(f, 50, {1, 1});
  ASSERT_EQ(settings.size(), 3u);
  EXPECT_EQ(settings.back().plan_index, (std::vector<int>{0, 0}));
  EXPECT_DOUBLE_EQ(settings.back().power_w, 2000);
  CappedPlan free = PlanUnderPowerCap(settings, {});
  EXPECT_DOUBLE_EQ(free.IterationTimeS(), 1.0);
  CappedPlan tight = PlanUnderPowerCap(settings, {100, 0});
  EXPECT_FALSE(tight.feasible);
  EXPECT_DOUBLE_EQ(tight.IterationTimeS(), 1.5);
  // Halfway between the two fastest settings' power: a mix, exactly at the cap.
  CappedPlan half = PlanUnderPowerCap(settings, {(2000 + 1600.0 / 1.2) / 2, 0});
  EXPECT_TRUE(half.feasible);
  EXPECT_NEAR(half.PowerW(), (2000 + 1600.0 / 1.2) / 2, 1e-9);
  EXPECT_NEAR(half.mix.fast_share, 0.5, 1e-12);
  // A peak cap below the fastest setting's power leaves it out even without an average cap.
  CappedPlan peak = PlanUnderPowerCap(settings, {0, 1900});
  EXPECT_DOUBLE_EQ(peak.IterationTimeS(), 1.2);
  // Measured power 10% above the prediction: the same cap buys less.
  CappedPlan corrected = PlanUnderPowerCap(settings, {1600, 0}, 1.1);
  EXPECT_NEAR(corrected.PowerW(), 1600, 1e-9);
  EXPECT_GT(corrected.IterationTimeS(), PlanUnderPowerCap(settings, {1600, 0}).IterationTimeS());
}

TEST(PowerCapTest, AStragglersPeersSlowDownAndFreePower) {
  Frontier f;
  f.plans = {{{}, 1.0, 1000, 0}, {{}, 1.2, 800, 0}, {{}, 1.5, 700, 0}};
  // Pipeline 1 straggles 1.2x: the fastest setting has pipeline 0 on plan 1 (1.2 s), not waiting on plan 0.
  const std::vector<JobSetting> settings = CapSettings(f, 50, {1, 1.2});
  EXPECT_EQ(settings.back().plan_index, (std::vector<int>{1, 0}));
  EXPECT_DOUBLE_EQ(settings.back().iteration_time_s, 1.2);
}

}  // namespace
}  // namespace perseus::control
