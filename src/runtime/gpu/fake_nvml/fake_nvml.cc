// A fake libnvidia-ml.so.1 for tests and demos on machines without a GPU.
//
// It defines the NVML symbols NvmlGpu resolves (runtime/gpu/nvml_api.h) for
// FAKE_NVML_GPUS fake A100-SXM4-40GB GPUs. Environment knobs, read on every
// call so one process can change them between calls:
//   FAKE_NVML_GPUS=N           number of GPUs (default 1, at most 16)
//   FAKE_NVML_DENY_SET=1       set/reset of locked clocks -> NVML_ERROR_NO_PERMISSION
//   FAKE_NVML_NOT_SUPPORTED=1  set/reset of locked clocks -> NVML_ERROR_NOT_SUPPORTED
//   FAKE_NVML_NO_ENERGY=1      total energy counter      -> NVML_ERROR_NOT_SUPPORTED
//   FAKE_NVML_INIT_ERROR=code  nvmlInit_v2 returns this nvmlReturn_t (e.g. 9)
//   FAKE_NVML_STATE=path       keep the state in this file (fake_nvml_state.h)
//   FAKE_NVML_ENERGY_PERIOD_MS=ms     the energy counter steps every ms (default 100; 0: continuous)
//   FAKE_NVML_SAMPLE_FRACTION=f       each step from power sampled over the last f of the period (default 0.25)
//   FAKE_NVML_CLOCK_LATENCY_MS=ms     a clock lock takes effect ms after the call returns (default 0)
//   FAKE_NVML_LOCK_CALL_MS=ms         a clock lock call takes ms before it returns (default 0; 8-25 ms
//                                     on an H200, where the clock is in effect when it returns)
//   FAKE_NVML_ACHIEVED_CAP_MHZ=mhz    the GPU never runs above this clock (default 0: no cap)
// The GPU runs at its achieved clock: the locked clock (the maximum, 1410 MHz,
// when unlocked) once the latency has passed, at most the cap (rounded down
// to a supported clock); nvmlDeviceGetClockInfo(NVML_CLOCK_SM) reports it.
// Power depends on it: power_w = 80 + 320 * (f / 1410)^2, i.e. 400 W at
// 1410 MHz. The energy counter integrates that power over CLOCK_MONOTONIC time
// with the CoarseEnergyCounter of the simulated GPU (runtime/gpu/realism.h).
// Thread safety: every call holds a process mutex and, with a state file, an
// exclusive flock on it.
#include <fcntl.h>
#include <sys/file.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <string>
#include <vector>

#include "runtime/gpu/fake_nvml/fake_nvml_state.h"
#include "runtime/gpu/nvml_api.h"
#include "runtime/gpu/realism.h"

struct nvmlDevice_st {
  unsigned index;
};

namespace {

using perseus::runtime::CoarseEnergyCounter;
using perseus::runtime::FakeNvmlGpuState;

constexpr unsigned kMaxGpus = 16;
constexpr int kMaxSmClockMhz = 1410;
constexpr int kMinSmClockMhz = 210;
constexpr int kSmClockStepMhz = 15;
constexpr unsigned kMemoryClocksMhz[] = {1215, 405};

nvmlDevice_st g_devices[kMaxGpus] = {{0}, {1}, {2}, {3}, {4}, {5}, {6}, {7},
                                     {8}, {9}, {10}, {11}, {12}, {13}, {14}, {15}};
std::atomic<int> g_init_count{0};
std::mutex g_mu;
std::vector<FakeNvmlGpuState> g_memory_state;  // used without FAKE_NVML_STATE; guarded by g_mu

bool EnvFlag(const char* name) {
  const char* v = std::getenv(name);
  return v != nullptr && std::strcmp(v, "1") == 0;
}

unsigned GpuCount() {
  const char* v = std::getenv("FAKE_NVML_GPUS");
  if (v == nullptr || v[0] == '\0') return 1;
  long n = std::strtol(v, nullptr, 10);
  return static_cast<unsigned>(std::clamp<long>(n, 0, kMaxGpus));
}

int64_t NowNs() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<int64_t>(ts.tv_sec) * 1000000000 + ts.tv_nsec;
}

// A number from the environment in [min, max]; `fallback` when unset or not
// such a number.
double EnvNumber(const char* name, double fallback, double min, double max) {
  const char* v = std::getenv(name);
  if (v == nullptr || v[0] == '\0') return fallback;
  char* end = nullptr;
  double x = std::strtod(v, &end);
  if (end == v || *end != '\0' || !(x >= min && x <= max)) return fallback;
  return x;
}

