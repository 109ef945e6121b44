// Plausibility checks of a stage's estimated profile, so that a profile that
// cannot be right is reported loudly instead of silently optimized.
//
// Codes (each at most once per stage and instruction; messages name the stage
// and the clocks and values involved):
//   "clock_has_no_effect"        the stage's time per microbatch (forward +
//                                backward) at the lowest measured clock is
//                                within max(3 SE, 2%) of that at the highest,
//                                although the lowest is at least 10% slower
//                                a clock (the job is not GPU-bound, or the rank
//                                is not bound to the GPU it names);
//   "time_not_monotonic"         an instruction's time falls as the clock falls,
//                                by more than 3 SE and 1% (the worst pair);
//   "implausible_power"          a power outside [min_power_w, max_power_w] by
//                                more than 3 SE, or a non-positive energy;
//   "high_uncertainty"           the relative SE of forward + backward energy
//                                above target_relative_se at some clocks;
//   "blocking_power_implausible" blocking power outside [min_power_w,
//                                max_power_w] or above the highest computation
//                                power, by more than 3 SE.
// Only measured clocks are judged, except by "high_uncertainty".
// Thread safety: pure functions.
#pragma once

#include <string>
#include <vector>

#include "profiling/stage_estimator.h"

namespace perseus::profiling {

struct ProfileIssue {
  std::string code;
  std::string message;
  int stage = -1;
};

// Defaults fit A100/H100 boards; set them from the GPU (idle power, a margin above the power limit).
struct PlausibilityLimits {
  double min_power_w = 20;
  double max_power_w = 1000;
  double target_relative_se = 0.01;
};

std::vector<ProfileIssue> CheckStage(int stage, const StageEstimate& estimate, const PlausibilityLimits& limits);

}  // namespace perseus::profiling
