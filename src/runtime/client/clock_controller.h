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
#include <vector>

#include "runtime/gpu/gpu_control.h"

namespace perseus::client {

class ClockController {
 public:
  static constexpr int kUnlocked = 0;  // a request for the driver's own clocks
  static constexpr int kNone = -1;     // nothing requested or applied yet

  // `now_s` is the rank's clock, the one the GPU runs on (virtual time in
  // emulations); switch latencies are measured in it. Empty: steady_clock.
  explicit ClockController(std::shared_ptr<runtime::GpuControl> gpu, runtime::SecondsClock now_s = {});
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
  // How long a newly locked clock takes to take effect: the median over the
  // latest kMaxLatencySamples switches (seconds; -1 before the first).
  // For a real GPU, the lock call's duration (real time): on an H200 the
  // computations ran at the new clock's speed once the call returned
  // (8-25 ms), while NVML showed the new clock only 35-130 ms after it, so
  // polling NVML would overstate the latency fivefold (docs/real_gpu.md).
  // A GPU that reports when its lock took effect (ReportsClockEffect, the
  // simulated GPU) gives the exact latency on the rank's clock instead: a
  // second thread samples at most one switch a second, the first that then
  // holds, polling every kProbePollS of real time until the GPU reports it,
  // a newer lock supersedes it, or kProbeMaxS passes on the rank's clock or
  // kProbeMaxWallS in real time (no sample). The lock calls never wait for it.
  double switch_latency_s() const;
  int switch_latency_samples() const;
  int64_t errors() const { return errors_.load(); }
  std::string last_error() const;

 private:
  static constexpr double kProbePollS = 0.001;
  static constexpr double kProbeMaxS = 0.3;
  static constexpr double kProbeMaxWallS = 5.0;
  static constexpr double kProbeEveryS = 1.0;
  static constexpr size_t kMaxLatencySamples = 31;

  void Loop();
  void Apply(int sm_clock_mhz);
  void ProbeLoop();
  // Polls until the GPU reports that `sm_clock_mhz` took effect; records a
  // sample if it does (GPUs with ReportsClockEffect only).
  void Probe(int sm_clock_mhz, double applied_at_s, uint32_t apply_seq);
  void AddLatencySample(double latency_s);

  std::shared_ptr<runtime::GpuControl> gpu_;
  const runtime::SecondsClock now_s_;
  std::atomic<int> requested_{kNone};
  std::atomic<int> applied_{kNone};
  std::atomic<uint32_t> seq_{0};
  std::atomic<bool> stop_{false};
  std::atomic<int64_t> changes_{0}, errors_{0};
  mutable std::mutex gpu_mu_;  // serialises GPU calls and last_error_
  std::string last_error_;
  std::atomic<uint32_t> apply_seq_{0};  // bumped by every successful lock
  std::atomic<double> applied_at_s_{0};  // on now_s_
  mutable std::mutex latency_mu_;
  std::vector<double> latency_samples_s_;  // guarded by latency_mu_; the latest kMaxLatencySamples
  std::thread thread_;
  std::thread probe_thread_;
};

// Unlocks the clocks of every registered controller on SIGINT/SIGTERM and at
// process exit. A previous handler of the signal (e.g. Python's SIGINT
// handler) still runs; with no previous handler the signal's default action
// (termination) follows once the clocks are unlocked.
void RegisterForRestore(ClockController* controller);
void UnregisterForRestore(ClockController* controller);

}  // namespace perseus::client
