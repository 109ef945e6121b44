// Tests of SimulatedGpu with an injected (virtual) clock: energy accounting,
// and each realistic behaviour of GpuRealism.
#include "runtime/gpu/simulated_gpu.h"

#include <gtest/gtest.h>

#include <cmath>

namespace perseus::runtime {
namespace {

class SimulatedGpuTest : public ::testing::Test {
 protected:
  void SetUp() override {
    Result<std::unique_ptr<SimulatedGpu>> gpu = SimulatedGpu::Create("a100", 3, [this] { return now_s_; });
    ASSERT_TRUE(gpu.ok()) << gpu.status().ToString();
    gpu_ = std::move(gpu).value();
    waiting_w_ = gpu_->spec().blocking_power_w > 0 ? gpu_->spec().blocking_power_w : gpu_->spec().idle_power_w;
  }

  double Energy() {
    Result<double> e = gpu_->TotalEnergyJ();
    EXPECT_TRUE(e.ok());
    return e.ok() ? *e : -1;
  }

  double now_s_ = 100.0;
  std::unique_ptr<SimulatedGpu> gpu_;
  double waiting_w_ = 0;
  KernelWork work_{0.5, 0.8, 300.0};
};

TEST_F(SimulatedGpuTest, DescribesItself) {
  EXPECT_EQ(gpu_->Uuid(), "SIM-3-" + gpu_->Name());
  Result<std::vector<int>> clocks = gpu_->SupportedSmClocksMhz();
  ASSERT_TRUE(clocks.ok());
  EXPECT_EQ(*clocks, gpu_->spec().supported_sm_clocks_mhz);
  EXPECT_EQ(gpu_->CurrentSmClockMhz(), gpu_->spec().max_sm_clock_mhz);
  EXPECT_FALSE(SimulatedGpu::Create("tpu", 0, [] { return 0.0; }).ok());
}

TEST_F(SimulatedGpuTest, WaitingDrawsBlockingPower) {
  EXPECT_DOUBLE_EQ(Energy(), 0.0);
  now_s_ += 2.0;
  EXPECT_DOUBLE_EQ(Energy(), 2.0 * waiting_w_);
  Result<double> power = gpu_->PowerW();
  ASSERT_TRUE(power.ok());
  EXPECT_DOUBLE_EQ(*power, waiting_w_);
}

TEST_F(SimulatedGpuTest, ComputationUsesTheModelAtTheLockedClock) {
  ASSERT_TRUE(gpu_->SetSmClockMhz(1005).ok());
  OperatingPoint op = gpu_->Run(work_);
  OperatingPoint expected = ModelComputation(gpu_->spec(), work_, 1005);
  EXPECT_DOUBLE_EQ(op.time_s, expected.time_s);
  EXPECT_DOUBLE_EQ(op.power_w, expected.power_w);

  now_s_ += op.time_s / 2;  // halfway through
  EXPECT_NEAR(Energy(), expected.energy_j / 2, 1e-9);
  EXPECT_DOUBLE_EQ(*gpu_->PowerW(), expected.power_w);
  now_s_ += op.time_s / 2 + 1.0;  // done, then one second of waiting
  EXPECT_NEAR(Energy(), expected.energy_j + waiting_w_, 1e-9);
}

TEST_F(SimulatedGpuTest, BackToBackComputationsQueue) {
  OperatingPoint fast = gpu_->Run(work_);  // unlocked: the maximum clock
  EXPECT_DOUBLE_EQ(fast.time_s, ModelComputation(gpu_->spec(), work_, gpu_->spec().max_sm_clock_mhz).time_s);
  ASSERT_TRUE(gpu_->SetSmClockMhz(705).ok());
  OperatingPoint slow = gpu_->Run(work_);  // starts when the first one ends
  now_s_ += fast.time_s + slow.time_s + 0.25;
  EXPECT_NEAR(Energy(), fast.energy_j + slow.energy_j + 0.25 * waiting_w_, 1e-9);
  ASSERT_TRUE(gpu_->ResetSmClock().ok());
  EXPECT_EQ(gpu_->CurrentSmClockMhz(), gpu_->spec().max_sm_clock_mhz);
}

TEST_F(SimulatedGpuTest, LowerClockSavesEnergyOnComputeBoundWork) {
  OperatingPoint at_max = gpu_->Run(work_);
  ASSERT_TRUE(gpu_->SetSmClockMhz(1005).ok());
  OperatingPoint at_1005 = gpu_->Run(work_);
  EXPECT_GT(at_1005.time_s, at_max.time_s);
  EXPECT_LT(at_1005.energy_j, at_max.energy_j);
}

TEST_F(SimulatedGpuTest, RefusesUnsupportedClocks) {
  Status s = gpu_->SetSmClockMhz(1412);
  EXPECT_EQ(s.code(), Status::Code::kInvalidArgument);
  EXPECT_EQ(s.message(), "GPU 3: 1412 MHz is not a supported SM clock (nearest: 1410 MHz; supported: 210-1410 MHz)");
  EXPECT_EQ(gpu_->CurrentSmClockMhz(), gpu_->spec().max_sm_clock_mhz);
}


// Tests of the realistic behaviours, each switched on alone over IdealRealism
// unless the test says otherwise.
class RealisticSimulatedGpuTest : public ::testing::Test {
 protected:
  std::unique_ptr<SimulatedGpu> Make(const GpuRealism& realism, int index = 0) {
    Result<std::unique_ptr<SimulatedGpu>> gpu =
        SimulatedGpu::Create("a100", index, [this] { return now_s_; }, realism);
    EXPECT_TRUE(gpu.ok()) << gpu.status().ToString();
    return gpu.ok() ? std::move(gpu).value() : nullptr;
  }
  // Runs `work` and waits until it is done.
  OperatingPoint RunAndWait(SimulatedGpu& gpu, const KernelWork& work) {
    OperatingPoint op = gpu.Run(work);
    now_s_ += op.time_s;
    return op;
  }
  OperatingPoint Model(const SimulatedGpu& gpu, int clock_mhz) const {
    return ModelComputation(gpu.spec(), work_, clock_mhz);
  }

