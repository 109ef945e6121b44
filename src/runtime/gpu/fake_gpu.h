// FakeGpu: an in-memory GpuControl for unit tests of code that drives GPUs
// (the node daemon, the rank client).
//
// It records the locked clock and how often it was set and reset; the energy
// counter and power are whatever the test sets. SetError makes clock calls
// fail, to exercise error paths. Unlike the fake libnvidia-ml (fake_nvml/),
// it involves no NVML code at all.
// Thread safety: thread-safe; tests may inspect it while another thread uses it.
#pragma once

#include <mutex>
#include <string>
#include <vector>

#include "runtime/gpu/gpu_control.h"

namespace perseus::runtime {

class FakeGpu : public GpuControl {
 public:
  // A100-like: "Fake A100", clocks 1410, 1395, ..., 210 MHz.
  explicit FakeGpu(int index);
  FakeGpu(int index, std::vector<int> supported_mhz);

  // 0 when unlocked.
  int LockedSmClockMhz() const;
  int SetCount() const;
  int ResetCount() const;
  void SetEnergyJ(double energy_j);
  void SetPowerW(double power_w);
  // Every later SetSmClockMhz/ResetSmClock returns `error` (Ok() to clear).
  void SetError(Status error);

  std::string Name() const override { return "Fake A100"; }
  std::string Uuid() const override { return uuid_; }
  Result<std::vector<int>> SupportedSmClocksMhz() override { return supported_mhz_; }
  Status SetSmClockMhz(int sm_clock_mhz) override;
  Status ResetSmClock() override;
  Result<double> TotalEnergyJ() override;
  Result<double> PowerW() override;

 private:
  std::string label_;
  std::string uuid_;
  std::vector<int> supported_mhz_;
  mutable std::mutex mu_;
  int locked_sm_clock_mhz_ = 0;  // guarded by mu_, and the fields below
  int set_count_ = 0;
  int reset_count_ = 0;
  double energy_j_ = 0;
  double power_w_ = 0;
  Status error_;
};

}  // namespace perseus::runtime
