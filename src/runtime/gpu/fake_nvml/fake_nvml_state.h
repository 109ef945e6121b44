// The state of the fake libnvidia-ml (fake_nvml.cc) and its file format.
//
// When FAKE_NVML_STATE names a file, the fake keeps its whole state there,
// read and rewritten under flock() on every call, so several processes (a
// test and the perseusd it started) see one set of fake GPUs. One line per GPU:
//
//   gpu 0 locked_sm_clock_mhz 1200 sets 3 resets 1 energy_mj 5123.25 updated_ns 81234567890
//
// locked_sm_clock_mhz 0 means unlocked; sets and resets count successful
// nvmlDeviceSetGpuLockedClocks / nvmlDeviceResetGpuLockedClocks calls;
// updated_ns is CLOCK_MONOTONIC at the last energy update. Tests read the file
// with ParseFakeNvmlState. Header-only so the fake library and the tests share
// it without linking each other.
// Thread safety: plain functions on values.
#pragma once

#include <cstdint>
#include <cstdio>
#include <sstream>
#include <string>
#include <vector>

namespace perseus::runtime {

struct FakeNvmlGpuState {
  int locked_sm_clock_mhz = 0;  // 0: unlocked
  long sets = 0;
  long resets = 0;
  double energy_mj = 0;
  int64_t updated_ns = 0;  // 0: never updated
};

inline std::string FormatFakeNvmlState(const std::vector<FakeNvmlGpuState>& gpus) {
  std::string out;
  for (size_t i = 0; i < gpus.size(); ++i) {
    char line[256];
    std::snprintf(line, sizeof(line), "gpu %zu locked_sm_clock_mhz %d sets %ld resets %ld energy_mj %.3f updated_ns %lld\n",
                  i, gpus[i].locked_sm_clock_mhz, gpus[i].sets, gpus[i].resets, gpus[i].energy_mj,
                  static_cast<long long>(gpus[i].updated_ns));
    out += line;
  }
  return out;
}

// Lines that do not parse are skipped; GPUs missing from the text get the
// default (unlocked, zero) state.
inline std::vector<FakeNvmlGpuState> ParseFakeNvmlState(const std::string& text) {
  std::vector<FakeNvmlGpuState> gpus;
  std::istringstream in(text);
  std::string line;
  while (std::getline(in, line)) {
    std::istringstream fields(line);
    std::string gpu_word, k1, k2, k3, k4, k5;
    size_t index = 0;
    FakeNvmlGpuState s;
    long long updated_ns = 0;
    if (!(fields >> gpu_word >> index >> k1 >> s.locked_sm_clock_mhz >> k2 >> s.sets >> k3 >> s.resets >> k4 >>
          s.energy_mj >> k5 >> updated_ns) ||
        gpu_word != "gpu" || index > 1024) {
      continue;
    }
    s.updated_ns = updated_ns;
    if (gpus.size() <= index) gpus.resize(index + 1);
    gpus[index] = s;
  }
  return gpus;
}

}  // namespace perseus::runtime
