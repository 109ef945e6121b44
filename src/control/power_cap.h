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
  // > 0: every pipeline runs its plan with each GPU's clock held at most this
  // (WithClockCeiling): the settings below the minimum-energy plan's power.
  int clock_ceiling_mhz = 0;
};

// Every pipeline on one plan of `time_s` and `energy_j`: a straggler's takes
// its slowdown times longer and the others wait for it at blocking power.
// plan_index is left empty (the caller's plans are not frontier indices, or
// it fills them in). REQUIRES: !slowdowns.empty().
JobSetting UniformSetting(double time_s, double energy_j, double pipeline_blocking_power_w,
                          const std::vector<double>& slowdowns);

// The minimum-energy frontier plan with every clock held at most
// clock_ceiling_mhz (WithClockCeiling), as EvaluatePlan costs it: slower and
// costlier in energy than the plan, but lower in power, so a cap below the
// frontier's least power can still be met.
struct CeilingPlan {
  int clock_ceiling_mhz = 0;
  double time_s = 0, energy_j = 0;
};
// One per clock some computation lists below the highest clock the
// minimum-energy plan uses, highest first. REQUIRES: !frontier.plans.empty().
std::vector<CeilingPlan> CeilingPlans(const Problem& problem, const Frontier& frontier);

// The settings worth running under some cap, on the lower convex hull of
// power against rate, slowest first. `slowdowns[p]` >= 1 is pipeline p's
// (1: not straggling); `pipeline_blocking_power_w` is one pipeline's power
// while all its GPUs wait. `ceilings` (CeilingPlans) add settings below the
// minimum-energy plan's power: every pipeline on that plan under one
// ceiling. REQUIRES: !frontier.plans.empty(), !slowdowns.empty().
std::vector<JobSetting> CapSettings(const Frontier& frontier, double pipeline_blocking_power_w,
                                    const std::vector<double>& slowdowns,
                                    const std::vector<CeilingPlan>& ceilings = {});

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

// Whether the mix's faster setting runs at `now_s` (seconds on any clock
// whose zero is a window boundary, e.g. unix time): the first fast_share of
// each window_s window. The server and the emulator alternate with it.
bool FastPartOfWindow(double fast_share, double window_s, double now_s);

// A cap shared by several jobs (a server's GPUs, docs/power.md "One cap for
// several jobs"): each job's part in it.
struct SharedCapJob {
  std::vector<RatePower> hull;  // CappedPlan::hull without a cap: slowest first, predicted power
  double correction = 1;        // measured / predicted power (clamped as in PlanUnderPowerCap)
  double weight = 1;            // what a unit of its relative rate is worth: its GPUs
  double own_cap_w = 0;         // the job's own average cap; <= 0: none
};

struct CapShares {
  std::vector<double> power_w;  // [job] the average power it may draw (corrected watts)
  bool feasible = true;         // false: the jobs' slowest settings alone exceed the cap
};

// The split of `cap_w` that maximises the weighted sum of the jobs' rates
// (each relative to its own fastest setting, mixing two neighbouring hull
// settings as PlanUnderPowerCap does) with the corrected powers summing to at
// most cap_w. Every job gets at least its slowest setting's power and at
// most its fastest's (or its own cap, when lower); when the slowest settings
// alone exceed the cap, that is what each gets (infeasible). Exact: on each
// hull the rate is concave in power, so filling hull segments in order of
// weighted rate per watt is optimal (a fractional knapsack). Deterministic:
// ties go to the earlier job. Each job then runs PlanUnderPowerCap with its
// share as its average cap.
CapShares ShareCap(const std::vector<SharedCapJob>& jobs, double cap_w);

}  // namespace perseus::control
