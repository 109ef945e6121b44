// GpuControl: what the perseus runtime needs from one GPU.
//
// Perseus sets the SM clock of a GPU before each forward/backward computation
// and reads the GPU's energy counter to report what a plan saved. This
// interface hides where that happens: in-process through NVML (NvmlGpu), in
// the root-owned node daemon perseusd (DaemonGpu), in the built-in GPU model
// for emulated ranks (SimulatedGpu), or nowhere when clock control is denied
// (MeasureOnlyGpu). See docs/gpu_control.md.
//
// Errors name the GPU ("GPU 0: ..."). Codes: kInvalidArgument for a clock the
// GPU does not support, kUnavailable when the GPU or driver refuses clock
// control (no permission, not supported), kNotFound for a missing library or
// GPU, kIoError for a broken daemon connection, kInternal for anything else.
//
// Thread safety: every implementation is thread-safe; methods may be called
// concurrently from several threads.
#pragma once

#include <optional>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "perseus/status.h"

namespace perseus::runtime {

// Current time in seconds since an arbitrary origin, non-decreasing: a GPU's
// and its rank's clock (steady_clock, or virtual time in emulations).
using SecondsClock = std::function<double()>;
// steady_clock in seconds.
SecondsClock SteadySeconds();

class GpuControl {
 public:
  virtual ~GpuControl() = default;

  // Product name, e.g. "NVIDIA A100-SXM4-40GB".
  virtual std::string Name() const = 0;
  // Stable identifier, e.g. "GPU-4b1c...". Unique per physical GPU.
  virtual std::string Uuid() const = 0;

  // The SM clocks this GPU can be locked to, descending.
  virtual Result<std::vector<int>> SupportedSmClocksMhz() = 0;
  // Locks the SM clock to `sm_clock_mhz` (minimum = maximum = the value).
  // REQUIRES: sm_clock_mhz is one of SupportedSmClocksMhz(); other values are
  // refused with kInvalidArgument and a message naming the value.
  virtual Status SetSmClockMhz(int sm_clock_mhz) = 0;
  // Unlocks the SM clock: the driver picks clocks again.
  virtual Status ResetSmClock() = 0;

  // Energy drawn since an arbitrary origin; monotonic non-decreasing.
  // Subtract two readings to get the energy of an interval.
  virtual Result<double> TotalEnergyJ() = 0;
  // Current board power draw.
  virtual Result<double> PowerW() = 0;

  // True when SetSmClockMhz only records the request and never changes the
  // GPU (MeasureOnlyGpu); energy readings are still real.
  virtual bool MeasureOnly() const { return false; }

  // The SM clock the GPU runs at now (NVML_CLOCK_SM). It can differ from the
  // locked clock: a lock takes effect after a delay, and power or thermal
  // capping may hold the GPU below it (NVIDIA open-gpu-kernel-modules #1314).
  // kUnavailable when the backend cannot tell.
  virtual Result<int> AchievedSmClockMhz() { return Status::Unavailable("achieved SM clock not available"); }
  // GPUs that know when their last clock lock took effect (the simulated GPU)
  // say so here and return that time from ClockLockEffectiveSinceS, on the
  // clock the GPU was made with, once it has. Others return nothing: for
  // them the lock call's duration is the best measure of when a lock takes
  // effect. NVML's reported clock is not: on an H200 it showed a new clock
  // 35-130 ms after the call, while computations ran at the new clock's
  // speed from the call's return, 8-25 ms (docs/real_gpu.md, "Clock switches
  // as the computations see them").
  virtual bool ReportsClockEffect() const { return false; }
  virtual std::optional<double> ClockLockEffectiveSinceS() { return std::nullopt; }

  // One step of the energy counter: at `time_s` (the clock the GPU was made
  // with) the counter became `energy_j`.
  struct CounterUpdate {
    double time_s = 0;
    double energy_j = 0;
  };
  // GPUs that know when their energy counter stepped (the simulated GPU)
  // return every step after `after_time_s`, oldest first; others return
  // nothing and the caller finds the steps by polling TotalEnergyJ().
  virtual std::optional<std::vector<CounterUpdate>> CounterUpdatesAfter(double after_time_s) {
    (void)after_time_s;
    return std::nullopt;
  }
};

// Ok if `sm_clock_mhz` is in `supported_mhz`; else kInvalidArgument:
// "<gpu_label>: 1412 MHz is not a supported SM clock (nearest: 1410 MHz;
// supported: 210-1410 MHz)". Shared by the implementations so the text is one.
Status CheckSupportedSmClock(const std::vector<int>& supported_mhz, int sm_clock_mhz, const std::string& gpu_label);

}  // namespace perseus::runtime
