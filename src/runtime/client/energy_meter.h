// EnergyMeter: a GPU's energy at any past instant, from a counter that steps.
//
// NVML's total-energy counter on A100/H100 advances only about every 100 ms
// (docs/gpu_control.md, "The realistic GPU"), so a reading taken at the start
// and end of a 1-50 ms computation says almost nothing. The meter instead
// records each step of the counter with the time it happened and answers
// EnergyAtS(t) by interpolating linearly between the steps around t; the
// error of an interval is then a fraction of one step at each end instead of
// up to a whole step.
//
// Steps come from the GPU itself when it knows them (the simulated GPU:
// GpuControl::CounterUpdatesAfter) or from a poll thread that reads
// TotalEnergyJ() every `poll_interval_s` and notes when the value changed
// (the step time is then known to within one poll interval). Either way no
// energy is read on the training thread.
// Thread safety: thread-safe.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>

#include "runtime/gpu/gpu_control.h"

namespace perseus::client {

class EnergyMeter {
 public:
  struct Stats {
    int64_t steps = 0;          // counter steps seen
    double mean_step_s = 0;     // mean time between steps (0 before two)
    int64_t read_errors = 0;
    std::string last_error;
  };

  // `now_s` must be the clock the GPU's CounterUpdatesAfter uses (for a
  // simulated GPU, the same virtual clock). Starts polling at once unless the
  // GPU reports its steps.
  EnergyMeter(std::shared_ptr<runtime::GpuControl> gpu, std::function<double()> now_s, double poll_interval_s);
  ~EnergyMeter();
  EnergyMeter(const EnergyMeter&) = delete;
  EnergyMeter& operator=(const EnergyMeter&) = delete;

  // The counter's value interpolated at `time_s`; nothing until a step at or
  // after `time_s` has been seen, or when `time_s` predates the oldest kept
  // step (the meter keeps `kKeepS` seconds).
  std::optional<double> EnergyAtS(double time_s);
  // Energy between two instants (EnergyAtS(end) - EnergyAtS(begin)).
  std::optional<double> EnergyBetweenJ(double begin_s, double end_s);
  Stats GetStats() const;
  void Stop();

  static constexpr double kKeepS = 3600;

 private:
  void PollLoop();
  void PullReportedSteps();      // REQUIRES: mu_ held
  void AddStep(double time_s, double energy_j);  // REQUIRES: mu_ held

  std::shared_ptr<runtime::GpuControl> gpu_;
  const std::function<double()> now_s_;
  const double poll_interval_s_;
  bool gpu_reports_steps_ = false;

  mutable std::mutex mu_;
  std::condition_variable cv_;
  bool stop_ = false;
  std::deque<runtime::GpuControl::CounterUpdate> steps_;  // oldest first; guarded by mu_
  std::optional<double> last_value_j_;
  Stats stats_;
  std::thread poller_;
};

}  // namespace perseus::client
