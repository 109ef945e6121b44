// Straggler detection from per-iteration compute times (part of the control
// loop; the server runs it on its ranks' iteration reports).
//
// Each pipeline's recent iterations (run under its current plan) are
// normalised by the plan's predicted time, so a pipeline that was slowed on
// purpose (a slower frontier plan) does not look like a straggler:
//   ratio_p = median(compute time of p's last `window` iterations) / predicted_p
//   slowdown_p = ratio_p / median over the other pipelines q of ratio_q.
// A pipeline is detected when slowdown_p > threshold and recovers when it
// falls below 1 + (threshold - 1) / 2 (hysteresis). Stragglers declared
// through the API are left to the API. Thread safety: pure functions.
#pragma once

#include <optional>
#include <vector>

namespace perseus::control {

struct StragglerOptions {
  int window = 5;            // iterations per pipeline compared (median)
  double threshold = 1.05;   // a pipeline this much slower than the others is a straggler
};

struct Straggler {
  int pipeline = 0;
  double slowdown = 1;      // iteration time / the other pipelines' time
  bool detected = false;    // false: declared through the API
};

struct PipelineSamples {
  std::vector<double> compute_times_s;  // most recent last; only the current plan
  double predicted_time_s = 0;          // of the plan the pipeline runs
};

// slowdown_p for every pipeline with `window` samples whose others include
// at least one pipeline with `window` samples; nothing otherwise.
std::vector<std::optional<double>> EstimateSlowdowns(const std::vector<PipelineSamples>& pipelines, int window);

// The stragglers after applying the estimates to `current`. Returns true in
// *changed when the set or a slowdown (by more than 2%) changed.
std::vector<Straggler> UpdateDetectedStragglers(const std::vector<Straggler>& current,
                                                const std::vector<std::optional<double>>& slowdowns,
                                                const StragglerOptions& options, bool* changed);

}  // namespace perseus::control
