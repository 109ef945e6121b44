// Tests of doctor_estimates.h on synthetic samples: a counter that steps every
// 100 ms polled every 1 ms, a continuous counter, a stuck one, one that goes
// backwards, jittered polling, and clock settle times.
#include "cli/doctor_estimates.h"

#include <gtest/gtest.h>

#include <cmath>
#include <random>

#include "common/stats.h"

namespace perseus::cli {
namespace {

// A counter at `power_w` that publishes every `period_s` (0: continuously),
// read every `poll_s` (plus up to `jitter_s` of uniform delay) for `duration_s`.
// The first publication is at `phase_s`.
std::vector<EnergySample> Poll(double power_w, double period_s, double poll_s, double duration_s,
                               double phase_s = 0.037, double jitter_s = 0, unsigned seed = 1) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<double> jitter(0, jitter_s);
  std::vector<EnergySample> out;
  for (double t = 0; t < duration_s; t += poll_s + jitter(rng)) {
    double published_t = t;
    if (period_s > 0) published_t = phase_s + std::floor((t - phase_s) / period_s) * period_s;
    // NVML reports whole millijoules, from an arbitrary origin.
    out.push_back({t, 1000 + std::floor(power_w * published_t * 1000) / 1000});
  }
  return out;
}

TEST(EstimateCounterTest, SteppedCounterGivesItsPeriodAndStep) {
  Result<CounterEstimate> e = EstimateCounter(Poll(400, 0.1, 0.001, 1.0));
  ASSERT_TRUE(e.ok()) << e.status().ToString();
  EXPECT_EQ(e->changes, 10);  // at 0.037, 0.137, ..., 0.937
  EXPECT_EQ(e->intervals, 9);
  EXPECT_NEAR(e->median_period_s, 0.1, 0.0011);
  EXPECT_NEAR(e->min_period_s, 0.1, 0.0011);
  EXPECT_NEAR(e->max_period_s, 0.1, 0.0011);
  EXPECT_NEAR(e->resolution_j, 40, 0.002);  // 400 W x 100 ms
  EXPECT_NEAR(e->mean_power_w, 400, 5);
  EXPECT_NEAR(e->median_poll_s, 0.001, 1e-9);
  EXPECT_FALSE(e->continuous);
}

TEST(EstimateCounterTest, JitteredPollingKeepsTheMedianPeriod) {
  Result<CounterEstimate> e = EstimateCounter(Poll(250, 0.05, 0.001, 2.0, 0.011, 0.002, 7));
  ASSERT_TRUE(e.ok()) << e.status().ToString();
  EXPECT_NEAR(e->median_period_s, 0.05, 0.003);
  EXPECT_GE(e->min_period_s, 0.05 - 0.0031);
  EXPECT_LE(e->max_period_s, 0.05 + 0.0031);
  EXPECT_NEAR(e->mean_power_w, 250, 10);
  EXPECT_FALSE(e->continuous);
}

TEST(EstimateCounterTest, ContinuousCounterIsFlagged) {
  Result<CounterEstimate> e = EstimateCounter(Poll(400, 0, 0.001, 0.5));
  ASSERT_TRUE(e.ok()) << e.status().ToString();
  EXPECT_TRUE(e->continuous);
  EXPECT_NEAR(e->median_period_s, 0.001, 1e-6);
  EXPECT_NEAR(e->resolution_j, 0.4, 0.002);
  EXPECT_NEAR(e->mean_power_w, 400, 2);
}

TEST(EstimateCounterTest, StuckCounterHasNoPeriod) {
  std::vector<EnergySample> s = {{0, 5}, {0.001, 5}, {0.002, 5}};
  Result<CounterEstimate> e = EstimateCounter(s);
  ASSERT_TRUE(e.ok());
  EXPECT_EQ(e->changes, 0);
  EXPECT_EQ(e->intervals, 0);
  EXPECT_EQ(e->median_period_s, 0);
  EXPECT_EQ(e->resolution_j, 0);
  EXPECT_EQ(e->mean_power_w, 0);
  EXPECT_FALSE(e->continuous);
}

TEST(EstimateCounterTest, OneChangeGivesAStepButNoPeriod) {
  std::vector<EnergySample> s = {{0, 5}, {0.001, 5}, {0.002, 9}, {0.003, 9}};
  Result<CounterEstimate> e = EstimateCounter(s);
  ASSERT_TRUE(e.ok());
  EXPECT_EQ(e->changes, 1);
  EXPECT_EQ(e->intervals, 0);
  EXPECT_DOUBLE_EQ(e->resolution_j, 4);
}

TEST(EstimateCounterTest, RefusesBadInput) {
  EXPECT_EQ(EstimateCounter({{0, 1}}).status().message(), "need at least 2 energy readings, got 1");
  EXPECT_EQ(EstimateCounter({{0, 1}, {0, 2}}).status().message(),
            "energy readings must be in increasing time order (reading 1)");
  EXPECT_EQ(EstimateCounter({{0, 13}, {0.31, 12.5}}).status().message(),
            "the energy counter went backwards: 12.500 J at 0.310 s after 13.000 J");
}

TEST(FindClockSettleTimeTest, FirstReadingAtTheTarget) {
  std::vector<ClockSample> s = {{1.000, 1410}, {1.001, 1410}, {1.004, 1005}, {1.005, 1005}};
  std::optional<double> t = FindClockSettleTime(s, 1.0005, 1005);
  ASSERT_TRUE(t.has_value());
  EXPECT_NEAR(*t, 0.0035, 1e-12);
}

TEST(FindClockSettleTimeTest, ReadingsBeforeTheCallDoNotCount) {
  std::vector<ClockSample> s = {{0.5, 1005}, {1.001, 1410}, {1.002, 1410}};
  EXPECT_FALSE(FindClockSettleTime(s, 1.0, 1005).has_value());
  EXPECT_FALSE(FindClockSettleTime({}, 0, 1005).has_value());
}

TEST(MedianTest, OddAndEven) {
  EXPECT_DOUBLE_EQ(Median({3, 1, 2}), 2);
  EXPECT_DOUBLE_EQ(Median({4, 1, 3, 2}), 2.5);
  EXPECT_DOUBLE_EQ(Median({7}), 7);
}

}  // namespace
}  // namespace perseus::cli
