// MeasureOnlyGpu: a GpuControl that measures energy but never changes clocks.
//
// The fallback when clock control is denied (no root and no perseusd, NVML
// says NO_PERMISSION or NOT_SUPPORTED): the rank keeps running its plan and
// reporting real energy, and SetSmClockMhz only validates and records the
// requested clock. OpenGpu (open_gpu.h) returns one when its probe is refused.
// Thread safety: thread-safe if the wrapped GpuControl is (all of ours are).
#pragma once

#include <memory>
#include <mutex>
#include <string>

#include "runtime/gpu/gpu_control.h"

namespace perseus::runtime {

class MeasureOnlyGpu : public GpuControl {
 public:
  // `reason` says why clocks are not set, e.g. the NVML error of the probe;
  // `label` starts error messages, e.g. "GPU 0".
  MeasureOnlyGpu(std::unique_ptr<GpuControl> inner, std::string reason, std::string label);

  const std::string& reason() const { return reason_; }
  // The clock last passed to SetSmClockMhz; 0 initially and after ResetSmClock.
  int RequestedSmClockMhz() const;

  std::string Name() const override { return inner_->Name(); }
  std::string Uuid() const override { return inner_->Uuid(); }
  Result<std::vector<int>> SupportedSmClocksMhz() override { return inner_->SupportedSmClocksMhz(); }
  // Validates `sm_clock_mhz` against the supported clocks and records it.
  Status SetSmClockMhz(int sm_clock_mhz) override;
  Status ResetSmClock() override;
  Result<double> TotalEnergyJ() override { return inner_->TotalEnergyJ(); }
  Result<double> PowerW() override { return inner_->PowerW(); }
  bool MeasureOnly() const override { return true; }
  std::optional<std::vector<CounterUpdate>> CounterUpdatesAfter(double after_time_s) override {
    return inner_->CounterUpdatesAfter(after_time_s);
  }

 private:
  std::unique_ptr<GpuControl> inner_;
  std::string reason_;
  std::string label_;
  mutable std::mutex mu_;
  int requested_sm_clock_mhz_ = 0;  // guarded by mu_
};

}  // namespace perseus::runtime
