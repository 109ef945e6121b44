#include "carbon/blend_forecaster.h"

#include <gtest/gtest.h>

#include <cmath>
#include <fstream>
#include <map>
#include <random>

#include "carbon/eia_trace_for_test.h"
#include "carbon/ensemble_forecaster.h"
#include "carbon/forecast_evaluation.h"
#include "carbon/rls_regression.h"

namespace perseus::carbon {
namespace {

TEST(Forecasters, BaselinesDoWhatTheySay) {
  PersistenceForecaster p(1, 0);
  TimeOfDayMeanForecaster tod(1, 0, 2);
  for (int t = 0; t < 48; ++t) {
    p.Observe(t % 24 == 1 ? 100 + t : 0);
    tod.Observe(t % 24 == 1 ? 100 + t : 0);
  }
  EXPECT_DOUBLE_EQ(p.Predict(), 0);
  // Next window is hour 0 of day 3: mean of hours 0 of days 1 and 2 = 0. Horizon 2 -> hour 1.
  EXPECT_DOUBLE_EQ(tod.Predict(), 0);
  TimeOfDayMeanForecaster tod2(2, 0, 2);
  for (int t = 0; t < 48; ++t) tod2.Observe(t % 24 == 1 ? 100 + t : 0);
  EXPECT_DOUBLE_EQ(tod2.Predict(), 0.5 * (101 + 125));
}

TEST(Forecasters, OursLearnsADailyCycle) {
  IntensityTrace trace;
  for (int t = 0; t < 24 * 60; ++t) trace.carbon_g_per_kwh.push_back(300 + 100 * std::sin(2 * M_PI * t / 24) + (t % 7));
  std::vector<ForecastScore> s = EvaluateForecasters(trace, 1, 24 * 14);
  ASSERT_EQ(s.size(), 4u);  // no fuel mix: no fuel-mix ensemble
  for (size_t k : {2u, 3u}) {
    EXPECT_LT(s[k].mae_g_per_kwh, s[0].mae_g_per_kwh) << s[k].name;
    EXPECT_LT(s[k].mae_g_per_kwh, s[1].mae_g_per_kwh) << s[k].name;
    EXPECT_GT(s[k].mape_percent, 0) << s[k].name;
  }
}

// Until it has two days of history the ensemble forecasts persistence: on
// a few hours of noise its models forecast nonsense (0 g/kWh, found by
// control's restart test), which a decision would plan a day around. After
// that its forecasts stay within what it has observed (on noise they would
// not: 0 and 2,120 g/kWh from values within 20-900).
TEST(Forecasters, TheEnsembleForecastsPersistenceUntilItHasLearned) {
  std::mt19937 rng(17);
  std::uniform_real_distribution<double> u(20, 900);
  int outside = 0, persistence = 0, repeated = 0, learned = 0;
  for (int trial = 0; trial < 20; ++trial) {
    EnsembleForecaster f(1, trial);
    double least = 1e9, most = 0, last_forecast = -1;
    for (int h = 0; h < 24 * 7; ++h) {
      const double v = u(rng);
      f.Observe(v);
      least = std::min(least, v), most = std::max(most, v);
      if (h + 1 < EnsembleForecaster::kLearningHours) {
        ASSERT_EQ(f.Predict(), v) << "trial " << trial << " hour " << h;
        continue;
      }
      ++learned;
      outside += f.Predict() < least || f.Predict() > most;
      persistence += f.Predict() == v;
      repeated += f.Predict() == last_forecast;
      last_forecast = f.Predict();
    }
  }
  EXPECT_EQ(outside, 0);
  EXPECT_LT(persistence, learned / 10);  // the models forecast from then on,
  EXPECT_LT(repeated, learned / 10);     // not a bound stuck at one value
}

// Against brute force: with forgetting 1 and a negligible prior, RLS gives
// the least-squares weights, here those that generated the data exactly.
TEST(RlsRegression, FindsTheLeastSquaresWeights) {
  std::mt19937 rng(7);
  std::normal_distribution<double> noise(0, 1);
  const std::vector<double> truth = {3, -1.5, 0.25};
  RlsRegression rls(3, 1.0, 1e6);
  for (int k = 0; k < 200; ++k) {
    const std::vector<double> x = {1, noise(rng), noise(rng)};
    rls.Update(x, truth[0] * x[0] + truth[1] * x[1] + truth[2] * x[2]);
  }
  for (int i = 0; i < 3; ++i) EXPECT_NEAR(rls.weights()[i], truth[i], 1e-6) << i;
  EXPECT_NEAR(rls.Predict({1, 2, 4}), 3 - 3 + 1, 1e-6);
}

// Forgetting follows a change: after the relation flips, recent examples win.
TEST(RlsRegression, ForgettingFollowsAChange) {
  RlsRegression rls(1, 0.95, 1.0);
  for (int k = 0; k < 300; ++k) rls.Update({1}, 10);
  for (int k = 0; k < 300; ++k) rls.Update({1}, -10);
  EXPECT_NEAR(rls.weights()[0], -10, 1e-3);
}

// A series whose hourly steps carry on in the morning and reverse in the
// afternoon (an AR(1) of the steps with coefficient +0.9 for hours 0-11 and
// -0.9 for 12-23): one set of weights averages the two to about 0; one per
// hour of day learns each.
TEST(Forecasters, PerHourOfDayWeightsLearnHourlyBehaviour) {
  std::mt19937 rng(11);
  std::normal_distribution<double> noise(0, 5);
  BlendForecaster global(1, 0), per_hour(1, 0, {0.99, true, false});
  double y = 20000, step = 0, err_global = 0, err_per_hour = 0;
  for (int t = 0; t < 24 * 200; ++t) {
    step = (t % 24 < 12 ? 0.9 : -0.9) * step + noise(rng);
    y += step;
    if (t > 24 * 100) {
      err_global += std::fabs(global.Predict() - y);
      err_per_hour += std::fabs(per_hour.Predict() - y);
    }
    global.Observe(y);
    per_hour.Observe(y);
  }
  EXPECT_LT(err_per_hour, 0.7 * err_global) << err_per_hour << " vs " << err_global;
  EXPECT_NE(per_hour.Name(), global.Name());
}

// Demand, and with it the intensity, drops at the weekend (UTC Saturday and
// Sunday here) by more than the day-to-day noise: a day ahead, a forecaster
// that knows the calendar learns the drop and the rise on Monday; one told
// the series starts on a Tuesday (its "weekend" is Friday and Saturday) cannot.
TEST(Forecasters, TheWeekendFeatureLearnsTheWeeklyDrop) {
  std::mt19937 rng(5);
  std::normal_distribution<double> day_noise(0, 20);
  constexpr int kHorizonH = 24, kDays = 200;
  BlendForecaster right(kHorizonH, 0), wrong(kHorizonH, 24);  // first window: Monday 00:00; "Tuesday"
  std::vector<double> y;
  for (int d = 0; d < kDays; ++d) {
    const double level = (d % 7 >= 5 ? 250 : 400) + day_noise(rng);
    for (int hod = 0; hod < 24; ++hod) y.push_back(level + 50 * std::sin(2 * M_PI * hod / 24));
  }
  double err_right = 0, err_wrong = 0;
  for (int t = 0; t + kHorizonH < static_cast<int>(y.size()); ++t) {
    right.Observe(y[t]);
    wrong.Observe(y[t]);
    if (t < 24 * 60) continue;
    err_right += std::fabs(right.Predict() - y[t + kHorizonH]);
    err_wrong += std::fabs(wrong.Predict() - y[t + kHorizonH]);
  }
  EXPECT_LT(err_right, 0.8 * err_wrong) << err_right << " vs " << err_wrong;
}

// The intensity of a forecast mix: with every fuel forecast exactly (a
// repeating day), the fuel-mix ensemble's forecast is the mix's intensity.
TEST(Forecasters, TheFuelMixEnsembleForecastsTheMixIntensity) {
  const std::vector<double> factors = {10, 500};
  EnsembleForecaster e(1, 0, factors);
  EXPECT_EQ(e.members(), 6);
  auto day_mw = [](int t) { return std::vector<double>{t % 24 < 12 ? 300.0 : 100.0, 200.0}; };
  for (int t = 0; t < 24 * 60; ++t) {
    const std::vector<double> mw = day_mw(t);
    e.ObserveWithMix(MixIntensity(mw, factors), mw);
  }
  const int next = 24 * 60;
  EXPECT_NEAR(e.Predict(), MixIntensity(day_mw(next), factors), 1.0);
  EnsembleForecaster copy = e;  // the runtime copies it to add a provisional hour
  EXPECT_DOUBLE_EQ(copy.Predict(), e.Predict());
  EXPECT_EQ(EnsembleForecaster(1, 0).members(), 2);
}

TEST(Forecasters, MixIntensityIsTheGenerationWeightedFactor) {
  EXPECT_DOUBLE_EQ(MixIntensity({100, 300}, {10, 500}), (100 * 10 + 300 * 500) / 400.0);
  EXPECT_TRUE(std::isnan(MixIntensity({0, 0}, {10, 500})));
}

// The requirement: ours beats persistence and the time-of-day mean on the
// whole of 2022 for both grids, 1 hour ahead.
TEST(Forecasters, OursBeatsBothBaselinesOnCaisoAndNyiso2022) {
  for (const char* region : {"CISO", "NYIS"}) {
    std::optional<IntensityTrace> trace = SharedEiaTrace(region);
    if (!trace) GTEST_SKIP() << "shared data absent or unreadable: " << region;
    std::vector<ForecastScore> s = EvaluateForecasters(*trace);
    ASSERT_EQ(s.size(), 5u);
    for (size_t k = 2; k < s.size(); ++k) {
      EXPECT_GT(s[k].origins, 8700);
      EXPECT_LT(s[k].mae_g_per_kwh, s[0].mae_g_per_kwh) << region << " " << s[k].name << " vs persistence";
      EXPECT_LT(s[k].mae_g_per_kwh, s[1].mae_g_per_kwh) << region << " " << s[k].name << " vs time-of-day mean";
    }
  }
}

// Issue 14's targets with its protocol (rolling origin after 30 days of
// training), which docs/carbon.md reports: at most 6.80 (CAISO) and 4.58
// (NYISO) gCO2/kWh MAE 1 hour ahead, 23.30 and 14.61 24 hours ahead; and
// each ensemble beats the RLS blend at 1 and 24 hours.
TEST(Forecasters, TheFuelMixEnsembleMeetsTheTargets) {
  const std::map<std::string, std::map<int, double>> targets = {{"CISO", {{1, 6.80}, {24, 23.30}}},
                                                                {"NYIS", {{1, 4.58}, {24, 14.61}}}};
  for (const auto& [region, by_horizon] : targets) {
    std::optional<IntensityTrace> trace = SharedEiaTrace(region);
    if (!trace) GTEST_SKIP() << "shared data absent or unreadable: " << region;
    for (const auto& [h, target] : by_horizon) {
      std::vector<ForecastScore> s = EvaluateForecasters(*trace, h, kForecastWarmupH);
      ASSERT_EQ(s.size(), 5u);
      EXPECT_EQ(s[4].name, "ours (ensemble, fuel mix)");
      EXPECT_LT(s[3].mae_g_per_kwh, s[2].mae_g_per_kwh) << region << " " << h << " h";
      EXPECT_LT(s[4].mae_g_per_kwh, s[3].mae_g_per_kwh) << region << " " << h << " h";
      EXPECT_LE(s[4].mae_g_per_kwh, target) << region << " " << h << " h";
    }
  }
}

}  // namespace
}  // namespace perseus::carbon