  double now_s_ = 50.0;
  KernelWork work_{0.01, 0.8, 300.0};
};

TEST_F(RealisticSimulatedGpuTest, DefaultCreateIsIdeal) {
  Result<std::unique_ptr<SimulatedGpu>> gpu = SimulatedGpu::Create("a100", 0, [this] { return now_s_; });
  ASSERT_TRUE(gpu.ok());
  EXPECT_EQ(FormatGpuRealism((*gpu)->realism()), FormatGpuRealism(IdealRealism()));
  EXPECT_EQ((*gpu)->power_factor(), 1.0);
  EXPECT_FALSE((*gpu)->CounterUpdatesAfter(0).has_value());  // continuous: poll TotalEnergyJ
  Result<int> achieved = (*gpu)->AchievedSmClockMhz();
  ASSERT_TRUE(achieved.ok());
  EXPECT_EQ(*achieved, 1410);
}

TEST_F(RealisticSimulatedGpuTest, ACoarseCounterStepsEveryPeriodAndTheTruthIsExact) {
  GpuRealism r = IdealRealism();
  r.energy_period_s = 0.1;
  r.energy_sample_fraction = 0.25;
  std::unique_ptr<SimulatedGpu> gpu = Make(r);
  const double waiting_w = gpu->spec().blocking_power_w > 0 ? gpu->spec().blocking_power_w : gpu->spec().idle_power_w;
  const double start_s = now_s_;
  std::vector<double> change_times_s;
  double last_j = *gpu->TotalEnergyJ();
  for (int ms = 1; ms <= 1000; ++ms) {
    now_s_ = start_s + ms * 1e-3;
    double e = *gpu->TotalEnergyJ();
    if (e != last_j) change_times_s.push_back(now_s_);
    last_j = e;
  }
  // Ten steps, 100 ms apart, at a random phase; flat in between.
  ASSERT_GE(change_times_s.size(), 9u);
  ASSERT_LE(change_times_s.size(), 10u);
  for (size_t i = 1; i < change_times_s.size(); ++i) {
    EXPECT_NEAR(change_times_s[i] - change_times_s[i - 1], 0.1, 1.5e-3);
  }
  EXPECT_NEAR(gpu->TrueEnergyJ(), 1.0 * waiting_w, 1e-9);
  std::optional<std::vector<GpuControl::CounterUpdate>> steps = gpu->CounterUpdatesAfter(start_s);
  ASSERT_TRUE(steps.has_value());
  ASSERT_EQ(steps->size(), change_times_s.size());
  for (size_t i = 0; i < steps->size(); ++i) {
    EXPECT_LE((*steps)[i].time_s, change_times_s[i]);
    EXPECT_GT((*steps)[i].time_s, change_times_s[i] - 1e-3 - 1e-9);
  }
  EXPECT_EQ(steps->back().energy_j, *gpu->TotalEnergyJ());
  EXPECT_EQ(gpu->CounterUpdatesAfter(steps->back().time_s)->size(), 0u);
}

TEST_F(RealisticSimulatedGpuTest, AComputationStartedRightAfterALockRunsAtTheOldClock) {
  GpuRealism r = IdealRealism();
  r.clock_latency_s = 0.005;
  std::unique_ptr<SimulatedGpu> gpu = Make(r);
  ASSERT_TRUE(gpu->SetSmClockMhz(1005).ok());
  EXPECT_EQ(gpu->CurrentSmClockMhz(), 1005);  // requested
  EXPECT_EQ(*gpu->AchievedSmClockMhz(), 1410);
  // Starts now: its first 5 ms (half its work at 1410) run at 1410, the rest at 1005.
  OperatingPoint early = RunAndWait(*gpu, work_);
  const OperatingPoint fast = Model(*gpu, 1410), slow = Model(*gpu, 1005);
  const double rest = 1 - 0.005 / fast.time_s;
  EXPECT_NEAR(early.time_s, 0.005 + rest * slow.time_s, 1e-12);
  EXPECT_NEAR(early.energy_j, fast.power_w * 0.005 + rest * slow.energy_j, 1e-9);
  // work_ at 1410 takes 10 ms > 5 ms: the next one starts after the latency.
  OperatingPoint late = RunAndWait(*gpu, work_);
  EXPECT_DOUBLE_EQ(late.time_s, Model(*gpu, 1005).time_s);
  EXPECT_EQ(*gpu->AchievedSmClockMhz(), 1005);

  // A computation queued behind one that outlasts the latency gets the new clock.
  ASSERT_TRUE(gpu->SetSmClockMhz(1200).ok());
  OperatingPoint first = gpu->Run(work_);
  OperatingPoint queued = gpu->Run(work_);
  EXPECT_NEAR(first.time_s, 0.005 + (1 - 0.005 / slow.time_s) * Model(*gpu, 1200).time_s, 1e-12);
  EXPECT_DOUBLE_EQ(queued.time_s, Model(*gpu, 1200).time_s);
  now_s_ += first.time_s + queued.time_s;

  // A second lock within the latency supersedes the first before it applies.
  ASSERT_TRUE(gpu->SetSmClockMhz(705).ok());
  now_s_ += 0.002;
  ASSERT_TRUE(gpu->ResetSmClock().ok());
  now_s_ += 0.004;  // 6 ms after the first lock, 4 ms after the reset
  EXPECT_EQ(*gpu->AchievedSmClockMhz(), 1200);
  now_s_ += 0.0015;
  EXPECT_EQ(*gpu->AchievedSmClockMhz(), 1410);
}

TEST_F(RealisticSimulatedGpuTest, TheAchievedClockNeverExceedsTheCap) {
  GpuRealism r = IdealRealism();
  r.achieved_clock_cap_mhz = 1203;  // not a supported clock: the GPU runs at 1200
  std::unique_ptr<SimulatedGpu> gpu = Make(r);
  EXPECT_EQ(*gpu->AchievedSmClockMhz(), 1200);
  ASSERT_TRUE(gpu->SetSmClockMhz(1410).ok());
  EXPECT_EQ(gpu->CurrentSmClockMhz(), 1410);
  EXPECT_EQ(*gpu->AchievedSmClockMhz(), 1200);
  EXPECT_DOUBLE_EQ(RunAndWait(*gpu, work_).time_s, Model(*gpu, 1200).time_s);
  ASSERT_TRUE(gpu->SetSmClockMhz(1005).ok());  // below the cap: as requested
  EXPECT_EQ(*gpu->AchievedSmClockMhz(), 1005);
  EXPECT_DOUBLE_EQ(RunAndWait(*gpu, work_).time_s, Model(*gpu, 1005).time_s);
  r.achieved_clock_cap_mhz = 100;  // below every clock: the lowest
  EXPECT_EQ(*Make(r)->AchievedSmClockMhz(), 210);
}

TEST_F(RealisticSimulatedGpuTest, JitterAndOutliersHaveTheirStatistics) {
  GpuRealism r = IdealRealism();
  r.time_jitter = 0.05;
  r.outlier_probability = 0.01;
  r.outlier_factor = 3.0;
  r.seed = 11;
  std::unique_ptr<SimulatedGpu> gpu = Make(r);
  const OperatingPoint model = Model(*gpu, 1410);
  const int n = 20000;
  int outliers = 0;
  double sum = 0, sum_sq = 0;
  int normal = 0;
  for (int i = 0; i < n; ++i) {
    OperatingPoint op = RunAndWait(*gpu, work_);
    EXPECT_DOUBLE_EQ(op.power_w, model.power_w);  // noise is on time
    EXPECT_NEAR(op.energy_j, op.power_w * op.time_s, 1e-12);
    const double ratio = op.time_s / model.time_s;
    if (ratio > 2.0) {
      ++outliers;
      continue;
    }
    ++normal;
    sum += ratio;
    sum_sq += ratio * ratio;
  }
  const double mean = sum / normal;
  const double sd = std::sqrt(sum_sq / normal - mean * mean);
  EXPECT_NEAR(mean, 1.0, 0.002);   // 4 standard errors: 4 x 0.05 / sqrt(20000)
  EXPECT_NEAR(sd, 0.05, 0.002);
  EXPECT_NEAR(static_cast<double>(outliers) / n, 0.01, 0.003);
}

TEST_F(RealisticSimulatedGpuTest, ThermalDriftRaisesBusyPowerOverMinutes) {
  GpuRealism r = IdealRealism();
  r.thermal_drift = 0.03;
  r.thermal_tau_s = 300;
  std::unique_ptr<SimulatedGpu> gpu = Make(r);
  const OperatingPoint model = Model(*gpu, 1410);
  EXPECT_DOUBLE_EQ(RunAndWait(*gpu, work_).power_w, model.power_w);  // cold
  double previous_w = model.power_w;
  for (double minutes : {1.0, 5.0, 10.0, 30.0}) {
    now_s_ = 50.0 + 60 * minutes;
    OperatingPoint op = RunAndWait(*gpu, work_);
    // The first computation started at 50 s; this one 60 x minutes later.
    const double expected = model.power_w * (1 + 0.03 * (1 - std::exp(-(now_s_ - op.time_s - 50.0) / 300.0)));
    EXPECT_NEAR(op.power_w, expected, 1e-9) << minutes;
    EXPECT_GT(op.power_w, previous_w);
    EXPECT_DOUBLE_EQ(op.time_s, model.time_s);  // time does not drift
    previous_w = op.power_w;
  }
  EXPECT_NEAR(previous_w / model.power_w, 1.03, 0.001);  // warm after 30 minutes
}

TEST_F(RealisticSimulatedGpuTest, GpusOfOneModelDifferBySeededVariation) {
  GpuRealism r = IdealRealism();
  r.gpu_variation = 0.02;
  std::vector<double> factors;
  for (int index = 0; index < 16; ++index) factors.push_back(Make(r, index)->power_factor());
  double mean = 0;
  for (double f : factors) mean += f / 16;
  for (size_t i = 1; i < factors.size(); ++i) EXPECT_NE(factors[i], factors[0]);
  for (double f : factors) EXPECT_NEAR(f, 1.0, 0.1);
  EXPECT_NEAR(mean, 1.0, 0.02);
  EXPECT_EQ(Make(r, 3)->power_factor(), factors[3]);  // same seed and index: same GPU
  r.seed = 2;
  EXPECT_NE(Make(r, 3)->power_factor(), factors[3]);

  // The factor scales busy and waiting power.
  r.seed = 1;
  std::unique_ptr<SimulatedGpu> gpu = Make(r, 5);
  const double f = gpu->power_factor();
  EXPECT_DOUBLE_EQ(gpu->Run(work_).power_w, Model(*gpu, 1410).power_w * f);
  now_s_ += 1.0;
  const double waiting_w = gpu->spec().blocking_power_w > 0 ? gpu->spec().blocking_power_w : gpu->spec().idle_power_w;
  EXPECT_DOUBLE_EQ(*gpu->PowerW(), waiting_w * f);
}

TEST_F(RealisticSimulatedGpuTest, RunOfACurvePicksThePointOfTheEffectiveClock) {
  const std::vector<FreqPoint> curve = {{1410, 0.010, 3.0}, {1200, 0.012, 3.0}, {1005, 0.015, 2.7}};
  GpuRealism r = IdealRealism();
  r.clock_latency_s = 0.005;
  std::unique_ptr<SimulatedGpu> gpu = Make(r);
  ASSERT_TRUE(gpu->SetSmClockMhz(1200).ok());
  // Within the latency: 5 ms at 1410 (half the work), the other half at 1200 (6 ms).
  OperatingPoint op = gpu->Run(curve);
  EXPECT_NEAR(op.time_s, 0.011, 1e-12);
  EXPECT_NEAR(op.energy_j, 300.0 * 0.005 + 0.5 * 3.0, 1e-12);
  now_s_ += 0.010;
  op = gpu->Run(curve);
  EXPECT_DOUBLE_EQ(op.time_s, 0.012);
  EXPECT_DOUBLE_EQ(op.power_w, 250.0);
  now_s_ += 0.012;
  ASSERT_TRUE(gpu->SetSmClockMhz(1110).ok());  // nearest: 1200 (90 MHz) over 1005 (105 MHz)
  now_s_ += 0.006;
  EXPECT_DOUBLE_EQ(gpu->Run(curve).time_s, 0.012);
  now_s_ += 0.012;
  ASSERT_TRUE(gpu->SetSmClockMhz(1095).ok());  // nearest: 1005 (90 MHz) over 1200 (105 MHz)
  now_s_ += 0.006;
  op = gpu->Run(curve);
  EXPECT_DOUBLE_EQ(op.time_s, 0.015);
  EXPECT_DOUBLE_EQ(op.energy_j, 2.7);
  now_s_ += 0.015 + 1.0;
  EXPECT_EQ(gpu->Run(std::vector<FreqPoint>{}).time_s, 0.0);
  // The energy counter saw every computation and the waiting in between.
  const double waiting_w = gpu->spec().blocking_power_w > 0 ? gpu->spec().blocking_power_w : gpu->spec().idle_power_w;
  EXPECT_NEAR(*gpu->TotalEnergyJ(), 3.0 + 3.0 + 3.0 + 2.7 + waiting_w * (0.005 + 0.006 + 1.0), 1e-9);
}

TEST_F(RealisticSimulatedGpuTest, TheSameSeedGivesTheSameRun) {
  auto trace = [this](uint64_t seed) {
    now_s_ = 50.0;
    GpuRealism r = ScaleNoise(DefaultRealism(), 4);
    r.seed = seed;
    std::unique_ptr<SimulatedGpu> gpu = Make(r, 2);
    std::vector<double> out;
    for (int i = 0; i < 200; ++i) {
      if (i % 20 == 0) {
        EXPECT_TRUE(gpu->SetSmClockMhz(i % 40 == 0 ? 1005 : 1410).ok());
      }
      OperatingPoint op = RunAndWait(*gpu, work_);
      now_s_ += 0.003;
      out.push_back(op.time_s);
      out.push_back(op.energy_j);
    }
    out.push_back(*gpu->TotalEnergyJ());
    out.push_back(gpu->TrueEnergyJ());
    return out;
  };
  std::vector<double> a = trace(9), b = trace(9), c = trace(10);
  EXPECT_EQ(a, b);
  EXPECT_NE(a, c);
}

}  // namespace
}  // namespace perseus::runtime
