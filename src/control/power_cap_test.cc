#include "control/power_cap.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <random>

#include "perseus/gpu_model.h"

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

// Below the frontier's least power: the minimum-energy plan with clocks held
// lower, on the real GPT-3 example (the frontier ends at about 67% of all-max power).
TEST(PowerCapTest, ClockCeilingsReachBelowTheMinimumEnergyPlansPower) {
  Result<Example> ex = FindExample("gpt3-175b-a100");
  ASSERT_TRUE(ex.ok());
  Result<Problem> problem = BuildProblem(ex->profile, ex->spec);
  ASSERT_TRUE(problem.ok());
  Result<Frontier> f = SolveFrontier(*problem, FrontierOptions{});
  ASSERT_TRUE(f.ok());
  const std::vector<CeilingPlan> ceilings = CeilingPlans(*problem, *f);
  ASSERT_GT(ceilings.size(), 3u);
  for (size_t k = 0; k < ceilings.size(); ++k) {
    // Each one is the min-energy plan held at its ceiling, exactly as EvaluatePlan costs it.
    const PlanChoice held = WithClockCeiling(*problem, f->plans.back().choice, ceilings[k].clock_ceiling_mhz);
    EXPECT_DOUBLE_EQ(EvaluatePlan(*problem, held).time_s, ceilings[k].time_s);
    for (size_t i = 0; i < held.size(); ++i) {
      const int mhz = problem->nodes[i].options[held[i]].freq_mhz;
      EXPECT_TRUE(mhz <= ceilings[k].clock_ceiling_mhz || held[i] + 1 == static_cast<int>(problem->nodes[i].options.size()));
    }
    EXPECT_GE(ceilings[k].time_s, f->plans.back().time_s);
    if (k > 0) {
      EXPECT_LT(ceilings[k].clock_ceiling_mhz, ceilings[k - 1].clock_ceiling_mhz);
    }
  }
  const double blocking_w = problem->pipeline_blocking_power_w();
  const std::vector<double> slowdowns(4, 1.0);
  const std::vector<JobSetting> frontier_only = CapSettings(*f, blocking_w, slowdowns);
  const std::vector<JobSetting> with_ceilings = CapSettings(*f, blocking_w, slowdowns, ceilings);
  const double least_w = frontier_only.front().power_w;
  EXPECT_LT(with_ceilings.front().power_w, 0.9 * least_w);
  EXPECT_GT(with_ceilings.front().clock_ceiling_mhz, 0);
  // The frontier's settings above its least power are unchanged.
  EXPECT_DOUBLE_EQ(with_ceilings.back().power_w, frontier_only.back().power_w);
  EXPECT_EQ(with_ceilings.back().clock_ceiling_mhz, 0);
  // A cap 5% under the frontier's least power: infeasible without ceilings, met with them.
  EXPECT_FALSE(PlanUnderPowerCap(frontier_only, {0.95 * least_w, 0}).feasible);
  const CappedPlan deep = PlanUnderPowerCap(with_ceilings, {0.95 * least_w, 0});
  EXPECT_TRUE(deep.feasible);
  EXPECT_NEAR(deep.PowerW(), 0.95 * least_w, 1e-6 * least_w);
  EXPECT_GT(deep.settings[deep.mix.slow].clock_ceiling_mhz, 0);
}

// A job's weighted rate at `power_w` (corrected watts) on its hull, as the
// mix of two neighbouring settings; -1 below its slowest setting.
double WeightedRate(const SharedCapJob& job, double power_w) {
  const double c = std::clamp(job.correction, 0.5, 2.0);
  if (power_w < job.hull.front().power_w * c - 1e-9) return -1;
  if (job.own_cap_w > 0) power_w = std::min(power_w, std::max(job.own_cap_w, job.hull.front().power_w * c));
  double rate = job.hull.front().rate;
  for (size_t k = 0; k + 1 < job.hull.size(); ++k) {
    const double a = job.hull[k].power_w * c, b = job.hull[k + 1].power_w * c;
    if (power_w <= a) break;
    const double share = std::min(1.0, (power_w - a) / (b - a));
    rate = job.hull[k].rate + share * (job.hull[k + 1].rate - job.hull[k].rate);
  }
  return job.weight * rate;
}

