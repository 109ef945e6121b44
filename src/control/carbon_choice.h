// The carbon-aware choice: in each window run the option minimising
//     carbon_g_per_kwh * energy_j / 3.6e6 + lambda_g_per_s * time_s
// per unit of work. lambda_g_per_s prices time in grams of CO2 per second; it
// comes from the user's budget for average slowdown: LambdaForWork finds by
// bisection the smallest lambda (the most carbon-aware) with which the
// windows still finish the required work.
// Thread safety: pure functions.
#pragma once

#include <vector>

#include "carbon/knob_options.h"

namespace perseus::control {

using carbon::KnobOption;
using carbon::KnobSet;

inline constexpr double kJoulesPerKwh = 3.6e6;

// Index into knobs.options of the minimiser (ties: the faster option).
// REQUIRES: !knobs.options.empty().
int ChooseOption(const KnobSet& knobs, double carbon_g_per_kwh, double lambda_g_per_s);

// Work done in one hour window running option i, in hours of the reference
// setting's work (reference time / option time).
double WorkPerWindowH(const KnobSet& knobs, int i);

struct LambdaChoice {
  double lambda_g_per_s = 0;
  bool feasible = true;   // false: even the fastest option cannot finish the work
  double planned_work_h = 0;
};

// The smallest lambda such that choosing per window (intensity
// carbon_g_per_kwh[w]) completes at least `work_h` hours of reference work
// within the windows; the largest useful lambda (always the fastest) when
// even that does not suffice. A fractional last window counts by `last_window_fraction`.
LambdaChoice LambdaForWork(const KnobSet& knobs, const std::vector<double>& carbon_g_per_kwh, double work_h,
                           double last_window_fraction = 1.0);

}  // namespace perseus::control
