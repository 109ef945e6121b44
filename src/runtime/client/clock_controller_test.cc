#include "runtime/client/clock_controller.h"

#include <gtest/gtest.h>

#include <chrono>
#include <mutex>
#include <thread>

#include "runtime/gpu/fake_gpu.h"
#include "runtime/gpu/simulated_gpu.h"

namespace perseus::client {
namespace {

void WaitSettled(const ClockController& c) {
  for (int i = 0; i < 5000 && !c.Settled(); ++i) std::this_thread::sleep_for(std::chrono::microseconds(200));
}

TEST(ClockControllerTest, AppliesTheLatestRequestAndUnlocksAtTheEnd) {
  auto gpu = std::make_shared<runtime::FakeGpu>(0);
  {
    ClockController c(gpu);
    EXPECT_EQ(c.applied(), ClockController::kNone);
    c.Request(1200);
    WaitSettled(c);
    EXPECT_EQ(gpu->LockedSmClockMhz(), 1200);
    c.Request(1200);  // unchanged: nothing to do
    for (int mhz : {1005, 1095, 990}) c.Request(mhz);
    WaitSettled(c);
    EXPECT_EQ(gpu->LockedSmClockMhz(), 990);
    EXPECT_LE(gpu->SetCount(), 4);
  }
  EXPECT_EQ(gpu->LockedSmClockMhz(), 0);
  EXPECT_EQ(gpu->ResetCount(), 1);
}

TEST(ClockControllerTest, RecordsErrorsWithoutRetrying) {
  auto gpu = std::make_shared<runtime::FakeGpu>(0);
  ClockController c(gpu);
  c.Request(1412);
  WaitSettled(c);
  EXPECT_EQ(c.errors(), 1);
  EXPECT_NE(c.last_error().find("1412 MHz is not a supported SM clock"), std::string::npos) << c.last_error();
  EXPECT_EQ(gpu->LockedSmClockMhz(), 0);
}

TEST(ClockControllerTest, RestoreUnlocksNow) {
  auto gpu = std::make_shared<runtime::FakeGpu>(0);
  ClockController c(gpu);
  c.Request(1200);
  WaitSettled(c);
  c.Restore();
  EXPECT_EQ(gpu->LockedSmClockMhz(), 0);
  c.Request(1305);  // later requests apply again
  WaitSettled(c);
  EXPECT_EQ(gpu->LockedSmClockMhz(), 1305);
}

// A GPU whose lock call takes `call` and whose reported clock shows the
// locked one `shown_after` the call returned (an H200: 8-25 ms and 35-130 ms).
class SlowGpu : public runtime::FakeGpu {
 public:
  SlowGpu(std::chrono::milliseconds call, std::chrono::milliseconds shown_after)
      : FakeGpu(0), call_(call), shown_after_(shown_after) {}
  Status SetSmClockMhz(int sm_clock_mhz) override {
    std::this_thread::sleep_for(call_);
    Status st = FakeGpu::SetSmClockMhz(sm_clock_mhz);
    std::lock_guard<std::mutex> lock(mu_);
    const auto now = std::chrono::steady_clock::now();
    previous_mhz_ = Shown(now);
    target_mhz_ = sm_clock_mhz;
    lock_time_ = now;
    return st;
  }
  Result<int> AchievedSmClockMhz() override {
    std::lock_guard<std::mutex> lock(mu_);
    return Shown(std::chrono::steady_clock::now());
  }

 private:
  int Shown(std::chrono::steady_clock::time_point now) const {
    return now - lock_time_ >= shown_after_ ? target_mhz_ : previous_mhz_;
  }
  std::chrono::milliseconds call_, shown_after_;
  std::mutex mu_;
  int previous_mhz_ = 1410, target_mhz_ = 1410;
  std::chrono::steady_clock::time_point lock_time_{};
};

void WaitForLatencySamples(const ClockController& c, int samples) {
  for (int i = 0; i < 3000 && c.switch_latency_samples() < samples; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
}

TEST(ClockControllerTest, TheLatencyIsTheLockCallNotTheReportedClock) {
  auto gpu = std::make_shared<SlowGpu>(std::chrono::milliseconds(30), std::chrono::milliseconds(100));
  ClockController c(gpu);
  EXPECT_LT(c.switch_latency_s(), 0);  // nothing measured yet
  c.Request(1005);
  WaitSettled(c);
  EXPECT_EQ(gpu->LockedSmClockMhz(), 1005);
  WaitForLatencySamples(c, 1);
  ASSERT_EQ(c.switch_latency_samples(), 1);
  EXPECT_GE(c.switch_latency_s(), 0.029);
  EXPECT_LT(c.switch_latency_s(), 0.09);  // not the 130 ms until the reported clock showed it
  // Every lock is a sample; unlocking is not.
  c.Request(1200);
  WaitSettled(c);
  WaitForLatencySamples(c, 2);
  EXPECT_EQ(c.switch_latency_samples(), 2);
  c.Restore();
  EXPECT_EQ(c.switch_latency_samples(), 2);
}

TEST(ClockControllerTest, AnInstantLockCallGivesANearZeroLatency) {
  auto gpu = std::make_shared<runtime::FakeGpu>(0);  // AchievedSmClockMhz: unavailable
  ClockController c(gpu);
  c.Request(1200);
  WaitSettled(c);
  WaitForLatencySamples(c, 1);
  ASSERT_EQ(c.switch_latency_samples(), 1);
  EXPECT_LT(c.switch_latency_s(), 0.005);
}

// An emulated rank: the GPU and the controller share a virtual clock that
// moves only as the rank's computations do. The latency is measured on it,
// not in real time.
TEST(ClockControllerTest, MeasuresTheLatencyOnTheRanksClock) {
  auto now_s = std::make_shared<std::atomic<double>>(1000.0);
  runtime::SecondsClock clock = [now_s] { return now_s->load(); };
  runtime::GpuRealism realism = runtime::IdealRealism();
  realism.clock_latency_s = 0.1;  // what NVML showed on an H200
  Result<std::unique_ptr<runtime::SimulatedGpu>> gpu = runtime::SimulatedGpu::Create("a100", 0, clock, realism);
  ASSERT_TRUE(gpu.ok()) << gpu.status().ToString();
  ClockController c(std::shared_ptr<runtime::GpuControl>(std::move(*gpu)), clock);
  c.Request(1005);
  WaitSettled(c);
  // 5 ms of virtual time per real millisecond: the switch shows after 20 ms of real time.
  for (int i = 0; i < 2000 && c.switch_latency_samples() < 1; ++i) {
    *now_s = now_s->load() + 0.005;
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  ASSERT_EQ(c.switch_latency_samples(), 1);
  // Exact (the simulated GPU says when its lock took effect), however many
  // virtual steps the poll missed; in real time it was about 0.02 s.
  EXPECT_NEAR(c.switch_latency_s(), 0.1, 0.0051);
  // A rank whose clock leaps a whole second at once still gives 100 ms.
  std::this_thread::sleep_for(std::chrono::milliseconds(10));
  *now_s = now_s->load() + 2;  // the next probe may start (one a second)
  c.Request(1200);
  WaitSettled(c);
  *now_s = now_s->load() + 1;
  for (int i = 0; i < 2000 && c.switch_latency_samples() < 2; ++i) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  ASSERT_EQ(c.switch_latency_samples(), 2);
  EXPECT_NEAR(c.switch_latency_s(), 0.1, 0.0051);
}

}  // namespace
}  // namespace perseus::client
