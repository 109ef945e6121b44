// Synthetic measurement windows from a ground-truth profile, for tests and
// benchmarks of the estimator: a 1F1B pipeline whose stages run the configs of
// a window design, with jittered computation durations, thermal drift, and a
// noisy energy total per window. Not a GPU simulation (the realistic simulated
// GPU lives in src/runtime/gpu); just the estimator's model plus noise.
// Thread safety: pure functions; deterministic for a given seed.
#pragma once

#include <cstdint>
#include <utility>
#include <vector>

#include "perseus/profile.h"
#include "perseus/status.h"
#include "profiling/stage_estimator.h"
#include "profiling/window_design.h"

namespace perseus::profiling {

// One stage's ground truth, per clock of clocks_mhz (highest first).
struct StageTruth {
  std::vector<int> clocks_mhz;
  std::vector<double> forward_time_s, forward_power_w, backward_time_s, backward_power_w;
  double blocking_power_w = 0;
  double ForwardEnergyJ(int i) const { return forward_time_s[i] * forward_power_w[i]; }
  double BackwardEnergyJ(int i) const { return backward_time_s[i] * backward_power_w[i]; }
};

// Every stage of `profile` as a truth. Errors when a stage's forward and
// backward rows list different clocks.
Result<std::vector<StageTruth>> TruthFromProfile(const Profile& profile, double blocking_power_w);

struct SyntheticConditions {
  int microbatches = 12;
  int iterations = 4;                // measured iterations per window, after one warm-up iteration
  double energy_relative_sd = 0.03;  // energy noise of a window as long as the all-max window; sd ~ 1/sqrt(length)
  double time_jitter = 0.01;         // relative sd of each computation's duration
  double drift_fraction = 0;         // all power rises by this fraction ...
  double drift_tau_s = 300;          // ... as 1 - exp(-t / tau) from t = 0; tau 0: by drift_fraction per 1000 s
  std::vector<std::pair<int, double>> energy_factors;  // (window, factor): outlier windows
  uint64_t seed = 1;
};

// The factor by which drift has raised all power at time t_s.
double DriftFactor(double t_s, const SyntheticConditions& conditions);

// The truth as it draws power at time t_s (all power x DriftFactor).
StageTruth TruthAt(const StageTruth& truth, double t_s, const SyntheticConditions& conditions);

// The observations of every stage ([stage][window]) when the pipeline runs
// `plans` in order from time 0. REQUIRES: every plan has one config per stage,
// valid for that stage's clocks.
std::vector<std::vector<WindowObservation>> SimulateWindows(const std::vector<StageTruth>& stages,
                                                            const std::vector<WindowPlan>& plans,
                                                            const SyntheticConditions& conditions);

}  // namespace perseus::profiling
