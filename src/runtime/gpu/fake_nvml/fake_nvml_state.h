// The state of the fake libnvidia-ml (fake_nvml.cc) and its file format.
//
// When FAKE_NVML_STATE names a file, the fake keeps its whole state there,
// read and rewritten under flock() on every call, so several processes (a
// test and the perseusd it started) see one set of fake GPUs. One line per GPU:
//
//   gpu 0 locked_sm_clock_mhz 1200 sets 3 resets 1 energy_mj 5123.250 updated_ns 81234567890
//       true_energy_mj 5130.125 sampled_mj 20.000 period_start_ns 81200000000
//       previous_sm_clock_mhz 0 clock_change_ns 81234000000
//
// (one line in the file). locked_sm_clock_mhz 0 means unlocked; sets and
// resets count successful nvmlDeviceSetGpuLockedClocks /
// nvmlDeviceResetGpuLockedClocks calls; energy_mj is the counter as NVML
// reports it (it steps once per period); updated_ns is CLOCK_MONOTONIC at the
// last energy update. The fields after updated_ns continue the energy counter
// (runtime/gpu/realism.h: the exact energy, the energy sampled so far in the
// current period, the period's start) and the clock latency (the clock in
// effect until clock_change_ns, when locked_sm_clock_mhz takes effect). They
// were added later and may be missing: lines with only the first six fields
// still parse, with the exact energy equal to energy_mj. Tests read the file
// with ParseFakeNvmlState. Header-only so the fake library and the tests share
// it without linking each other.
// Thread safety: plain functions on values.
#pragma once

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <sstream>
#include <string>
#include <vector>

namespace perseus::runtime {

// Every environment variable the fake library reads (fake_nvml.cc says what
// each does): tests clear them all before they set their own.
inline constexpr const char* kFakeNvmlKnobs[] = {
    "FAKE_NVML_STATE",           "FAKE_NVML_GPUS",           "FAKE_NVML_DENY_SET",
    "FAKE_NVML_NOT_SUPPORTED",   "FAKE_NVML_NO_ENERGY",      "FAKE_NVML_INIT_ERROR",
    "FAKE_NVML_ENERGY_PERIOD_MS", "FAKE_NVML_SAMPLE_FRACTION", "FAKE_NVML_CLOCK_LATENCY_MS",
    "FAKE_NVML_LOCK_CALL_MS",    "FAKE_NVML_ACHIEVED_CAP_MHZ"};

struct FakeNvmlGpuState {
  int locked_sm_clock_mhz = 0;  // 0: unlocked
  long sets = 0;
  long resets = 0;
  double energy_mj = 0;     // the counter NVML reports
  int64_t updated_ns = 0;   // 0: never updated
  double true_energy_mj = 0;       // the exact energy
  double sampled_mj = 0;           // energy in the current period's sampled window so far
  int64_t period_start_ns = 0;     // start of the counter's current period
  int previous_sm_clock_mhz = 0;   // in effect until clock_change_ns; 0: unlocked
  int64_t clock_change_ns = 0;     // when locked_sm_clock_mhz takes effect
};

inline std::string FormatFakeNvmlState(const std::vector<FakeNvmlGpuState>& gpus) {
  std::string out;
  for (size_t i = 0; i < gpus.size(); ++i) {
    const FakeNvmlGpuState& g = gpus[i];
    char line[512];
    std::snprintf(line, sizeof(line),
                  "gpu %zu locked_sm_clock_mhz %d sets %ld resets %ld energy_mj %.3f updated_ns %lld "
                  "true_energy_mj %.3f sampled_mj %.6f period_start_ns %lld previous_sm_clock_mhz %d "
                  "clock_change_ns %lld\n",
                  i, g.locked_sm_clock_mhz, g.sets, g.resets, g.energy_mj, static_cast<long long>(g.updated_ns),
                  g.true_energy_mj, g.sampled_mj, static_cast<long long>(g.period_start_ns),
                  g.previous_sm_clock_mhz, static_cast<long long>(g.clock_change_ns));
    out += line;
  }
  return out;
}

// Lines that do not parse are skipped; GPUs missing from the text get the
// default (unlocked, zero) state. Of the key-value pairs after updated_ns,
// unknown ones are ignored and missing ones keep their defaults (true_energy_mj: energy_mj;
// period_start_ns: updated_ns).
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
    s.true_energy_mj = s.energy_mj;
    s.period_start_ns = s.updated_ns;
    std::string key, value;
    while (fields >> key >> value) {
      if (key == "true_energy_mj") s.true_energy_mj = std::strtod(value.c_str(), nullptr);
      if (key == "sampled_mj") s.sampled_mj = std::strtod(value.c_str(), nullptr);
      if (key == "period_start_ns") s.period_start_ns = std::strtoll(value.c_str(), nullptr, 10);
      if (key == "previous_sm_clock_mhz") s.previous_sm_clock_mhz = std::atoi(value.c_str());
      if (key == "clock_change_ns") s.clock_change_ns = std::strtoll(value.c_str(), nullptr, 10);
    }
    if (gpus.size() <= index) gpus.resize(index + 1);
    gpus[index] = s;
  }
  return gpus;
}

}  // namespace perseus::runtime
