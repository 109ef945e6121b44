#include "runtime/client/clock_controller.h"

namespace perseus::client {

ClockController::ClockController(std::shared_ptr<runtime::GpuControl> gpu)
    : gpu_(std::move(gpu)), thread_([this] { Loop(); }) {}

ClockController::~ClockController() {
  stop_.store(true);
  seq_.fetch_add(1);
  seq_.notify_one();
  thread_.join();
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
  Status st = sm_clock_mhz == kUnlocked ? gpu_->ResetSmClock() : gpu_->SetSmClockMhz(sm_clock_mhz);
  if (!st.ok()) {
    ++errors_;
    last_error_ = st.ToString();
  }
  ++changes_;
  // Recorded even on failure so a refused clock is not retried in a loop.
  applied_.store(sm_clock_mhz, std::memory_order_release);
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
