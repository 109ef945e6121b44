#include "runtime/client/clock_controller.h"

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <limits>

#include "common/stats.h"

namespace perseus::client {

ClockController::ClockController(std::shared_ptr<runtime::GpuControl> gpu, runtime::SecondsClock now_s)
    : gpu_(std::move(gpu)),
      now_s_(now_s ? std::move(now_s) : runtime::SteadySeconds()),
      thread_([this] { Loop(); }),
      probe_thread_([this] { ProbeLoop(); }) {}

ClockController::~ClockController() {
  stop_.store(true);
  seq_.fetch_add(1);
  seq_.notify_one();
  apply_seq_.fetch_add(1);
  apply_seq_.notify_one();
  thread_.join();
  probe_thread_.join();
  Restore();
}

void ClockController::Loop() {
  while (true) {
    const uint32_t seen = seq_.load(std::memory_order_acquire);
    if (stop_.load()) return;
    const int want = requested_.load(std::memory_order_acquire);
    if (want != kNone && want != applied_.load(std::memory_order_acquire)) Apply(want);
    seq_.wait(seen, std::memory_order_acquire);
  }
}

void ClockController::Apply(int sm_clock_mhz) {
  std::lock_guard<std::mutex> lock(gpu_mu_);
  const auto call_start = std::chrono::steady_clock::now();
  Status st = sm_clock_mhz == kUnlocked ? gpu_->ResetSmClock() : gpu_->SetSmClockMhz(sm_clock_mhz);
  const double call_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - call_start).count();
  if (!st.ok()) {
    ++errors_;
    last_error_ = st.ToString();
  }
  ++changes_;
  // Recorded even on failure so a refused clock is not retried in a loop.
  applied_.store(sm_clock_mhz, std::memory_order_release);
  if (!st.ok() || sm_clock_mhz == kUnlocked) return;
  if (!gpu_->ReportsClockEffect()) {
    AddLatencySample(call_s);  // in effect when the call returns, as on an H200 (switch_latency_s)
  } else {  // the probe thread asks the GPU when
    applied_at_s_.store(now_s_(), std::memory_order_release);
    apply_seq_.fetch_add(1, std::memory_order_release);
    apply_seq_.notify_one();
  }
}

void ClockController::ProbeLoop() {
  uint32_t seen = 0;  // apply_seq_'s initial value: a lock before this thread started still counts
  double last_probe_s = -std::numeric_limits<double>::infinity();  // none yet
  while (true) {
    apply_seq_.wait(seen, std::memory_order_acquire);
    if (stop_.load()) return;
    seen = apply_seq_.load(std::memory_order_acquire);
    const int clock = applied_.load(std::memory_order_acquire);
    const double at_s = applied_at_s_.load(std::memory_order_acquire);
    if (at_s - last_probe_s < kProbeEveryS) continue;
    last_probe_s = at_s;
    Probe(clock, at_s, seen);
  }
}

void ClockController::Probe(int sm_clock_mhz, double applied_at_s, uint32_t apply_seq) {
  const auto wall_deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(kProbeMaxWallS);
  while (!stop_.load() && apply_seq_.load(std::memory_order_acquire) == apply_seq) {
    Result<int> achieved = Status::Unavailable("");
    std::optional<double> effective_since_s;
    {
      std::lock_guard<std::mutex> lock(gpu_mu_);
      achieved = gpu_->AchievedSmClockMhz();
      effective_since_s = gpu_->ClockLockEffectiveSinceS();
    }
    if (achieved.ok() && std::abs(*achieved - sm_clock_mhz) <= 1 && effective_since_s) {
      AddLatencySample(std::max(0.0, *effective_since_s - applied_at_s));  // exact, however coarsely its clock moves
      return;
    }
    if (now_s_() - applied_at_s > kProbeMaxS || std::chrono::steady_clock::now() > wall_deadline) return;
    std::this_thread::sleep_for(std::chrono::duration<double>(kProbePollS));
  }
}

void ClockController::AddLatencySample(double latency_s) {
  std::lock_guard<std::mutex> lock(latency_mu_);
  if (latency_samples_s_.size() == kMaxLatencySamples) latency_samples_s_.erase(latency_samples_s_.begin());
  latency_samples_s_.push_back(latency_s);
}

double ClockController::switch_latency_s() const {
  std::lock_guard<std::mutex> lock(latency_mu_);
  return latency_samples_s_.empty() ? -1 : Median(latency_samples_s_);
}

int ClockController::switch_latency_samples() const {
  std::lock_guard<std::mutex> lock(latency_mu_);
  return static_cast<int>(latency_samples_s_.size());
}

void ClockController::Restore() {
  std::lock_guard<std::mutex> lock(gpu_mu_);
  if (applied_.load() == kUnlocked || applied_.load() == kNone) return;
  Status st = gpu_->ResetSmClock();
  if (!st.ok()) {
    ++errors_;
    last_error_ = st.ToString();
  }
  applied_.store(kUnlocked, std::memory_order_release);
  requested_.store(kUnlocked, std::memory_order_release);
}

std::string ClockController::last_error() const {
  std::lock_guard<std::mutex> lock(gpu_mu_);
  return last_error_;
}

}  // namespace perseus::client
