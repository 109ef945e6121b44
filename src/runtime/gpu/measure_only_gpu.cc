// MeasureOnlyGpu: records requested clocks, forwards measurements.
#include "runtime/gpu/measure_only_gpu.h"

namespace perseus::runtime {

MeasureOnlyGpu::MeasureOnlyGpu(std::unique_ptr<GpuControl> inner, std::string reason, std::string label)
    : inner_(std::move(inner)), reason_(std::move(reason)), label_(std::move(label)) {}

int MeasureOnlyGpu::RequestedSmClockMhz() const {
  std::lock_guard<std::mutex> lock(mu_);
  return requested_sm_clock_mhz_;
}

Status MeasureOnlyGpu::SetSmClockMhz(int sm_clock_mhz) {
  Result<std::vector<int>> supported = inner_->SupportedSmClocksMhz();
  if (!supported.ok()) return supported.status();
  PERSEUS_RETURN_IF_ERROR(CheckSupportedSmClock(*supported, sm_clock_mhz, label_));
  std::lock_guard<std::mutex> lock(mu_);
  requested_sm_clock_mhz_ = sm_clock_mhz;
  return Status::Ok();
}

Status MeasureOnlyGpu::ResetSmClock() {
  std::lock_guard<std::mutex> lock(mu_);
  requested_sm_clock_mhz_ = 0;
  return Status::Ok();
}

}  // namespace perseus::runtime
