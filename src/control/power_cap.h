// Power-capped running (docs/power.md): the fastest way to run a job whose
// GPUs may draw at most a given power on average (a facility limit, a
// demand-response event), and optionally never more than a peak.
//
// Every pipeline waits for the slowest at the gradient sync, so a job's
// iteration time T is the slowest pipeline's, and each pipeline should run
// the least-energy frontier plan that still meets T (a straggler's plan takes
// its slowdown times longer), idling at blocking power for the rest. Those
// settings, one per T, are the job's candidates; a cap between two of them
// is met exactly, on average, by running the faster for a share of the time
// and the slower for the rest (WindowMix, the same mixing the carbon policy
// uses). Predicted power is corrected by the measured/predicted ratio.
// Pure functions; thread-safe.
#pragma once

#include <vector>

#include "control/carbon_choice.h"
#include "perseus/optimizer.h"

namespace perseus::control {

struct PowerCap {
  double average_w = 0;  // the whole job's GPUs, averaged over the cap's window; <= 0: no cap
  double peak_w = 0;     // <= 0: none; no setting predicted above it is used
};

// One setting of the whole job.
struct JobSetting {
  std::vector<int> plan_index;  // [pipeline] into frontier.plans
  double iteration_time_s = 0;  // the slowest pipeline's
  double power_w = 0;           // predicted, every GPU of the job, blocking power while waiting included
};

// The settings worth running under some cap, on the lower convex hull of
// power against rate, slowest first. `slowdowns[p]` >= 1 is pipeline p's
// (1: not straggling); `pipeline_blocking_power_w` is one pipeline's power
// while all its GPUs wait. REQUIRES: !frontier.plans.empty(), !slowdowns.empty().
std::vector<JobSetting> CapSettings(const Frontier& frontier, double pipeline_blocking_power_w,
                                    const std::vector<double>& slowdowns);

struct CappedPlan {
  std::vector<JobSetting> settings;  // as CapSettings (after the peak filter)
  std::vector<RatePower> hull;       // settings[k] is hull[k]; rate relative to the fastest setting
  WindowMix mix;                     // fast_share of the time at settings[mix.fast], the rest at mix.slow
  bool feasible = true;              // false: even the slowest setting is predicted above the cap
  double correction = 1;             // measured / predicted power applied
  double IterationTimeS() const;     // the mix's average (harmonic in rate)
  double PowerW() const;             // predicted x correction, averaged over time
};

// The fastest mix of `settings` whose corrected average power is at most
// cap.average_w, using only settings whose corrected power is at most
// cap.peak_w; without a cap the fastest setting. Infeasible caps run the
// slowest setting allowed (the least power there is). `correction` is
// measured / predicted power (1 when nothing is measured yet), clamped to
// [0.5, 2]. REQUIRES: !settings.empty().
CappedPlan PlanUnderPowerCap(std::vector<JobSetting> settings, const PowerCap& cap, double correction = 1);

}  // namespace perseus::control
