// Tests of NvmlGpu against the fake libnvidia-ml built by the project
// (FAKE_NVML_PATH): clocks, the fake's state file, energy and error texts.
#include "runtime/gpu/nvml_gpu.h"

#include <gtest/gtest.h>
#include <stdlib.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>

#include "runtime/gpu/fake_nvml/fake_nvml_state.h"
#include "runtime/gpu/fake_nvml/fake_nvml_env.h"

namespace perseus::runtime {
namespace {

class NvmlGpuTest : public FakeNvmlEnvTest {};

TEST_F(NvmlGpuTest, CountsAndIdentifiesGpus) {
  Result<int> count = CountNvmlGpus(FAKE_NVML_PATH);
  ASSERT_TRUE(count.ok()) << count.status().ToString();
  EXPECT_EQ(*count, 2);
  Result<std::unique_ptr<GpuControl>> gpu = OpenNvmlGpu(1, FAKE_NVML_PATH);
  ASSERT_TRUE(gpu.ok()) << gpu.status().ToString();
  EXPECT_EQ((*gpu)->Name(), "NVIDIA A100-SXM4-40GB");
  EXPECT_EQ((*gpu)->Uuid(), "GPU-00000000-fa4e-4000-8000-000000000001");
  EXPECT_FALSE((*gpu)->MeasureOnly());
}

TEST_F(NvmlGpuTest, SupportedClocksAreThoseOfTheHighestMemoryClock) {
  Result<std::unique_ptr<GpuControl>> gpu = OpenNvmlGpu(0, FAKE_NVML_PATH);
  ASSERT_TRUE(gpu.ok()) << gpu.status().ToString();
  Result<std::vector<int>> clocks = (*gpu)->SupportedSmClocksMhz();
  ASSERT_TRUE(clocks.ok()) << clocks.status().ToString();
  ASSERT_EQ(clocks->size(), 81u);
  EXPECT_EQ(clocks->front(), 1410);
  EXPECT_EQ((*clocks)[1], 1395);
  EXPECT_EQ(clocks->back(), 210);
}

TEST_F(NvmlGpuTest, SetAndResetReachTheDriver) {
  Result<std::unique_ptr<GpuControl>> gpu = OpenNvmlGpu(0, FAKE_NVML_PATH);
  ASSERT_TRUE(gpu.ok()) << gpu.status().ToString();
  ASSERT_TRUE((*gpu)->SetSmClockMhz(1200).ok());
  std::vector<FakeNvmlGpuState> state = ReadState();
  ASSERT_EQ(state.size(), 2u);
  EXPECT_EQ(state[0].locked_sm_clock_mhz, 1200);
  EXPECT_EQ(state[0].sets, 1);
  EXPECT_EQ(state[1].locked_sm_clock_mhz, 0);
  EXPECT_EQ(state[1].sets, 0);

  ASSERT_TRUE((*gpu)->ResetSmClock().ok());
  state = ReadState();
  EXPECT_EQ(state[0].locked_sm_clock_mhz, 0);
  EXPECT_EQ(state[0].resets, 1);
}

TEST_F(NvmlGpuTest, RefusesAnUnsupportedClockWithoutCallingTheDriver) {
  Result<std::unique_ptr<GpuControl>> gpu = OpenNvmlGpu(0, FAKE_NVML_PATH);
  ASSERT_TRUE(gpu.ok()) << gpu.status().ToString();
  Status s = (*gpu)->SetSmClockMhz(1412);
  EXPECT_EQ(s.code(), Status::Code::kInvalidArgument);
  EXPECT_EQ(s.message(), "GPU 0: 1412 MHz is not a supported SM clock (nearest: 1410 MHz; supported: 210-1410 MHz)");
  EXPECT_EQ((*gpu)->SetSmClockMhz(2100).message(),
            "GPU 0: 2100 MHz is not a supported SM clock (nearest: 1410 MHz; supported: 210-1410 MHz)");
  std::vector<FakeNvmlGpuState> state = ReadState();
  EXPECT_TRUE(state.empty() || state[0].sets == 0);
}

TEST_F(NvmlGpuTest, EnergyCounterAdvancesAndPowerFollowsTheClock) {
  Result<std::unique_ptr<GpuControl>> gpu = OpenNvmlGpu(0, FAKE_NVML_PATH);
  ASSERT_TRUE(gpu.ok()) << gpu.status().ToString();
  Result<double> power = (*gpu)->PowerW();
  ASSERT_TRUE(power.ok()) << power.status().ToString();
  EXPECT_DOUBLE_EQ(*power, 400.0);  // unlocked counts as 1410 MHz
  Result<double> e1 = (*gpu)->TotalEnergyJ();
  ASSERT_TRUE(e1.ok()) << e1.status().ToString();
  std::this_thread::sleep_for(std::chrono::milliseconds(30));
  Result<double> e2 = (*gpu)->TotalEnergyJ();
  ASSERT_TRUE(e2.ok());
  // 400 W for at least 30 ms is at least 12 J; the counter has 1 mJ steps.
  EXPECT_GE(*e2 - *e1, 11.9);

  ASSERT_TRUE((*gpu)->SetSmClockMhz(705).ok());
  power = (*gpu)->PowerW();
  ASSERT_TRUE(power.ok());
  EXPECT_DOUBLE_EQ(*power, 160.0);  // 80 + 320 * 0.5^2
}

TEST_F(NvmlGpuTest, NoPermissionSaysWhatToDo) {
  setenv("FAKE_NVML_DENY_SET", "1", 1);
  Result<std::unique_ptr<GpuControl>> gpu = OpenNvmlGpu(0, FAKE_NVML_PATH);
  ASSERT_TRUE(gpu.ok()) << gpu.status().ToString();
  Status s = (*gpu)->SetSmClockMhz(1410);
  EXPECT_EQ(s.code(), Status::Code::kUnavailable);
  EXPECT_EQ(s.message(),
            "GPU 0: nvmlDeviceSetGpuLockedClocks(1410): Insufficient Permissions (NVML_ERROR_NO_PERMISSION); "
            "run perseusd as root or grant clock permissions");
  s = (*gpu)->ResetSmClock();
  EXPECT_EQ(s.message(),
            "GPU 0: nvmlDeviceResetGpuLockedClocks: Insufficient Permissions (NVML_ERROR_NO_PERMISSION); "
            "run perseusd as root or grant clock permissions");
  // Measuring needs no permission.
  EXPECT_TRUE((*gpu)->TotalEnergyJ().ok());
}

TEST_F(NvmlGpuTest, NotSupportedIsExplained) {
  setenv("FAKE_NVML_NOT_SUPPORTED", "1", 1);
  setenv("FAKE_NVML_NO_ENERGY", "1", 1);
  Result<std::unique_ptr<GpuControl>> gpu = OpenNvmlGpu(1, FAKE_NVML_PATH);
  ASSERT_TRUE(gpu.ok()) << gpu.status().ToString();
  Status s = (*gpu)->SetSmClockMhz(1005);
  EXPECT_EQ(s.code(), Status::Code::kUnavailable);
  EXPECT_EQ(s.message(),
            "GPU 1: nvmlDeviceSetGpuLockedClocks(1005): Not Supported (NVML_ERROR_NOT_SUPPORTED); "
            "this GPU or driver does not support it");
  EXPECT_EQ((*gpu)->TotalEnergyJ().status().message(),
            "GPU 1: nvmlDeviceGetTotalEnergyConsumption: Not Supported (NVML_ERROR_NOT_SUPPORTED); "
            "this GPU or driver does not support it");
}

TEST_F(NvmlGpuTest, MissingLibraryGivesTheDlopenMessage) {
  Result<std::unique_ptr<GpuControl>> gpu = OpenNvmlGpu(0, "libnvidia-ml-perseus-missing.so.1");
  ASSERT_FALSE(gpu.ok());
  EXPECT_EQ(gpu.status().code(), Status::Code::kNotFound);
  EXPECT_EQ(gpu.status().message(),
            "dlopen(libnvidia-ml-perseus-missing.so.1): libnvidia-ml-perseus-missing.so.1: cannot open shared "
            "object file: No such file or directory");
}

TEST_F(NvmlGpuTest, LibraryPathComesFromTheEnvironmentWhenNotGiven) {
  EXPECT_EQ(DefaultNvmlLibraryPath(), "libnvidia-ml.so.1");
  setenv("PERSEUS_NVML_LIBRARY", FAKE_NVML_PATH, 1);
  EXPECT_EQ(DefaultNvmlLibraryPath(), FAKE_NVML_PATH);
  Result<std::unique_ptr<GpuControl>> gpu = OpenNvmlGpu(0, "");
  ASSERT_TRUE(gpu.ok()) << gpu.status().ToString();
  EXPECT_EQ((*gpu)->Name(), "NVIDIA A100-SXM4-40GB");
}

TEST_F(NvmlGpuTest, InitAndIndexErrorsSayWhere) {
  EXPECT_EQ(OpenNvmlGpu(2, FAKE_NVML_PATH).status().message(), "GPU 2: no such GPU (NVML sees 2)");
  EXPECT_EQ(OpenNvmlGpu(-1, FAKE_NVML_PATH).status().message(), "GPU -1: GPU index must be >= 0");
  setenv("FAKE_NVML_INIT_ERROR", "9", 1);
  Result<std::unique_ptr<GpuControl>> gpu = OpenNvmlGpu(0, FAKE_NVML_PATH);
  EXPECT_EQ(gpu.status().code(), Status::Code::kInternal);
  EXPECT_EQ(gpu.status().message(), "nvmlInit_v2: Driver Not Loaded (NVML_ERROR_DRIVER_NOT_LOADED)");
}

TEST_F(NvmlGpuTest, ClosingOneGpuLeavesTheOthersWorking) {
  Result<std::unique_ptr<GpuControl>> a = OpenNvmlGpu(0, FAKE_NVML_PATH);
  Result<std::unique_ptr<GpuControl>> b = OpenNvmlGpu(1, FAKE_NVML_PATH);
  ASSERT_TRUE(a.ok() && b.ok());
  ASSERT_TRUE((*b)->SetSmClockMhz(1005).ok());
  a = Status::Internal("closed");  // shuts NVML down once; b must keep working
  ASSERT_TRUE((*b)->SetSmClockMhz(990).ok());
  EXPECT_EQ(ReadState()[1].locked_sm_clock_mhz, 990);
}

}  // namespace
}  // namespace perseus::runtime
