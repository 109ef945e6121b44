#include "carbon/blend_forecaster.h"

#include <gtest/gtest.h>

#include <cmath>
#include <fstream>

#include "carbon/forecast_evaluation.h"

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
  ASSERT_EQ(s.size(), 3u);
  EXPECT_LT(s[2].mae_g_per_kwh, s[0].mae_g_per_kwh);
  EXPECT_LT(s[2].mae_g_per_kwh, s[1].mae_g_per_kwh);
}

// The requirement: ours beats persistence and the time-of-day mean on the
// whole of 2022 for both grids, 1 hour ahead.
TEST(Forecasters, OursBeatsBothBaselinesOnCaisoAndNyiso2022) {
  for (const char* region : {"CISO", "NYIS"}) {
    const std::string path = std::string(PERSEUS_SHARED_DATA) + "/carbon/eia2022_" + region + "_hourly_ci.csv";
    if (!std::ifstream(path)) GTEST_SKIP() << "shared data absent: " << path;
    Result<IntensityTrace> trace = LoadEiaTrace(path);
    ASSERT_TRUE(trace.ok()) << trace.status().ToString();
    std::vector<ForecastScore> s = EvaluateForecasters(*trace);
    ASSERT_EQ(s.size(), 3u);
    EXPECT_GT(s[2].origins, 8700);
    EXPECT_LT(s[2].mae_g_per_kwh, s[0].mae_g_per_kwh) << region << " vs persistence";
    EXPECT_LT(s[2].mae_g_per_kwh, s[1].mae_g_per_kwh) << region << " vs time-of-day mean";
  }
}

}  // namespace
}  // namespace perseus::carbon
