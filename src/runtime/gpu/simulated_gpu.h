// SimulatedGpu: a GpuControl backed by the built-in GPU model, for emulated
// ranks (no GPU needed).
//
// It keeps the SM clock the rank asked for and an energy counter driven by an
// injected clock: the rank calls Run(work) when a computation starts, gets the
// modelled duration back (and advances its own, possibly virtual, time by it),
// and the counter integrates the modelled power over that interval and the
// waiting power (the spec's blocking power, or its idle power if that is 0)
// over every other interval. Deterministic for a deterministic clock.
// Thread safety: thread-safe.
#pragma once

#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <string>

#include "perseus/gpu_model.h"
#include "runtime/gpu/gpu_control.h"

namespace perseus::runtime {

// Current time in seconds since an arbitrary origin, non-decreasing.
using SecondsClock = std::function<double()>;

class SimulatedGpu : public GpuControl {
 public:
  // REQUIRES: spec.max_sm_clock_mhz > 0 and a non-empty supported clock list.
  SimulatedGpu(GpuSpec spec, int index, SecondsClock now_s);
  // `gpu_name` as accepted by FindGpu ("a100", "H100-SXM5-80GB", ...).
  static Result<std::unique_ptr<SimulatedGpu>> Create(const std::string& gpu_name, int index, SecondsClock now_s);

  // A computation of `work` is launched now at the current SM clock. It runs
  // from now, or from the end of the computation still running, for the
  // modelled time. Returns the modelled time, power and energy.
  OperatingPoint Run(const KernelWork& work);
  // The locked SM clock, or the maximum when unlocked.
  int CurrentSmClockMhz() const;
  const GpuSpec& spec() const { return spec_; }

  std::string Name() const override { return spec_.name; }
  std::string Uuid() const override { return uuid_; }
  Result<std::vector<int>> SupportedSmClocksMhz() override { return spec_.supported_sm_clocks_mhz; }
  Status SetSmClockMhz(int sm_clock_mhz) override;
  Status ResetSmClock() override;
  Result<double> TotalEnergyJ() override;
  Result<double> PowerW() override;

 private:
  struct Busy {
    double start_s;
    double end_s;
    double power_w;
  };
  // Integrates energy up to `now_s`; REQUIRES: mu_ held.
  void AdvanceTo(double now_s);
  double WaitingPowerW() const;

  const GpuSpec spec_;
  const std::string label_;
  const std::string uuid_;
  const SecondsClock now_s_;
  mutable std::mutex mu_;
  int locked_sm_clock_mhz_ = 0;  // 0: unlocked; guarded by mu_, and the fields below
  double accounted_until_s_;
  double energy_j_ = 0;
  std::deque<Busy> busy_;  // sorted, non-overlapping, ending after accounted_until_s_
};

}  // namespace perseus::runtime
