// Tests of OpenGpu's backend choice and the measure-only fallback, with the
// fake libnvidia-ml (FAKE_NVML_PATH).
#include "runtime/gpu/open_gpu.h"

#include <gtest/gtest.h>

#include "runtime/gpu/fake_nvml/fake_nvml_env.h"
#include "runtime/gpu/measure_only_gpu.h"

namespace perseus::runtime {
namespace {

class OpenGpuTest : public FakeNvmlEnvTest {
 protected:
  GpuOpenOptions Options(int index) {
    GpuOpenOptions options;
    options.index = index;
    options.nvml_library = FAKE_NVML_PATH;
    return options;
  }
};

TEST_F(OpenGpuTest, ControlsClocksWhenPermitted) {
  Result<std::unique_ptr<GpuControl>> gpu = OpenGpu(Options(1));
  ASSERT_TRUE(gpu.ok()) << gpu.status().ToString();
  EXPECT_FALSE((*gpu)->MeasureOnly());
  EXPECT_EQ(ReadState()[1].resets, 1);  // the probe
  ASSERT_TRUE((*gpu)->SetSmClockMhz(1200).ok());
  EXPECT_EQ(ReadState()[1].locked_sm_clock_mhz, 1200);
}

TEST_F(OpenGpuTest, FallsBackToMeasureOnlyWithoutPermission) {
  setenv("FAKE_NVML_DENY_SET", "1", 1);
  Result<std::unique_ptr<GpuControl>> gpu = OpenGpu(Options(0));
  ASSERT_TRUE(gpu.ok()) << gpu.status().ToString();
  ASSERT_TRUE((*gpu)->MeasureOnly());
  auto* measure_only = dynamic_cast<MeasureOnlyGpu*>(gpu->get());
  ASSERT_NE(measure_only, nullptr);
  EXPECT_EQ(measure_only->reason(),
            "GPU 0: nvmlDeviceResetGpuLockedClocks: Insufficient Permissions (NVML_ERROR_NO_PERMISSION); "
            "run perseusd as root or grant clock permissions");

  ASSERT_TRUE((*gpu)->SetSmClockMhz(1200).ok());
  EXPECT_EQ(measure_only->RequestedSmClockMhz(), 1200);
  std::vector<FakeNvmlGpuState> state = ReadState();
  EXPECT_TRUE(state.empty() || state[0].sets == 0);
  EXPECT_EQ((*gpu)->SetSmClockMhz(1201).message(),
            "GPU 0: 1201 MHz is not a supported SM clock (nearest: 1200 MHz; supported: 210-1410 MHz)");
  EXPECT_TRUE((*gpu)->TotalEnergyJ().ok());
  ASSERT_TRUE((*gpu)->ResetSmClock().ok());
  EXPECT_EQ(measure_only->RequestedSmClockMhz(), 0);
}

TEST_F(OpenGpuTest, FallsBackWhenLockingIsNotSupported) {
  setenv("FAKE_NVML_NOT_SUPPORTED", "1", 1);
  Result<std::unique_ptr<GpuControl>> gpu = OpenGpu(Options(0));
  ASSERT_TRUE(gpu.ok()) << gpu.status().ToString();
  EXPECT_TRUE((*gpu)->MeasureOnly());
}

TEST_F(OpenGpuTest, ReportsTheRefusalWhenFallbackIsOff) {
  setenv("FAKE_NVML_DENY_SET", "1", 1);
  GpuOpenOptions options = Options(0);
  options.measure_only_fallback = false;
  Result<std::unique_ptr<GpuControl>> gpu = OpenGpu(options);
  ASSERT_FALSE(gpu.ok());
  EXPECT_EQ(gpu.status().code(), Status::Code::kUnavailable);
}

TEST_F(OpenGpuTest, OtherErrorsAreNotHidden) {
  GpuOpenOptions options = Options(0);
  options.nvml_library = "/nonexistent/libnvidia-ml.so.1";
  EXPECT_EQ(OpenGpu(options).status().code(), Status::Code::kNotFound);
  options = Options(0);
  options.daemon_socket = dir_ + "/no-daemon.sock";
  Result<std::unique_ptr<GpuControl>> gpu = OpenGpu(options);
  EXPECT_EQ(gpu.status().message(),
            "perseusd at " + dir_ + "/no-daemon.sock: connect: No such file or directory (is perseusd running?)");
}

}  // namespace
}  // namespace perseus::runtime
