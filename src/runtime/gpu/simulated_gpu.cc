// SimulatedGpu: piecewise-constant power integrated over an injected clock.
#include "runtime/gpu/simulated_gpu.h"

#include <algorithm>

namespace perseus::runtime {

SimulatedGpu::SimulatedGpu(GpuSpec spec, int index, SecondsClock now_s)
    : spec_(std::move(spec)),
      label_("GPU " + std::to_string(index)),
      uuid_("SIM-" + std::to_string(index) + "-" + spec_.name),
      now_s_(std::move(now_s)),
      accounted_until_s_(now_s_()) {}

Result<std::unique_ptr<SimulatedGpu>> SimulatedGpu::Create(const std::string& gpu_name, int index,
                                                           SecondsClock now_s) {
  Result<GpuSpec> spec = FindGpu(gpu_name);
  if (!spec.ok()) return spec.status().WithContext(std::string("simulated GPU ") + std::to_string(index));
  return std::make_unique<SimulatedGpu>(std::move(spec).value(), index, std::move(now_s));
}

double SimulatedGpu::WaitingPowerW() const {
  return spec_.blocking_power_w > 0 ? spec_.blocking_power_w : spec_.idle_power_w;
}

void SimulatedGpu::AdvanceTo(double now_s) {
  while (accounted_until_s_ < now_s) {
    if (busy_.empty() || now_s <= busy_.front().start_s) {
      energy_j_ += WaitingPowerW() * (now_s - accounted_until_s_);
      accounted_until_s_ = now_s;
      return;
    }
    const Busy& b = busy_.front();
    if (accounted_until_s_ < b.start_s) {
      energy_j_ += WaitingPowerW() * (b.start_s - accounted_until_s_);
      accounted_until_s_ = b.start_s;
    }
    const double end_s = std::min(now_s, b.end_s);
    energy_j_ += b.power_w * (end_s - accounted_until_s_);
    accounted_until_s_ = end_s;
    if (accounted_until_s_ >= b.end_s) busy_.pop_front();
  }
}

OperatingPoint SimulatedGpu::Run(const KernelWork& work) {
  std::lock_guard<std::mutex> lock(mu_);
  const double now_s = now_s_();
  AdvanceTo(now_s);
  const int clock_mhz = locked_sm_clock_mhz_ > 0 ? locked_sm_clock_mhz_ : spec_.max_sm_clock_mhz;
  OperatingPoint op = ModelComputation(spec_, work, clock_mhz);
  double start_s = std::max(now_s, busy_.empty() ? now_s : busy_.back().end_s);
  if (op.time_s > 0) busy_.push_back(Busy{start_s, start_s + op.time_s, op.power_w});
  return op;
}

int SimulatedGpu::CurrentSmClockMhz() const {
  std::lock_guard<std::mutex> lock(mu_);
  return locked_sm_clock_mhz_ > 0 ? locked_sm_clock_mhz_ : spec_.max_sm_clock_mhz;
}

Status SimulatedGpu::SetSmClockMhz(int sm_clock_mhz) {
  PERSEUS_RETURN_IF_ERROR(CheckSupportedSmClock(spec_.supported_sm_clocks_mhz, sm_clock_mhz, label_));
  std::lock_guard<std::mutex> lock(mu_);
  locked_sm_clock_mhz_ = sm_clock_mhz;
  return Status::Ok();
}

Status SimulatedGpu::ResetSmClock() {
  std::lock_guard<std::mutex> lock(mu_);
  locked_sm_clock_mhz_ = 0;
  return Status::Ok();
}

Result<double> SimulatedGpu::TotalEnergyJ() {
  std::lock_guard<std::mutex> lock(mu_);
  AdvanceTo(now_s_());
  return energy_j_;
}

Result<double> SimulatedGpu::PowerW() {
  std::lock_guard<std::mutex> lock(mu_);
  const double now_s = now_s_();
  AdvanceTo(now_s);
  for (const Busy& b : busy_) {
    if (b.start_s <= now_s && now_s < b.end_s) return b.power_w;
  }
  return WaitingPowerW();
}

}  // namespace perseus::runtime
