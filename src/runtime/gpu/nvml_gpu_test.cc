// Tests of NvmlGpu against the fake libnvidia-ml built by the project
// (FAKE_NVML_PATH): clocks, the fake's state file, energy and error texts.
#include "runtime/gpu/nvml_gpu.h"

#include <gtest/gtest.h>
#include <stdlib.h>
#include <unistd.h>

#include <chrono>
#include <cmath>
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
  setenv("FAKE_NVML_ENERGY_PERIOD_MS", "0", 1);  // a continuous counter
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

TEST_F(NvmlGpuTest, EnergyCounterStepsEveryPeriodAndStaysFlatBetween) {
  setenv("FAKE_NVML_ENERGY_PERIOD_MS", "20", 1);
  Result<std::unique_ptr<GpuControl>> gpu = OpenNvmlGpu(0, FAKE_NVML_PATH);
  ASSERT_TRUE(gpu.ok()) << gpu.status().ToString();
  // Constant power (400 W unlocked), so each step is 20 ms x 400 W = 8 J and
  // every change between two readings is a whole number of steps.
  Result<double> first = (*gpu)->TotalEnergyJ();
  ASSERT_TRUE(first.ok()) << first.status().ToString();
  auto start = std::chrono::steady_clock::now(), last_read = start;
  double last_j = *first;
  int steps = 0, flat_readings = 0;
  while (last_read - start < std::chrono::milliseconds(300)) {
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
    Result<double> e = (*gpu)->TotalEnergyJ();
    last_read = std::chrono::steady_clock::now();
    ASSERT_TRUE(e.ok());
    const double delta_j = *e - last_j;
    const double whole_steps = std::round(delta_j / 8.0);
    EXPECT_NEAR(delta_j, 8.0 * whole_steps, 0.01) << "not whole steps: " << delta_j << " J";
    steps += static_cast<int>(whole_steps);
    if (delta_j == 0) ++flat_readings;
    last_j = *e;
  }
  // Generous bounds: the readings' times are known only to the scheduler's precision.
  const double elapsed_ms = std::chrono::duration<double, std::milli>(last_read - start).count();
  EXPECT_GE(steps, static_cast<int>(elapsed_ms / 20) - 3);
  EXPECT_LE(steps, static_cast<int>(elapsed_ms / 20) + 3);
  EXPECT_GT(flat_readings, 0);  // polled every ~1 ms: readings within a period see no change
  // The state file keeps the exact energy next to the counter.
  std::vector<FakeNvmlGpuState> state = ReadState();
  ASSERT_FALSE(state.empty());
  EXPECT_GE(state[0].true_energy_mj, state[0].energy_mj);
  EXPECT_LT(state[0].true_energy_mj - state[0].energy_mj, 8000.0 + 1.0);  // less than one step behind
}

TEST_F(NvmlGpuTest, AchievedClockFollowsTheLockAfterTheLatencyAndStaysUnderTheCap) {
  Result<std::unique_ptr<GpuControl>> gpu = OpenNvmlGpu(0, FAKE_NVML_PATH);
  ASSERT_TRUE(gpu.ok()) << gpu.status().ToString();
  Result<int> achieved = (*gpu)->AchievedSmClockMhz();
  ASSERT_TRUE(achieved.ok()) << achieved.status().ToString();
  EXPECT_EQ(*achieved, 1410);  // unlocked: the maximum
  ASSERT_TRUE((*gpu)->SetSmClockMhz(1200).ok());
  EXPECT_EQ(*(*gpu)->AchievedSmClockMhz(), 1200);  // no latency by default

  setenv("FAKE_NVML_ACHIEVED_CAP_MHZ", "1103", 1);  // not a clock: runs at 1095
  EXPECT_EQ(*(*gpu)->AchievedSmClockMhz(), 1095);
  Result<double> power = (*gpu)->PowerW();
  ASSERT_TRUE(power.ok());
  EXPECT_NEAR(*power, 80.0 + 320.0 * (1095.0 / 1410) * (1095.0 / 1410), 0.002);  // power of the achieved clock

  setenv("FAKE_NVML_CLOCK_LATENCY_MS", "300", 1);
  auto set_at = std::chrono::steady_clock::now();
  ASSERT_TRUE((*gpu)->SetSmClockMhz(1005).ok());
  achieved = (*gpu)->AchievedSmClockMhz();
  ASSERT_TRUE(achieved.ok());
  if (std::chrono::steady_clock::now() - set_at < std::chrono::milliseconds(250)) {
    EXPECT_EQ(*achieved, 1095);  // the previous lock (1200), capped
  }
  EXPECT_EQ(ReadState()[0].locked_sm_clock_mhz, 1005);  // the lock itself is recorded at once
  std::this_thread::sleep_for(std::chrono::milliseconds(320));
  EXPECT_EQ(*(*gpu)->AchievedSmClockMhz(), 1005);
}

TEST_F(NvmlGpuTest, StateFilesWithoutTheNewerFieldsStillParse) {
  std::vector<FakeNvmlGpuState> old = ParseFakeNvmlState(
      "gpu 0 locked_sm_clock_mhz 1200 sets 3 resets 1 energy_mj 5123.250 updated_ns 81234567890\n"
      "gpu 1 locked_sm_clock_mhz 0 sets 0 resets 0 energy_mj 10.000 updated_ns 81234567890 future_field 7\n");
  ASSERT_EQ(old.size(), 2u);
  EXPECT_EQ(old[0].locked_sm_clock_mhz, 1200);
  EXPECT_EQ(old[0].sets, 3);
  EXPECT_EQ(old[0].resets, 1);
  EXPECT_DOUBLE_EQ(old[0].energy_mj, 5123.25);
  EXPECT_DOUBLE_EQ(old[0].true_energy_mj, 5123.25);
  EXPECT_EQ(old[0].period_start_ns, 81234567890);
  EXPECT_EQ(old[0].clock_change_ns, 0);
  EXPECT_DOUBLE_EQ(old[1].energy_mj, 10.0);

  FakeNvmlGpuState s;
  s.locked_sm_clock_mhz = 1005;
  s.energy_mj = 100.5;
  s.updated_ns = 2000;
  s.true_energy_mj = 130.25;
  s.sampled_mj = 4.5;
  s.period_start_ns = 1500;
  s.previous_sm_clock_mhz = 1410;
  s.clock_change_ns = 2500;
  std::vector<FakeNvmlGpuState> back = ParseFakeNvmlState(FormatFakeNvmlState({s}));
  ASSERT_EQ(back.size(), 1u);
  EXPECT_DOUBLE_EQ(back[0].true_energy_mj, 130.25);
  EXPECT_DOUBLE_EQ(back[0].sampled_mj, 4.5);
  EXPECT_EQ(back[0].period_start_ns, 1500);
  EXPECT_EQ(back[0].previous_sm_clock_mhz, 1410);
  EXPECT_EQ(back[0].clock_change_ns, 2500);
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
