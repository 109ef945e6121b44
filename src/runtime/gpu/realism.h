// How far the simulated GPU and the fake NVML behave like real hardware.
//
// GpuRealism lists every imperfection the simulated GPU (simulated_gpu.h)
// reproduces: a coarse energy counter, a clock lock that takes effect late and
// may not be reached, run-to-run time jitter and outliers, thermal drift of
// power, and power variation between GPUs of one model. Each behaviour, its
// default and its source are in docs/gpu_control.md ("The realistic GPU").
// CoarseEnergyCounter is the counter itself, shared by SimulatedGpu and the
// fake libnvidia-ml (fake_nvml/), so both step the same way.
//
// Light on purpose (the standard library and perseus_common only): the fake
// NVML shared library links it.
// Thread safety: GpuRealism and the functions are plain values; a
// CoarseEnergyCounter is not synchronised (its owner locks).
#pragma once

#include <cstdint>
#include <deque>
#include <string>
#include <vector>

#include "perseus/status.h"
#include "runtime/gpu/gpu_control.h"

namespace perseus::runtime {

struct GpuRealism {
  // The energy counter steps every energy_period_s (0: continuous, exact);
  // each step adds period x the mean power over the last
  // energy_sample_fraction of the period (SC'24, "Part-time Power
  // Measurements"): power outside that window is never seen.
  double energy_period_s = 0.1;
  double energy_sample_fraction = 0.25;
  // A clock lock takes effect this long after the call.
  double clock_latency_s = 0.005;
  // 0: none; otherwise the GPU never runs above this clock (a power or
  // thermal cap; the achieved clock is the highest supported one <= cap).
  int achieved_clock_cap_mhz = 0;
  // Relative standard deviation of each computation's duration.
  double time_jitter = 0.01;
  // Busy power rises by thermal_drift x (1 - exp(-t / thermal_tau_s)), t the
  // time since the GPU's first computation.
  double thermal_drift = 0.03;
  double thermal_tau_s = 300;
  // With this probability a computation takes outlier_factor times as long.
  double outlier_probability = 0.002;
  double outlier_factor = 2.0;
  // Relative standard deviation of power between GPUs of one model: GPU i's
  // power is scaled by a factor drawn once from (seed, i).
  double gpu_variation = 0.02;
  // Seeds every random draw (with the GPU index): same seed, same results.
  uint64_t seed = 1;
};

// Everything off: a continuous exact counter, no latency, cap or noise. The
// simulated GPU's behaviour before realism existed, and its default.
GpuRealism IdealRealism();
// The values in the struct above.
GpuRealism DefaultRealism();
// `realism` with time_jitter, thermal_drift, outlier_probability (at most 1)
// and gpu_variation multiplied by `factor` (>= 0).
GpuRealism ScaleNoise(GpuRealism realism, double factor);

// Parses comma-separated items, applied left to right: an optional base first
// ("ideal" or "default"; without one, "default"), then key=value overrides:
//   noise=2 (ScaleNoise of the values so far), period_ms, sample, latency_ms,
//   cap_mhz, jitter, drift, tau_s, outliers, outlier_factor, variation, seed
// e.g. "default,noise=2,period_ms=50". Errors name the key:
//   "realism: unknown key 'perod_ms'", "realism: period_ms: expected >= 0, got -1".
Result<GpuRealism> ParseGpuRealism(const std::string& text);
// The text ParseGpuRealism reads back to `realism` ("ideal,period_ms=100,...").
std::string FormatGpuRealism(const GpuRealism& realism);

// An energy counter that steps like NVML's total-energy counter on A100/H100.
//
// Power is fed in as piecewise-constant segments (Advance). The true energy
// is integrated exactly. The reported counter changes only at steps, one per
// period, at next_step_s, next_step_s + period, ...: a step adds
//   (step time - period start) x mean power over the sampled window,
// the window being the last sample_fraction x period before the step (clipped
// to the period, so a first period shorter than a full one is sampled over
// what it has). Power outside the window is missed, so a single step can be
// far off; over many periods the counter is unbiased for power that is not
// synchronised with it. With period 0 the counter is the true energy.
// REQUIRES: period_s >= 0, 0 < sample_fraction <= 1.
class CoarseEnergyCounter {
 public:
  using Update = GpuControl::CounterUpdate;

  // Everything needed to continue counting (the step history excluded), so
  // the fake NVML can keep it in its state file between calls.
  struct State {
    double time_s = 0;             // integrated up to here
    double period_start_s = 0;     // start of the current period
    double next_step_s = 0;        // the current period's end: the next step
    double true_energy_j = 0;
    double reported_energy_j = 0;  // what the counter shows
    double sampled_energy_j = 0;   // energy in the current period's sampled window so far
  };

  // Counts from `start_s`; the first step is one period later.
  CoarseEnergyCounter(double period_s, double sample_fraction, double start_s);
  // Counts from `start_s`; the first step at `first_step_s`
  // (start_s < first_step_s <= start_s + period_s), e.g. a random phase.
  CoarseEnergyCounter(double period_s, double sample_fraction, double start_s, double first_step_s);
  // Resumes from `state` (with an empty history).
  CoarseEnergyCounter(double period_s, double sample_fraction, const State& state);

  // Draws `power_w` from time_s() to `end_s`; steps at every step time passed
  // (a step at exactly end_s included). Nothing happens if end_s <= time_s().
  void Advance(double end_s, double power_w);

  double period_s() const { return period_s_; }
  double sample_fraction() const { return sample_fraction_; }
  double time_s() const { return state_.time_s; }
  double TrueEnergyJ() const { return state_.true_energy_j; }
  double ReportedEnergyJ() const { return state_.reported_energy_j; }
  const State& state() const { return state_; }

  // The steps after `after_s` (time > after_s), oldest first. The history
  // keeps the last `history_limit` steps (default kDefaultHistoryLimit, about
  // 1.8 hours at 100 ms); older ones are dropped.
  std::vector<Update> UpdatesAfter(double after_s) const;
  void set_history_limit(size_t steps) { history_limit_ = steps; }
  static constexpr size_t kDefaultHistoryLimit = 65536;

 private:
  void Step();

  double period_s_;
  double sample_fraction_;
  State state_;
  std::deque<Update> history_;
  size_t history_limit_ = kDefaultHistoryLimit;
};

}  // namespace perseus::runtime
