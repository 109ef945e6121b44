// EnergyMeter: energy at past instants from a counter that steps, whether
// the GPU reports its steps (the simulated GPU) or the meter polls for them.
#include "runtime/client/energy_meter.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <thread>

#include "runtime/gpu/fake_gpu.h"
#include "runtime/gpu/realism.h"
#include "runtime/gpu/simulated_gpu.h"

namespace perseus::client {
namespace {

// A simulated A100 whose counter steps every 100 ms from power sampled over
// the whole period, so interpolation between steps is exact for constant power.
struct SteppingGpu {
  std::atomic<double> now_s{0};
  std::shared_ptr<runtime::SimulatedGpu> gpu;
  SteppingGpu() {
    runtime::GpuRealism r = runtime::IdealRealism();
    r.energy_period_s = 0.1;
    r.energy_sample_fraction = 1;
    gpu = runtime::SimulatedGpu::Create("a100", 0, [this] { return now_s.load(); }, r).value();
  }
};

TEST(EnergyMeterTest, InterpolatesBetweenReportedSteps) {
  SteppingGpu g;
  EnergyMeter meter(g.gpu, [&] { return g.now_s.load(); }, 0.002);
  const double waiting_w = g.gpu->spec().blocking_power_w;
  g.now_s = 1.0;
  // Not known until the counter has stepped past the instant.
  EXPECT_FALSE(meter.EnergyAtS(1.05).has_value());
  g.now_s = 2.0;
  std::optional<double> a = meter.EnergyAtS(0.35), b = meter.EnergyAtS(1.42);
  ASSERT_TRUE(a && b);
  // Waiting power is constant, so the interval's energy is exact although
  // neither end falls on a step.
  EXPECT_NEAR(*b - *a, waiting_w * (1.42 - 0.35), 1e-9 * waiting_w);
  EXPECT_NEAR(*meter.EnergyBetweenJ(0.35, 1.42), waiting_w * 1.07, 1e-9 * waiting_w);
  EXPECT_FALSE(meter.EnergyBetweenJ(0.35, 2.5).has_value());
  EXPECT_GE(meter.GetStats().steps, 15);
}

TEST(EnergyMeterTest, AnIntervalAroundWorkIsExactWhenItsEndsFallInWaiting) {
  // Work from 0.5 to 0.8 s; the interval 0.1-1.9 s starts and ends in
  // waiting, so the meter's energy is exact although the counter steps only
  // every 100 ms (ends read from the counter alone could be off by a step).
  SteppingGpu g;
  EnergyMeter meter(g.gpu, [&] { return g.now_s.load(); }, 0.002);
  g.now_s = 0.5;
  const OperatingPoint work = g.gpu->Run(KernelWork{0.3, 0.8, 350});
  g.now_s = 3.0;
  const double waiting_w = g.gpu->spec().blocking_power_w;
  std::optional<double> e = meter.EnergyBetweenJ(0.1, 1.9);
  ASSERT_TRUE(e.has_value());
  EXPECT_NEAR(*e, work.energy_j + waiting_w * (1.8 - work.time_s), 1e-6 * *e);
  EXPECT_NEAR(*meter.EnergyBetweenJ(0.1, 0.3), waiting_w * 0.2, 1e-9 * waiting_w);
}

TEST(EnergyMeterTest, PollsACounterThatDoesNotReportItsSteps) {
  auto gpu = std::make_shared<runtime::FakeGpu>(0);
  using Clock = std::chrono::steady_clock;
  const auto origin = Clock::now();
  auto now_s = [origin] { return std::chrono::duration<double>(Clock::now() - origin).count(); };
  EnergyMeter meter(gpu, now_s, 0.001);
  // The fake's counter moves only when the test says: 100 J at ~0.1 s, 200 J at ~0.2 s.
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
  gpu->SetEnergyJ(100);
  const double t1 = now_s();
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
  gpu->SetEnergyJ(200);
  const double t2 = now_s();
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  std::optional<double> mid = meter.EnergyAtS((t1 + t2) / 2);
  ASSERT_TRUE(mid.has_value());
  // Half way between the two steps, give or take the poll interval's share.
  EXPECT_NEAR(*mid, 150, 10);
  EXPECT_EQ(meter.GetStats().steps, 2);
  EXPECT_NEAR(meter.GetStats().mean_step_s, t2 - t1, 0.01);
  meter.Stop();
}

}  // namespace
}  // namespace perseus::client
