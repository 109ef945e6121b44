// Tests of SimulatedGpu's energy accounting with an injected clock.
#include "runtime/gpu/simulated_gpu.h"

#include <gtest/gtest.h>

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

}  // namespace
}  // namespace perseus::runtime
