// ClockController: sets the GPU's SM clock on its own thread, so the training
// thread never waits for NVML or the node daemon.
//
// Request() is the hot-path call: when the clock differs from the last
// request it stores it and wakes the controller thread (a futex wake), else
// it returns at once. The controller applies the latest request only; a
// request overtaken by a newer one is skipped. Restore() unlocks the clock
// immediately (exit, signals). Thread safety: thread-safe.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <thread>

#include "runtime/gpu/gpu_control.h"

namespace perseus::client {

class ClockController {
 public:
  static constexpr int kUnlocked = 0;  // a request for the driver's own clocks
  static constexpr int kNone = -1;     // nothing requested or applied yet

  explicit ClockController(std::shared_ptr<runtime::GpuControl> gpu);
  ~ClockController();  // stops the thread and unlocks the clock
  ClockController(const ClockController&) = delete;
  ClockController& operator=(const ClockController&) = delete;

  // Asks for `sm_clock_mhz` (kUnlocked to unlock). Never blocks on the GPU.
  void Request(int sm_clock_mhz) {
    if (requested_.load(std::memory_order_relaxed) == sm_clock_mhz) return;
    requested_.store(sm_clock_mhz, std::memory_order_release);
    seq_.fetch_add(1, std::memory_order_release);
    seq_.notify_one();
  }
  int requested() const { return requested_.load(std::memory_order_acquire); }
  // The clock the GPU was last set to (kUnlocked after Restore()).
  int applied() const { return applied_.load(std::memory_order_acquire); }
  bool Settled() const { return applied() == requested(); }
  // Unlocks the GPU's clock now, from any thread.
  void Restore();
  int64_t clock_changes() const { return changes_.load(); }
  int64_t errors() const { return errors_.load(); }
  std::string last_error() const;

 private:
  void Loop();
  void Apply(int sm_clock_mhz);

  std::shared_ptr<runtime::GpuControl> gpu_;
  std::atomic<int> requested_{kNone};
  std::atomic<int> applied_{kNone};
  std::atomic<uint32_t> seq_{0};
  std::atomic<bool> stop_{false};
  std::atomic<int64_t> changes_{0}, errors_{0};
  mutable std::mutex gpu_mu_;  // serialises GPU calls and last_error_
  std::string last_error_;
  std::thread thread_;
};

// Unlocks the clocks of every registered controller on SIGINT/SIGTERM and at
// process exit. A previous handler of the signal (e.g. Python's SIGINT
// handler) still runs; with no previous handler the signal's default action
// (termination) follows once the clocks are unlocked.
void RegisterForRestore(ClockController* controller);
void UnregisterForRestore(ClockController* controller);

}  // namespace perseus::client
