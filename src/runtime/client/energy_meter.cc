// EnergyMeter: counter steps with their times, interpolated.
#include "runtime/client/energy_meter.h"

#include <algorithm>
#include <chrono>

namespace perseus::client {

EnergyMeter::EnergyMeter(std::shared_ptr<runtime::GpuControl> gpu, std::function<double()> now_s,
                         double poll_interval_s)
    : gpu_(std::move(gpu)), now_s_(std::move(now_s)), poll_interval_s_(std::max(poll_interval_s, 1e-4)) {
  gpu_reports_steps_ = gpu_->CounterUpdatesAfter(now_s_()).has_value();
  if (!gpu_reports_steps_) poller_ = std::thread([this] { PollLoop(); });
}

EnergyMeter::~EnergyMeter() { Stop(); }

void EnergyMeter::Stop() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stop_ = true;
  }
  cv_.notify_all();
  if (poller_.joinable()) poller_.join();
}

void EnergyMeter::AddStep(double time_s, double energy_j) {
  if (!steps_.empty() && time_s <= steps_.back().time_s) return;
  if (!steps_.empty()) {
    const double gap_s = time_s - steps_.back().time_s;
    stats_.mean_step_s += (gap_s - stats_.mean_step_s) / static_cast<double>(stats_.steps);
  }
  ++stats_.steps;
  steps_.push_back({time_s, energy_j});
  while (steps_.size() > 2 && steps_.back().time_s - steps_.front().time_s > kKeepS) steps_.pop_front();
}

void EnergyMeter::PullReportedSteps() {
  const double after_s = steps_.empty() ? -1e300 : steps_.back().time_s;
  std::optional<std::vector<runtime::GpuControl::CounterUpdate>> fresh = gpu_->CounterUpdatesAfter(after_s);
  if (!fresh) return;
  for (const auto& u : *fresh) AddStep(u.time_s, u.energy_j);
}

void EnergyMeter::PollLoop() {
  double previous_poll_s = now_s_();
  std::unique_lock<std::mutex> lock(mu_);
  while (!stop_) {
    lock.unlock();
    const double before_s = now_s_();
    Result<double> value = gpu_->TotalEnergyJ();
    lock.lock();
    if (!value.ok()) {
      ++stats_.read_errors;
      stats_.last_error = value.status().ToString();
    } else if (!last_value_j_ || *value != *last_value_j_) {
      // The step happened between the previous poll and this one.
      if (last_value_j_) AddStep((previous_poll_s + before_s) / 2, *value);
      last_value_j_ = *value;
    }
    previous_poll_s = before_s;
    cv_.wait_for(lock, std::chrono::duration<double>(poll_interval_s_), [&] { return stop_; });
  }
}

std::optional<double> EnergyMeter::EnergyAtS(double time_s) {
  std::lock_guard<std::mutex> lock(mu_);
  if (gpu_reports_steps_) PullReportedSteps();
  if (steps_.size() < 2 || time_s < steps_.front().time_s || time_s > steps_.back().time_s) return std::nullopt;
  auto after = std::lower_bound(steps_.begin(), steps_.end(), time_s,
                                [](const runtime::GpuControl::CounterUpdate& u, double t) { return u.time_s < t; });
  if (after == steps_.begin()) return after->energy_j;
  auto before = std::prev(after);
  const double span_s = after->time_s - before->time_s;
  const double share = span_s > 0 ? (time_s - before->time_s) / span_s : 1.0;
  return before->energy_j + share * (after->energy_j - before->energy_j);
}

std::optional<double> EnergyMeter::EnergyBetweenJ(double begin_s, double end_s) {
  std::optional<double> end = EnergyAtS(end_s);
  if (!end) return std::nullopt;
  std::optional<double> begin = EnergyAtS(begin_s);
  if (!begin) return std::nullopt;
  return std::max(0.0, *end - *begin);
}

EnergyMeter::Stats EnergyMeter::GetStats() const {
  std::lock_guard<std::mutex> lock(mu_);
  return stats_;
}

}  // namespace perseus::client
