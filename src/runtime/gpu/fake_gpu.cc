// FakeGpu: in-memory clock state for tests.
#include "runtime/gpu/fake_gpu.h"

namespace perseus::runtime {
namespace {

std::vector<int> A100ClocksMhz() {
  std::vector<int> clocks;
  for (int f = 1410; f >= 210; f -= 15) clocks.push_back(f);
  return clocks;
}

}  // namespace

FakeGpu::FakeGpu(int index) : FakeGpu(index, A100ClocksMhz()) {}

FakeGpu::FakeGpu(int index, std::vector<int> supported_mhz)
    : label_("GPU " + std::to_string(index)),
      uuid_("GPU-fake-" + std::to_string(index)),
      supported_mhz_(std::move(supported_mhz)) {}

int FakeGpu::LockedSmClockMhz() const {
  std::lock_guard<std::mutex> lock(mu_);
  return locked_sm_clock_mhz_;
}

int FakeGpu::SetCount() const {
  std::lock_guard<std::mutex> lock(mu_);
  return set_count_;
}

int FakeGpu::ResetCount() const {
  std::lock_guard<std::mutex> lock(mu_);
  return reset_count_;
}

void FakeGpu::SetEnergyJ(double energy_j) {
  std::lock_guard<std::mutex> lock(mu_);
  energy_j_ = energy_j;
}

void FakeGpu::SetPowerW(double power_w) {
  std::lock_guard<std::mutex> lock(mu_);
  power_w_ = power_w;
}

void FakeGpu::SetError(Status error) {
  std::lock_guard<std::mutex> lock(mu_);
  error_ = std::move(error);
}

Status FakeGpu::SetSmClockMhz(int sm_clock_mhz) {
  PERSEUS_RETURN_IF_ERROR(CheckSupportedSmClock(supported_mhz_, sm_clock_mhz, label_));
  std::lock_guard<std::mutex> lock(mu_);
  if (!error_.ok()) return error_;
  locked_sm_clock_mhz_ = sm_clock_mhz;
  set_count_++;
  return Status::Ok();
}

Status FakeGpu::ResetSmClock() {
  std::lock_guard<std::mutex> lock(mu_);
  if (!error_.ok()) return error_;
  locked_sm_clock_mhz_ = 0;
  reset_count_++;
  return Status::Ok();
}

Result<double> FakeGpu::TotalEnergyJ() {
  std::lock_guard<std::mutex> lock(mu_);
  return energy_j_;
}

Result<double> FakeGpu::PowerW() {
  std::lock_guard<std::mutex> lock(mu_);
  return power_w_;
}

}  // namespace perseus::runtime