double EnergyPeriodS() { return EnvNumber("FAKE_NVML_ENERGY_PERIOD_MS", 100, 0, 1e7) / 1e3; }
double SampleFraction() { return EnvNumber("FAKE_NVML_SAMPLE_FRACTION", 0.25, 1e-6, 1); }
int64_t ClockLatencyNs() { return static_cast<int64_t>(EnvNumber("FAKE_NVML_CLOCK_LATENCY_MS", 0, 0, 1e7) * 1e6); }
double LockCallS() { return EnvNumber("FAKE_NVML_LOCK_CALL_MS", 0, 0, 1e5) / 1e3; }
int AchievedCapMhz() { return static_cast<int>(EnvNumber("FAKE_NVML_ACHIEVED_CAP_MHZ", 0, 0, 1e6)); }

// The locked clock in effect at `now_ns` (0: unlocked).
int RequestedClockMhz(const FakeNvmlGpuState& g, int64_t now_ns) {
  return now_ns >= g.clock_change_ns ? g.locked_sm_clock_mhz : g.previous_sm_clock_mhz;
}

// The clock the GPU runs at for a requested (0: unlocked) clock.
int AchievedClockMhz(int requested_mhz) {
  int f = requested_mhz > 0 ? requested_mhz : kMaxSmClockMhz;
  int cap = AchievedCapMhz();
  if (cap > 0 && f > cap) {
    int steps_down = (kMaxSmClockMhz - cap + kSmClockStepMhz - 1) / kSmClockStepMhz;
    f = std::max(kMinSmClockMhz, kMaxSmClockMhz - steps_down * kSmClockStepMhz);
  }
  return f;
}

double PowerW(int achieved_mhz) {
  double x = static_cast<double>(achieved_mhz) / kMaxSmClockMhz;
  return 80.0 + 320.0 * x * x;
}

// Advances one GPU's energy counter to `now_ns`: the power of the previous
// clock until the lock took effect, of the locked clock after.
void AdvanceEnergy(FakeNvmlGpuState& g, int64_t now_ns) {
  const double period_s = EnergyPeriodS();
  if (g.updated_ns == 0) {
    g.updated_ns = g.period_start_ns = now_ns;
    return;
  }
  if (now_ns <= g.updated_ns) return;
  CoarseEnergyCounter::State state;
  state.time_s = static_cast<double>(g.updated_ns) / 1e9;
  state.period_start_s = static_cast<double>(g.period_start_ns) / 1e9;
  state.next_step_s = state.period_start_s + period_s;
  state.true_energy_j = g.true_energy_mj / 1e3;
  state.reported_energy_j = g.energy_mj / 1e3;
  state.sampled_energy_j = g.sampled_mj / 1e3;
  if (period_s > 0 && state.next_step_s <= state.time_s) {  // the period was shortened: start a new one
    state.period_start_s = state.time_s;
    state.next_step_s = state.time_s + period_s;
    state.sampled_energy_j = 0;
  }
  CoarseEnergyCounter counter(period_s, SampleFraction(), state);
  if (g.clock_change_ns > g.updated_ns && g.clock_change_ns < now_ns) {
    counter.Advance(static_cast<double>(g.clock_change_ns) / 1e9, PowerW(AchievedClockMhz(g.previous_sm_clock_mhz)));
  }
  counter.Advance(static_cast<double>(now_ns) / 1e9, PowerW(AchievedClockMhz(RequestedClockMhz(g, now_ns))));
  g.true_energy_mj = counter.TrueEnergyJ() * 1e3;
  g.energy_mj = counter.ReportedEnergyJ() * 1e3;
  g.sampled_mj = counter.state().sampled_energy_j * 1e3;
  g.period_start_ns = period_s > 0 ? std::llround(counter.state().period_start_s * 1e9) : now_ns;
  g.updated_ns = now_ns;
}

void AdvanceEnergy(std::vector<FakeNvmlGpuState>& gpus, int64_t now_ns) {
  for (FakeNvmlGpuState& g : gpus) AdvanceEnergy(g, now_ns);
}