// Random concave hulls: rate rises with power, by less per watt each step.
SharedCapJob RandomJob(std::mt19937& rng) {
  std::uniform_real_distribution<double> u(0, 1);
  SharedCapJob job;
  double power_w = 100 + 400 * u(rng), rate = 0.6 + 0.2 * u(rng), slope = 0.002 + 0.002 * u(rng);
  const int points = 1 + static_cast<int>(4 * u(rng));
  for (int k = 0; k < points; ++k) {
    job.hull.push_back({k, rate, power_w});
    const double step_w = 20 + 200 * u(rng);
    power_w += step_w;
    rate += slope * step_w;
    slope *= 0.3 + 0.6 * u(rng);
  }
  job.correction = 0.8 + 0.4 * u(rng);
  job.weight = 1 + static_cast<int>(8 * u(rng));
  job.own_cap_w = u(rng) < 0.3 ? job.hull.front().power_w * job.correction * (1 + 0.5 * u(rng)) : 0;
  return job;
}

// Against a brute-force grid over every split of the cap among 2-3 jobs.
TEST(ShareCapTest, MatchesTheBestSplitFoundByBruteForce) {
  std::mt19937 rng(7);
  for (int trial = 0; trial < 300; ++trial) {
    std::vector<SharedCapJob> jobs;
    const int n = 2 + trial % 2;
    double floor_w = 0, top_w = 0;
    for (int j = 0; j < n; ++j) {
      jobs.push_back(RandomJob(rng));
      floor_w += jobs.back().hull.front().power_w * jobs.back().correction;
      top_w += jobs.back().hull.back().power_w * jobs.back().correction;
    }
    const double cap_w = floor_w + std::uniform_real_distribution<double>(-0.05, 1.1)(rng) * (top_w - floor_w);
    const CapShares shares = ShareCap(jobs, cap_w);
    ASSERT_EQ(shares.power_w.size(), jobs.size());
    if (cap_w < floor_w) {
      EXPECT_FALSE(shares.feasible);
      for (int j = 0; j < n; ++j) EXPECT_DOUBLE_EQ(shares.power_w[j], jobs[j].hull.front().power_w * jobs[j].correction);
      continue;
    }
    ASSERT_TRUE(shares.feasible);
    double total_w = 0, value = 0;
    for (int j = 0; j < n; ++j) {
      total_w += shares.power_w[j];
      value += WeightedRate(jobs[j], shares.power_w[j]);
      if (jobs[j].own_cap_w > 0) {
        EXPECT_LE(shares.power_w[j],
                  std::max(jobs[j].own_cap_w, jobs[j].hull.front().power_w * jobs[j].correction) + 1e-9);
      }
    }
    EXPECT_LE(total_w, cap_w * (1 + 1e-12));
    // Brute force: the first n-1 jobs' extra power on a grid, the last job the rest.
    const int steps = n == 2 ? 2000 : 200;
    double best = -1;
    const double room_w = cap_w - floor_w;
    std::vector<int> k(n - 1, 0);
    while (true) {
      double used_w = 0, v = 0;
      for (int j = 0; j + 1 < n; ++j) {
        const double w = room_w * k[j] / steps;
        used_w += w;
        v += WeightedRate(jobs[j], jobs[j].hull.front().power_w * jobs[j].correction + w);
      }
      if (used_w <= room_w + 1e-9) {
        v += WeightedRate(jobs[n - 1], jobs[n - 1].hull.front().power_w * jobs[n - 1].correction + room_w - used_w);
        best = std::max(best, v);
      }
      int j = 0;
      while (j < n - 1 && ++k[j] > steps) k[j++] = 0;
      if (j == n - 1) break;
    }
    EXPECT_GE(value, best - 1e-9 * std::abs(best)) << "trial " << trial;
  }
}

TEST(ShareCapTest, TheLargerJobGetsThePowerWhenTheyAreAlike) {
  SharedCapJob small{{{0, 0.8, 100}, {1, 1.0, 150}}, 1, 1, 0};
  SharedCapJob large = small;
  large.weight = 8;
  const CapShares shares = ShareCap({small, large}, 220);
  EXPECT_TRUE(shares.feasible);
  EXPECT_DOUBLE_EQ(shares.power_w[1], 120);  // all 20 W spare go to the job with 8x the GPUs
  EXPECT_DOUBLE_EQ(shares.power_w[0], 100);
  // Its own cap stops it; the rest goes to the other.
  large.own_cap_w = 110;
  const CapShares capped = ShareCap({small, large}, 220);
  EXPECT_DOUBLE_EQ(capped.power_w[1], 110);
  EXPECT_DOUBLE_EQ(capped.power_w[0], 110);
  // More than both can use: each at its fastest (or own cap).
  const CapShares plenty = ShareCap({small, large}, 1000);
  EXPECT_DOUBLE_EQ(plenty.power_w[0], 150);
  EXPECT_DOUBLE_EQ(plenty.power_w[1], 110);
}

}  // namespace
}  // namespace perseus::control
