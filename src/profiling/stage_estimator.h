// The stage estimator: per-clock forward and backward time and energy of one
// pipeline stage, with uncertainties, from the totals of measurement windows
// read off a coarse, noisy energy counter.
//
// Model. A window runs whole iterations with forwards at clock index a and
// backwards at b (window_design.h). Over its measured span of C seconds the
// rank observes the energy E (from counter steps: noisy), the number, total
// time and sum of squared durations of its forward (TF) and backward (TB)
// computations, and the span's midpoint t. Then
//     E = pF[a] TF + pB[b] TB + Pblk (C - TF - TB) + D(t) C + noise
// with unknown per-clock forward power pF[i] and backward power pB[i]
// (i = clock index, 0 = highest clock), blocking power Pblk (drawn while the
// stage waits) and thermal drift D(t), an extra power that is 0 at the
// reference time t0 (default: the earliest window's midpoint):
//     D(t) = rate (t - t0)                        (drift_time_constant_s == 0)
//     D(t) = rate tau (1 - exp(-(t - t0) / tau))  (drift_time_constant_s == tau > 0)
// Every power is reported as at t0. Each window gives one row, divided by C
// (average power), weighted by C / mean C (a longer window averages more
// counter steps: its variance falls as 1/C).
//
// Gauge. Every window runs as many forwards as backwards, so the powers
// pF[i] + c / tF[i] and pB[i] - c / tB[i] (energies eF + c and eB - c) predict
// every window equally well for any c: window totals cannot split energy
// between forward and backward at a common offset (only jitter in the
// durations carries a trace of it). The offset is also irrelevant to the
// optimizer: every plan runs one forward and one backward per microbatch, so
// every plan's energy is unchanged by it. The estimator fixes it exactly with
// pF[0] == pB[0] (forward and backward draw the same power at the highest
// clock, true within about 1% on the measured GPT-3 profile, where both are
// dominated by the same GEMMs). Differences between clocks, the sum eF + eB
// and Pblk are identified by the data. Standard errors of eF and eB alone are
// conditional on this gauge; total_energy_se_j is gauge-free.
//
// Estimation. Penalized weighted least squares: a second-difference smoothness
// penalty on pF and pB over the clock (divided differences in MHz, scaled to
// the median clock step) pools information across clocks, which is what makes
// per-clock energies accurate from a few noisy windows per clock. Its weight
// is `smoothing` x trace(A'WA over the power columns) / trace(penalty),
// chosen by generalized cross-validation over a log grid (0 is on the grid
// when the data alone determine every power). Clocks no window ran are filled
// by the penalty and flagged unmeasured. One round of robustness: rows whose
// standardized residual exceeds `outlier_threshold` (with a robust scale) are
// dropped and the fit, smoothing included, is redone.
//
// Uncertainty. sigma^2 = RSS / (rows - effective parameters), at least
// (prior_relative_sd x mean power)^2; Cov = sigma^2 (A'WA + penalty)^-1 (the
// Bayesian covariance of a penalized fit, which also covers smoothing bias on
// average). Times are pooled over the windows that ran an instruction at a
// clock, with SE sd / sqrt(count) from the sums of squares; energies e = p t
// carry delta-method SEs. Times of clocks no window ran are interpolated
// linearly in 1/f, their SE widened by 1% per clock step from the nearest
// measured clock.
// Thread safety: pure functions; deterministic.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "perseus/profile.h"
#include "perseus/status.h"

namespace perseus::profiling {

// One window's totals as one rank measured them.
struct WindowObservation {
  int forward_index = 0;        // clock index of forward computations
  int backward_index = 0;       // clock index of backward computations
  double mid_time_s = 0;        // midpoint of the measured span (any fixed origin)
  int iterations = 0;           // whole iterations measured (information only)
  double cycle_time_s = 0;      // C: the measured span, step begin to the step begin N iterations later
  double energy_j = 0;          // E over that span
  int64_t forward_count = 0, backward_count = 0;
  double forward_time_s = 0, backward_time_s = 0;          // TF, TB: sums of durations
  double forward_time_sq_s2 = 0, backward_time_sq_s2 = 0;  // sums of squared durations (0: unknown)
};

struct EstimatorOptions {
  // Floor of the per-window relative noise sd (and the relative SE of a time
  // whose spread is unknown), so that one or two windows never claim zero error.
  double prior_relative_sd = 0.002;
  // Fixed relative smoothing; nullopt chooses it by GCV.
  std::optional<double> smoothing;
  // Weight of the penalty on changes of (backward - forward power) between
  // neighbouring clocks, relative to the smoothness penalty; 0 = none.
  double difference_smoothing = 10;
  // Drop windows whose standardized residual exceeds this; 0 = keep all.
  double outlier_threshold = 4;
  // 0: linear drift; > 0: saturating drift with this time constant.
  double drift_time_constant_s = 0;
  // Powers are reported as at this time; nullopt = the earliest window's midpoint.
  std::optional<double> reference_time_s;
  // A prior for the blocking power (e.g. the GPU's known value), with this sd.
  std::optional<double> blocking_power_prior_w;
  double blocking_power_prior_sd_w = 10;
};

struct ClockEstimate {
  int clock_mhz = 0;
  bool forward_measured = false;   // some window ran forwards at this clock
  bool backward_measured = false;  // some window ran backwards at this clock
  bool measured = false;           // both
  double forward_time_s = 0, forward_time_se_s = 0;
  double backward_time_s = 0, backward_time_se_s = 0;
  double forward_power_w = 0, forward_power_se_w = 0;
  double backward_power_w = 0, backward_power_se_w = 0;
  double forward_energy_j = 0, forward_energy_se_j = 0;
  double backward_energy_j = 0, backward_energy_se_j = 0;
  double total_energy_se_j = 0;    // SE of forward + backward energy (gauge-free)
};

struct StageEstimate {
  std::vector<ClockEstimate> clocks;  // as the clocks given, highest first
  double blocking_power_w = 0, blocking_power_se_w = 0;
  double drift_w_per_s = 0;           // drift rate at the reference time
  double drift_time_constant_s = 0;   // as in the options
  double reference_time_s = 0;        // the time every power refers to
  double residual_relative_sd = 0;    // sigma / mean window power
  double smoothing = 0;               // relative weight of the smoothness penalties used
  double difference_smoothing = 0;    // as in the options
  double effective_parameters = 0;    // trace of the hat matrix
  int windows = 0;                    // windows given
  std::vector<int> outlier_windows;   // indices of windows dropped as outliers
};

// Estimates one stage. `clocks_mhz` is the stage's clock list, strictly
// descending; window indices refer to it. Errors (invalid argument) name the
// window and field: "window 3: forward_index 40 is outside the 38 clocks".
Result<StageEstimate> EstimateStage(const std::vector<int>& clocks_mhz,
                                    const std::vector<WindowObservation>& observations,
                                    const EstimatorOptions& options = {});

// The energy the estimate predicts for a window (its model value, no noise).
// REQUIRES: the window's indices are valid for `estimate`.
double PredictWindowEnergyJ(const StageEstimate& estimate, const WindowObservation& window);

// Indices of the clocks whose relative SE of forward + backward energy
// exceeds `target_relative_se`, highest clock first.
std::vector<int> ClockIndicesAboveTarget(const StageEstimate& estimate, double target_relative_se);

// The estimate as profile rows (time and energy per clock), for the optimizer.
StageProfile ToStageProfile(const StageEstimate& estimate);

}  // namespace perseus::profiling