// Records a lock (0: unlock) at `now_ns`, effective after the latency.
void RequestClock(FakeNvmlGpuState& g, int requested_mhz, int64_t now_ns) {
  g.previous_sm_clock_mhz = RequestedClockMhz(g, now_ns);
  g.locked_sm_clock_mhz = requested_mhz;
  g.clock_change_ns = now_ns + ClockLatencyNs();
}

std::string ReadAll(int fd) {
  std::string text;
  char buf[4096];
  off_t offset = 0;
  for (;;) {
    ssize_t n = pread(fd, buf, sizeof(buf), offset);
    if (n <= 0) break;
    text.append(buf, static_cast<size_t>(n));
    offset += n;
  }
  return text;
}

void WriteAll(int fd, const std::string& text) {
  if (ftruncate(fd, 0) != 0) return;
  size_t done = 0;
  while (done < text.size()) {
    ssize_t n = pwrite(fd, text.data() + done, text.size() - done, static_cast<off_t>(done));
    if (n <= 0) return;
    done += static_cast<size_t>(n);
  }
}

// Runs `op(gpus, now_ns)` on the state of all GPUs, advanced to now and loaded
// from and saved to FAKE_NVML_STATE when set. `op` returns the NVML result.
template <typename Op>
nvmlReturn_t WithState(Op op) {
  std::lock_guard<std::mutex> lock(g_mu);
  const char* path = std::getenv("FAKE_NVML_STATE");
  int fd = -1;
  std::vector<FakeNvmlGpuState> file_state;
  std::vector<FakeNvmlGpuState>* gpus = &g_memory_state;
  if (path != nullptr && path[0] != '\0') {
    fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0644);
    if (fd < 0) return NVML_ERROR_OPERATING_SYSTEM;
    if (flock(fd, LOCK_EX) != 0) {
      close(fd);
      return NVML_ERROR_OPERATING_SYSTEM;
    }
    file_state = perseus::runtime::ParseFakeNvmlState(ReadAll(fd));
    gpus = &file_state;
  }
  if (gpus->size() < GpuCount()) gpus->resize(GpuCount());
  const int64_t now_ns = NowNs();
  AdvanceEnergy(*gpus, now_ns);
  nvmlReturn_t r = op(*gpus, now_ns);
  if (fd >= 0) {
    WriteAll(fd, perseus::runtime::FormatFakeNvmlState(*gpus));
    close(fd);  // releases the flock
  }
  return r;
}

// Common checks of a device call; NVML_SUCCESS when `device` is usable.
nvmlReturn_t CheckDevice(nvmlDevice_t device) {
  if (g_init_count.load() <= 0) return NVML_ERROR_UNINITIALIZED;
  auto address = reinterpret_cast<uintptr_t>(device);
  auto first = reinterpret_cast<uintptr_t>(&g_devices[0]);
  auto end = reinterpret_cast<uintptr_t>(&g_devices[kMaxGpus]);
  if (address < first || address >= end) return NVML_ERROR_INVALID_ARGUMENT;
  if (device->index >= GpuCount()) return NVML_ERROR_GPU_IS_LOST;
  return NVML_SUCCESS;
}

nvmlReturn_t CopyString(const std::string& s, char* out, unsigned length) {
  if (out == nullptr) return NVML_ERROR_INVALID_ARGUMENT;
  if (length < s.size() + 1) return NVML_ERROR_INSUFFICIENT_SIZE;
  std::memcpy(out, s.c_str(), s.size() + 1);
  return NVML_SUCCESS;
}

nvmlReturn_t CopyList(const std::vector<unsigned>& values, unsigned* count, unsigned* out) {
  if (count == nullptr) return NVML_ERROR_INVALID_ARGUMENT;
  if (*count < values.size() || out == nullptr) {
    *count = static_cast<unsigned>(values.size());
    return NVML_ERROR_INSUFFICIENT_SIZE;
  }
  std::copy(values.begin(), values.end(), out);
  *count = static_cast<unsigned>(values.size());
  return NVML_SUCCESS;
}

nvmlReturn_t CheckClockControl() {
  if (EnvFlag("FAKE_NVML_NOT_SUPPORTED")) return NVML_ERROR_NOT_SUPPORTED;
  if (EnvFlag("FAKE_NVML_DENY_SET")) return NVML_ERROR_NO_PERMISSION;
  return NVML_SUCCESS;
}

}  // namespace

