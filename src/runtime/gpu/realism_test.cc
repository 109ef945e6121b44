// Tests of GpuRealism's text form and of CoarseEnergyCounter against
// hand-computed power traces.
#include "runtime/gpu/realism.h"

#include <gtest/gtest.h>

#include <cmath>
#include <random>

namespace perseus::runtime {
namespace {

// Step times are sums of periods, so a boundary such as 0.3 s may land an ulp
// after the literal; traces run kPast beyond a boundary to include its step.
constexpr double kPast = 1e-12;

// Feeds `counter` the power trace {(end_s, power_w), ...} in order.
void Feed(CoarseEnergyCounter& counter, const std::vector<std::pair<double, double>>& trace) {
  for (const auto& [end_s, power_w] : trace) counter.Advance(end_s, power_w);
}

TEST(CoarseEnergyCounterTest, StepsOnlyEveryPeriodAndStaysFlatBetween) {
  CoarseEnergyCounter counter(0.1, 0.25, 0.0);
  double last_reported_j = 0;
  int changes = 0;
  for (int ms = 1; ms <= 1000; ++ms) {
    const double t = ms * 1e-3 + kPast;
    counter.Advance(t, 100.0);
    if (counter.ReportedEnergyJ() != last_reported_j) {
      ++changes;
      EXPECT_EQ(ms % 100, 0) << "changed off a step at t=" << t;
      EXPECT_NEAR(counter.ReportedEnergyJ() - last_reported_j, 10.0, 1e-9);  // 100 W x 0.1 s
    }
    last_reported_j = counter.ReportedEnergyJ();
    EXPECT_NEAR(counter.TrueEnergyJ(), 100.0 * t, 1e-9);
  }
  EXPECT_EQ(changes, 10);
  std::vector<CoarseEnergyCounter::Update> steps = counter.UpdatesAfter(-1);
  ASSERT_EQ(steps.size(), 10u);
  for (size_t k = 0; k < steps.size(); ++k) {
    EXPECT_NEAR(steps[k].time_s, 0.1 * static_cast<double>(k + 1), 1e-9);
    EXPECT_NEAR(steps[k].energy_j, 10.0 * static_cast<double>(k + 1), 1e-9);
  }
  EXPECT_EQ(counter.UpdatesAfter(0.55).size(), 5u);
  EXPECT_EQ(counter.UpdatesAfter(0.55).front().time_s, steps[5].time_s);
  EXPECT_TRUE(counter.UpdatesAfter(2.0).empty());
}

TEST(CoarseEnergyCounterTest, StepIsPeriodTimesMeanPowerOverTheSampledWindow) {
  // Period 100 ms, sampled over its last 25 ms: [75, 100) ms, then [175, 200) ms.
  CoarseEnergyCounter counter(0.1, 0.25, 0.0);
  // Period 1: 100 W until 80 ms, then 300 W. Sampled mean (5 ms x 100 W +
  // 20 ms x 300 W) / 25 ms = 260 W, so the step is 26 J; the truth is 14 J.
  Feed(counter, {{0.08, 100.0}, {0.1 + kPast, 300.0}});
  EXPECT_NEAR(counter.ReportedEnergyJ(), 26.0, 1e-9);
  EXPECT_NEAR(counter.TrueEnergyJ(), 14.0, 1e-9);
  // Period 2: a 1000 W burst in [120, 150) ms that the window misses
  // entirely: the step sees only 100 W (10 J); the truth is 7 + 30 = 37 J.
  Feed(counter, {{0.12, 100.0}, {0.15, 1000.0}, {0.2 + kPast, 100.0}});
  EXPECT_NEAR(counter.ReportedEnergyJ(), 26.0 + 10.0, 1e-9);
  EXPECT_NEAR(counter.TrueEnergyJ(), 14.0 + 37.0, 1e-9);
  // Period 3: the burst [180, 190) ms falls inside the window: mean
  // (15 ms x 100 W + 10 ms x 1000 W) / 25 ms = 460 W, a 46 J step; truth 19 J.
  Feed(counter, {{0.28, 100.0}, {0.29, 1000.0}, {0.3 + kPast, 100.0}});
  EXPECT_NEAR(counter.ReportedEnergyJ(), 36.0 + 46.0, 1e-9);
  EXPECT_NEAR(counter.TrueEnergyJ(), 51.0 + 19.0, 1e-9);
  // Mid-period: the counter holds while the truth moves.
  counter.Advance(0.35, 200.0);
  EXPECT_NEAR(counter.ReportedEnergyJ(), 82.0, 1e-9);
  EXPECT_NEAR(counter.TrueEnergyJ(), 80.0, 1e-9);
}

TEST(CoarseEnergyCounterTest, AShortFirstPeriodIsSampledOverWhatItHas) {
  // First step at 30 ms: the period [0, 30) ms is sampled over [5, 30) ms.
  CoarseEnergyCounter counter(0.1, 0.25, 0.0, 0.03);
  Feed(counter, {{0.005, 1000.0}, {0.03 + kPast, 200.0}});
  EXPECT_NEAR(counter.ReportedEnergyJ(), 0.03 * 200.0, 1e-9);
  EXPECT_NEAR(counter.TrueEnergyJ(), 5.0 + 5.0, 1e-9);
  counter.Advance(0.25, 200.0);
  std::vector<CoarseEnergyCounter::Update> steps = counter.UpdatesAfter(-1);
  ASSERT_EQ(steps.size(), 3u);
  EXPECT_NEAR(steps[1].time_s, 0.13, 1e-9);
  EXPECT_NEAR(steps[2].time_s, 0.23, 1e-9);
  EXPECT_NEAR(steps[2].energy_j, 6.0 + 2 * 20.0, 1e-9);
}

TEST(CoarseEnergyCounterTest, OverALongRunTheCounterIsUnbiased) {
  // Power changes every 1-50 ms between 100 and 400 W, unsynchronised with
  // the counter. Each run lasts 100 s (1,000 steps).
  std::mt19937_64 rng(42);
  std::uniform_real_distribution<double> length_s(0.001, 0.05), power_w(100.0, 400.0);
  std::vector<double> errors;
  for (int run = 0; run < 20; ++run) {
    CoarseEnergyCounter counter(0.1, 0.25, 0.0);
    // Ends just past the 1,000th step, so the counter has reported it all.
    const double end_s = 100.0 + 1e-9;
    double t = 0;
    while (t < end_s) {
      t = std::min(end_s, t + length_s(rng));
      counter.Advance(t, power_w(rng));
    }
    ASSERT_EQ(counter.UpdatesAfter(-1).size(), 1000u);
    errors.push_back(counter.ReportedEnergyJ() / counter.TrueEnergyJ() - 1.0);
  }
  double mean = 0, sq = 0;
  for (double e : errors) mean += e / static_cast<double>(errors.size());
  for (double e : errors) sq += (e - mean) * (e - mean) / static_cast<double>(errors.size() - 1);
  const double sd = std::sqrt(sq);
  // One step errs by tens of percent; over 1,000 unsynchronised steps a run
  // errs by well under 1%, and the runs' errors average to ~0.
  EXPECT_LT(sd, 0.01);
  EXPECT_LT(std::abs(mean), 4 * sd / std::sqrt(static_cast<double>(errors.size())));
  for (double e : errors) EXPECT_LT(std::abs(e), 0.02);
}

TEST(CoarseEnergyCounterTest, PeriodZeroIsContinuousAndExact) {
  CoarseEnergyCounter counter(0, 0.25, 5.0);
  Feed(counter, {{5.5, 100.0}, {5.75, 300.0}});
  EXPECT_DOUBLE_EQ(counter.ReportedEnergyJ(), 50.0 + 75.0);
  EXPECT_DOUBLE_EQ(counter.TrueEnergyJ(), 125.0);
  EXPECT_TRUE(counter.UpdatesAfter(0).empty());
  counter.Advance(5.0, 1000.0);  // the past: nothing
  EXPECT_DOUBLE_EQ(counter.TrueEnergyJ(), 125.0);
}

TEST(CoarseEnergyCounterTest, ResumingFromItsStateCountsTheSame) {
  std::mt19937_64 rng(7);
  std::uniform_real_distribution<double> length_s(0.001, 0.08), power_w(50.0, 500.0);
  CoarseEnergyCounter whole(0.1, 0.25, 1.0);
  CoarseEnergyCounter::State state = CoarseEnergyCounter(0.1, 0.25, 1.0).state();
  double t = 1.0;
  for (int i = 0; i < 500; ++i) {
    t += length_s(rng);
    const double p = power_w(rng);
    whole.Advance(t, p);
    CoarseEnergyCounter piece(0.1, 0.25, state);  // as the fake NVML does, per call
    piece.Advance(t, p);
    state = piece.state();
  }
  EXPECT_NEAR(state.reported_energy_j, whole.ReportedEnergyJ(), 1e-9 * whole.TrueEnergyJ());
  EXPECT_NEAR(state.true_energy_j, whole.TrueEnergyJ(), 1e-9 * whole.TrueEnergyJ());
}

TEST(CoarseEnergyCounterTest, HistoryKeepsTheLastSteps) {
  CoarseEnergyCounter counter(0.1, 0.25, 0.0);
  counter.set_history_limit(5);
  counter.Advance(2.0 + kPast, 100.0);
  std::vector<CoarseEnergyCounter::Update> steps = counter.UpdatesAfter(-1);
  ASSERT_EQ(steps.size(), 5u);
  EXPECT_NEAR(steps.back().time_s, 2.0, 1e-9);
  EXPECT_NEAR(steps.front().time_s, 1.6, 1e-9);
}

TEST(GpuRealismTest, PresetsAndScaling) {
  GpuRealism ideal = IdealRealism();
  EXPECT_EQ(ideal.energy_period_s, 0);
  EXPECT_EQ(ideal.clock_latency_s, 0);
  EXPECT_EQ(ideal.time_jitter, 0);
  EXPECT_EQ(ideal.thermal_drift, 0);
  EXPECT_EQ(ideal.outlier_probability, 0);
  EXPECT_EQ(ideal.gpu_variation, 0);
  GpuRealism d = DefaultRealism();
  EXPECT_EQ(d.energy_period_s, 0.1);
  EXPECT_EQ(d.energy_sample_fraction, 0.25);
  EXPECT_EQ(d.clock_latency_s, 0.005);
  GpuRealism noisy = ScaleNoise(d, 2);
  EXPECT_DOUBLE_EQ(noisy.time_jitter, 0.02);
  EXPECT_DOUBLE_EQ(noisy.thermal_drift, 0.06);
  EXPECT_DOUBLE_EQ(noisy.outlier_probability, 0.004);
  EXPECT_DOUBLE_EQ(noisy.gpu_variation, 0.04);
  EXPECT_EQ(noisy.energy_period_s, d.energy_period_s);  // not noise
  EXPECT_EQ(ScaleNoise(d, 1000).outlier_probability, 1.0);
}

TEST(GpuRealismTest, ParsesPresetsAndKeys) {
  Result<GpuRealism> r = ParseGpuRealism("ideal");
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(FormatGpuRealism(*r), FormatGpuRealism(IdealRealism()));
  r = ParseGpuRealism("default");
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(FormatGpuRealism(*r), FormatGpuRealism(DefaultRealism()));
  r = ParseGpuRealism("default,noise=2");
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(FormatGpuRealism(*r), FormatGpuRealism(ScaleNoise(DefaultRealism(), 2)));

  r = ParseGpuRealism(
      "default, period_ms=50,sample=0.5,latency_ms=2,cap_mhz=1200,jitter=0.03,drift=0.05,tau_s=120,"
      "outliers=0.01,outlier_factor=3,variation=0.04,seed=7");
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_DOUBLE_EQ(r->energy_period_s, 0.05);
  EXPECT_EQ(r->energy_sample_fraction, 0.5);
  EXPECT_DOUBLE_EQ(r->clock_latency_s, 0.002);
  EXPECT_EQ(r->achieved_clock_cap_mhz, 1200);
  EXPECT_EQ(r->time_jitter, 0.03);
  EXPECT_EQ(r->thermal_drift, 0.05);
  EXPECT_EQ(r->thermal_tau_s, 120);
  EXPECT_EQ(r->outlier_probability, 0.01);
  EXPECT_EQ(r->outlier_factor, 3);
  EXPECT_EQ(r->gpu_variation, 0.04);
  EXPECT_EQ(r->seed, 7u);

  // Left to right: noise scales what came before it; no base means default.
  r = ParseGpuRealism("jitter=0.01,noise=3,variation=0.1");
  ASSERT_TRUE(r.ok());
  EXPECT_DOUBLE_EQ(r->time_jitter, 0.03);
  EXPECT_DOUBLE_EQ(r->thermal_drift, 0.09);
  EXPECT_EQ(r->gpu_variation, 0.1);
  EXPECT_EQ(r->energy_period_s, 0.1);
  r = ParseGpuRealism("ideal,period_ms=100");
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->energy_period_s, 0.1);
  EXPECT_EQ(r->time_jitter, 0);
}

TEST(GpuRealismTest, FormatReadsBack) {
  GpuRealism r = ScaleNoise(DefaultRealism(), 1.7);
  r.energy_period_s = 0.0333;
  r.achieved_clock_cap_mhz = 1305;
  r.seed = 18446744073709551615ull;
  Result<GpuRealism> back = ParseGpuRealism(FormatGpuRealism(r));
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  EXPECT_EQ(FormatGpuRealism(*back), FormatGpuRealism(r));
  EXPECT_EQ(back->energy_period_s, r.energy_period_s);
  EXPECT_EQ(back->time_jitter, r.time_jitter);
  EXPECT_EQ(back->seed, r.seed);
}

TEST(GpuRealismTest, ErrorsNameTheKey) {
  auto error = [](const std::string& text) {
    Result<GpuRealism> r = ParseGpuRealism(text);
    EXPECT_FALSE(r.ok()) << text;
    EXPECT_EQ(r.status().code(), Status::Code::kInvalidArgument) << text;
    return r.ok() ? std::string() : r.status().message();
  };
  EXPECT_EQ(error("default,perod_ms=50"),
            "realism: unknown key 'perod_ms' (expected noise, period_ms, sample, latency_ms, cap_mhz, jitter, drift, "
            "tau_s, outliers, outlier_factor, variation or seed)");
  EXPECT_EQ(error("default,period_ms=-1"), "realism: period_ms: expected >= 0, got -1");
  EXPECT_EQ(error("sample=0"), "realism: sample: expected a number in (0, 1], got 0");
  EXPECT_EQ(error("sample=1.5"), "realism: sample: expected a number in (0, 1], got 1.5");
  EXPECT_EQ(error("jitter=abc"), "realism: jitter: expected a number, got 'abc'");
  EXPECT_EQ(error("jitter="), "realism: jitter: expected a number, got ''");
  EXPECT_EQ(error("drift=nan"), "realism: drift: expected a number, got 'nan'");
  EXPECT_EQ(error("tau_s=0"), "realism: tau_s: expected > 0, got 0");
  EXPECT_EQ(error("outliers=2"), "realism: outliers: expected a number in [0, 1], got 2");
  EXPECT_EQ(error("outlier_factor=0.5"), "realism: outlier_factor: expected >= 1, got 0.5");
  EXPECT_EQ(error("noise=-1"), "realism: noise: expected >= 0, got -1");
  EXPECT_EQ(error("cap_mhz=1200.5"), "realism: cap_mhz: expected an integer in [0, 1000000], got '1200.5'");
  EXPECT_EQ(error("seed=-3"), "realism: seed: expected an integer in [0, 18446744073709551615], got '-3'");
  EXPECT_EQ(error("default,ideal"), "realism: 'ideal' must be the first item");
  EXPECT_EQ(error("defualt"), "realism: expected 'ideal', 'default' or key=value, got 'defualt'");
  EXPECT_EQ(error(""), "realism: expected 'ideal', 'default' or key=value, got ''");
  EXPECT_EQ(error("default,,noise=2"), "realism: expected 'ideal', 'default' or key=value, got ''");
}

}  // namespace
}  // namespace perseus::runtime
