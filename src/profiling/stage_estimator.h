// The stage estimator: per-clock forward and backward time and energy of one
// pipeline stage, with uncertainties, from the totals of measurement windows
// read off a coarse, noisy energy counter. docs/design.md ("Online profiling:
// windows and the estimator") explains the choices and gives measured accuracy.
//
// Model. A window runs whole iterations with forwards at clock index a and
// backwards at b (window_design.h). Over its measured span of C seconds the
// rank observes the energy E (from counter steps: noisy), the number, total
// time and sum of squared durations of its forward (TF) and backward (TB)
// computations, and the span's midpoint t. Then
//     E = (pF[a] TF + pB[b] TB + Pblk (C - TF - TB)) (1 + D(t)) + noise
// with unknown per-clock forward power pF[i] and backward power pB[i]
// (i = clock index, 0 = highest clock), blocking power Pblk (drawn while the
// stage waits) and thermal drift D(t), the relative rise of all power since
// the reference time t0:
//     D(t) = rate (t - t0)                        (drift_time_constant_s == 0)
//     D(t) = rate tau (1 - exp(-(t - t0) / tau))  (drift_time_constant_s == tau > 0)
// with tau chosen by GCV among 0 (linear), 100, 300 and 1000 s unless given.
// Each window gives one row, divided by C (average power) and weighted by
// C / mean C (a longer window averages more counter steps). The drift term is
// fitted as D(t) x the window's own measured average power, which keeps the
// model linear and equals the product above to first order in D.
//
// Reference time. Every power is reported as at t0, by default the middle of
// the windows (their midpoints averaged with their lengths as weights): the
// thermal state the data pin best. The level at the start of profiling is an
// extrapolation through the drift curve; its error grows with the drift's
// uncertainty and with any mismatch of its shape (several percent for a cold
// start with the wrong time constant).
//
// Gauge. Every window runs as many forwards as backwards, so the powers
// pF[i] + c / tF[i] and pB[i] - c / tB[i] (energies eF + c and eB - c) predict
// every window equally well for any c: window totals cannot split energy
// between forward and backward at a common offset (only jitter in the
// durations carries a trace of it). The offset is also irrelevant to the
// optimizer: every plan runs one forward and one backward per microbatch, so
// every plan's energy is unchanged by it. The estimator fixes it exactly with
// pF[0] == pB[0] (forward and backward draw the same power at the highest
// clock; true of the built-in GPU model, and within 1% on the measured GPT-3
// profile, where both are dominated by the same GEMMs). Differences between
// clocks, the sum eF + eB and Pblk are identified by the data. SEs of eF and
// eB alone are conditional on this gauge; total_energy_se_j is gauge-free.
//
// Estimation. Penalized weighted least squares. A second-difference penalty
// on pF and on pB over the clock (divided differences in MHz, scaled to the
// median clock step) pools information across clocks; a first-difference
// penalty on pB - pF (difference_smoothing times as heavy) pools forward with
// backward, whose powers at one clock differ little (same kernels). Both are
// scaled to the trace of A'WA over the power columns; `smoothing` is their
// common weight, chosen by generalized cross-validation over half-decades
// from 1e-6 to 1e6 (and 0 when the data alone determine every power). Clocks
// no window ran are filled by the penalty and flagged unmeasured. A small
// ridge keeps every direction defined (one window still gives an estimate, with
// huge SEs where the data say nothing). One round of robustness: windows whose
// standardized residual, on a fit at least as smooth as smoothing 100 (so a
// flexible fit cannot mask an outlier by bending towards it), exceeds
// outlier_threshold times a robust scale (at least 1% of mean power) are
// dropped and everything is refitted. Optionally, a prior on Pblk: window
// totals identify Pblk only through how long each window waits, and its error
// spreads into every busy power (see window_design.h, staggering).
//
// Uncertainty. sigma^2 = RSS / (rows - effective parameters), at least
// (prior_relative_sd x mean power)^2; Cov = sigma^2 (A'WA + penalty)^-1 (the
// Bayesian covariance of a penalized fit, which covers smoothing bias on
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
  int forward_index = 0;    // clock index of forward computations
  int backward_index = 0;   // clock index of backward computations
  double mid_time_s = 0;    // midpoint of the measured span (any fixed origin)
  int iterations = 0;       // whole iterations measured (information only)
  double cycle_time_s = 0;  // C: the measured span, step begin to the step begin N iterations later
  double energy_j = 0;      // E over that span
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
  // Drop windows whose robustly standardized residual exceeds this; 0 = keep all.
  double outlier_threshold = 4;
  // 0: linear drift; > 0: saturating drift with this time constant; nullopt:
  // the best GCV score among linear, 100 s, 300 s and 1000 s.
  std::optional<double> drift_time_constant_s;
  // Powers are reported as at this time; nullopt = the middle of the windows.
  std::optional<double> reference_time_s;
  // A prior for the blocking power (e.g. GpuSpec::blocking_power_w), with this
  // sd. Window totals pin Pblk only to several W (about 4-8 W at 3% noise).
  std::optional<double> blocking_power_prior_w;
  double blocking_power_prior_sd_w = 10;
  // Split each clock's forward+backward energy (which window totals pin)
  // between forward and backward by their times, as if both drew the same
  // power. For designs without cross windows (DesignOptions::cross_windows
  // false), where nothing in the data separates them at a clock: left to the
  // penalties, the split wanders (up to +-100% on single entries in
  // profiling_bench) while the sum stays good. On an H200, forward and
  // forward+backward windows at one clock drew the same power within 1.2%
  // (docs/real_gpu.md); on the measured GPT-3 A100 profile they differ by ~1%.
  bool equal_power_split = false;
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
  double total_energy_se_j = 0;  // SE of forward + backward energy (gauge-free)
};

struct StageEstimate {
  std::vector<ClockEstimate> clocks;  // as the clocks given, highest first
  double blocking_power_w = 0, blocking_power_se_w = 0;
  double drift_per_s = 0;            // relative drift rate at the reference time (1/s)
  double drift_time_constant_s = 0;  // the drift shape used (0: linear)
  double reference_time_s = 0;       // the time every power refers to
  double residual_relative_sd = 0;   // sigma / mean window power
  double smoothing = 0;              // relative weight of the smoothness penalties used
  double difference_smoothing = 0;   // as in the options
  double effective_parameters = 0;   // trace of the hat matrix
  int windows = 0;                   // windows given
  std::vector<int> outlier_windows;  // indices of windows dropped as outliers
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