extern "C" {

nvmlReturn_t nvmlInit_v2(void) {
  const char* forced = std::getenv("FAKE_NVML_INIT_ERROR");
  if (forced != nullptr && forced[0] != '\0') return static_cast<nvmlReturn_t>(std::atoi(forced));
  g_init_count.fetch_add(1);
  return NVML_SUCCESS;
}

nvmlReturn_t nvmlShutdown(void) {
  int previous = g_init_count.load();
  while (previous > 0 && !g_init_count.compare_exchange_weak(previous, previous - 1)) {
  }
  return previous > 0 ? NVML_SUCCESS : NVML_ERROR_UNINITIALIZED;
}

const char* nvmlErrorString(nvmlReturn_t result) {
  switch (result) {
    case NVML_SUCCESS: return "Success";
    case NVML_ERROR_UNINITIALIZED: return "Uninitialized";
    case NVML_ERROR_INVALID_ARGUMENT: return "Invalid Argument";
    case NVML_ERROR_NOT_SUPPORTED: return "Not Supported";
    case NVML_ERROR_NO_PERMISSION: return "Insufficient Permissions";
    case NVML_ERROR_ALREADY_INITIALIZED: return "Already Initialized";
    case NVML_ERROR_NOT_FOUND: return "Not Found";
    case NVML_ERROR_INSUFFICIENT_SIZE: return "Insufficient Size";
    case NVML_ERROR_DRIVER_NOT_LOADED: return "Driver Not Loaded";
    case NVML_ERROR_GPU_IS_LOST: return "GPU is lost";
    case NVML_ERROR_OPERATING_SYSTEM: return "Operating System Error";
    default: return "Unknown Error";
  }
}

nvmlReturn_t nvmlDeviceGetCount_v2(unsigned int* device_count) {
  if (g_init_count.load() <= 0) return NVML_ERROR_UNINITIALIZED;
  if (device_count == nullptr) return NVML_ERROR_INVALID_ARGUMENT;
  *device_count = GpuCount();
  return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceGetHandleByIndex_v2(unsigned int index, nvmlDevice_t* device) {
  if (g_init_count.load() <= 0) return NVML_ERROR_UNINITIALIZED;
  if (device == nullptr || index >= GpuCount()) return NVML_ERROR_INVALID_ARGUMENT;
  *device = &g_devices[index];
  return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceGetName(nvmlDevice_t device, char* name, unsigned int length) {
  if (nvmlReturn_t r = CheckDevice(device); r != NVML_SUCCESS) return r;
  return CopyString("NVIDIA A100-SXM4-40GB", name, length);
}

nvmlReturn_t nvmlDeviceGetUUID(nvmlDevice_t device, char* uuid, unsigned int length) {
  if (nvmlReturn_t r = CheckDevice(device); r != NVML_SUCCESS) return r;
  char text[64];
  std::snprintf(text, sizeof(text), "GPU-00000000-fa4e-4000-8000-%012u", device->index);
  return CopyString(text, uuid, length);
}

nvmlReturn_t nvmlDeviceGetSupportedMemoryClocks(nvmlDevice_t device, unsigned int* count, unsigned int* clocks_mhz) {
  if (nvmlReturn_t r = CheckDevice(device); r != NVML_SUCCESS) return r;
  return CopyList(std::vector<unsigned>(std::begin(kMemoryClocksMhz), std::end(kMemoryClocksMhz)), count, clocks_mhz);
}

// 1410, 1395, ..., 210 MHz at the high memory clock; up to 405 MHz at the low one.
nvmlReturn_t nvmlDeviceGetSupportedGraphicsClocks(nvmlDevice_t device, unsigned int memory_clock_mhz,
                                                  unsigned int* count, unsigned int* clocks_mhz) {
  if (nvmlReturn_t r = CheckDevice(device); r != NVML_SUCCESS) return r;
  int top_mhz = 0;
  if (memory_clock_mhz == kMemoryClocksMhz[0]) top_mhz = kMaxSmClockMhz;
  if (memory_clock_mhz == kMemoryClocksMhz[1]) top_mhz = 405;
  if (top_mhz == 0) return NVML_ERROR_NOT_FOUND;
  std::vector<unsigned> clocks;
  for (int f = kMaxSmClockMhz; f >= kMinSmClockMhz; f -= kSmClockStepMhz) {
    if (f <= top_mhz) clocks.push_back(static_cast<unsigned>(f));
  }
  return CopyList(clocks, count, clocks_mhz);
}

nvmlReturn_t nvmlDeviceSetGpuLockedClocks(nvmlDevice_t device, unsigned int min_clock_mhz,
                                          unsigned int max_clock_mhz) {
  if (nvmlReturn_t r = CheckDevice(device); r != NVML_SUCCESS) return r;
  if (nvmlReturn_t r = CheckClockControl(); r != NVML_SUCCESS) return r;
  if (min_clock_mhz > max_clock_mhz || max_clock_mhz > static_cast<unsigned>(kMaxSmClockMhz) ||
      min_clock_mhz < static_cast<unsigned>(kMinSmClockMhz)) {
    return NVML_ERROR_INVALID_ARGUMENT;
  }
  if (double call_s = LockCallS(); call_s > 0) {  // outside the state lock: other calls go on meanwhile
    const timespec pause{static_cast<time_t>(call_s), static_cast<long>((call_s - static_cast<time_t>(call_s)) * 1e9)};
    timespec pause_left = pause;  // a signal does not cut a driver call short
    while (nanosleep(&pause_left, &pause_left) == -1 && errno == EINTR) {
    }
  }
  unsigned index = device->index;
  return WithState([&](std::vector<FakeNvmlGpuState>& gpus, int64_t now_ns) {
    RequestClock(gpus[index], static_cast<int>(max_clock_mhz), now_ns);
    gpus[index].sets++;
    return NVML_SUCCESS;
  });
}

nvmlReturn_t nvmlDeviceResetGpuLockedClocks(nvmlDevice_t device) {
  if (nvmlReturn_t r = CheckDevice(device); r != NVML_SUCCESS) return r;
  if (nvmlReturn_t r = CheckClockControl(); r != NVML_SUCCESS) return r;
  unsigned index = device->index;
  return WithState([&](std::vector<FakeNvmlGpuState>& gpus, int64_t now_ns) {
    RequestClock(gpus[index], 0, now_ns);
    gpus[index].resets++;
    return NVML_SUCCESS;
  });
}

nvmlReturn_t nvmlDeviceGetTotalEnergyConsumption(nvmlDevice_t device, unsigned long long* energy_mj) {
  if (nvmlReturn_t r = CheckDevice(device); r != NVML_SUCCESS) return r;
  if (EnvFlag("FAKE_NVML_NO_ENERGY")) return NVML_ERROR_NOT_SUPPORTED;
  if (energy_mj == nullptr) return NVML_ERROR_INVALID_ARGUMENT;
  unsigned index = device->index;
  return WithState([&](std::vector<FakeNvmlGpuState>& gpus, int64_t) {
    *energy_mj = static_cast<unsigned long long>(gpus[index].energy_mj);
    return NVML_SUCCESS;
  });
}

nvmlReturn_t nvmlDeviceGetPowerUsage(nvmlDevice_t device, unsigned int* power_mw) {
  if (nvmlReturn_t r = CheckDevice(device); r != NVML_SUCCESS) return r;
  if (power_mw == nullptr) return NVML_ERROR_INVALID_ARGUMENT;
  unsigned index = device->index;
  return WithState([&](std::vector<FakeNvmlGpuState>& gpus, int64_t now_ns) {
    *power_mw = static_cast<unsigned>(PowerW(AchievedClockMhz(RequestedClockMhz(gpus[index], now_ns))) * 1000.0);
    return NVML_SUCCESS;
  });
}

// Graphics and SM: the achieved clock; memory: the highest memory clock.
nvmlReturn_t nvmlDeviceGetClockInfo(nvmlDevice_t device, nvmlClockType_t type, unsigned int* clock_mhz) {
  if (nvmlReturn_t r = CheckDevice(device); r != NVML_SUCCESS) return r;
  if (clock_mhz == nullptr) return NVML_ERROR_INVALID_ARGUMENT;
  if (type == NVML_CLOCK_MEM) {
    *clock_mhz = kMemoryClocksMhz[0];
    return NVML_SUCCESS;
  }
  if (type != NVML_CLOCK_SM && type != NVML_CLOCK_GRAPHICS) return NVML_ERROR_NOT_SUPPORTED;
  unsigned index = device->index;
  return WithState([&](std::vector<FakeNvmlGpuState>& gpus, int64_t now_ns) {
    *clock_mhz = static_cast<unsigned>(AchievedClockMhz(RequestedClockMhz(gpus[index], now_ns)));
    return NVML_SUCCESS;
  });
}

}  // extern "C"
