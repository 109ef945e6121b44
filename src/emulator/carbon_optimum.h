// The perfect-foresight optimum of a carbon-aware job: the bound every
// policy is measured against (docs/carbon.md, "Evaluation").
//
// Given the actual intensities of every hour, choose per hour the share of
// time at each option (and, with allow_pause, paused: no progress, no power)
// to finish `work_h` hours of reference work within work_h * (1 + budget)
// hours at the least carbon. A linear program: variables x[h][i] >= 0,
//   sum_i x[h][i] = share[h]   (<= with pause; share is 1 but for a partial last hour)
//   sum_h sum_i x[h][i] * rate[i] >= work_h
//   minimise sum_h c[h] * sum_i x[h][i] * power[i] * 3600 / 3.6e6.
// Without pause the job runs the whole budgeted time (at the slowest option
// throughout when even that finishes early: then time_h is shorter).
// SolveOptimumLp solves it with GLPK's simplex; SolveOptimumGreedy with
// control::PlanWork, exact for this structure and ~100x faster, and with
// budget_at_every_hour (a floor under the work done by every hour's end) by
// a forward greedy that is exact for those nested floors
// (carbon_optimum_test.cc checks that the two agree). The evaluation reports
// the greedy's.
// Thread safety: pure functions; SolveOptimumLp takes a process-wide lock
// (one GLPK solve at a time).
#pragma once

#include "carbon/intensity_trace.h"
#include "carbon/knob_options.h"
#include "perseus/status.h"

namespace perseus::carbon {

struct OptimumConfig {
  double work_h = 168;
  double slowdown_budget = 0.05;
  bool allow_pause = false;
  // Also keep the average slowdown within the budget at every hour
  // boundary, as the window decision's guard does (the cost of not knowing
  // when the job ends).
  bool budget_at_every_hour = false;
};

struct OptimumResult {
  double carbon_g = 0;
  double time_h = 0;  // the hours the job is given (it may pause in them)
};

// REQUIRES: !knobs.options.empty(); 0 <= start_window < trace.size(). Hours
// past the trace use its last value.
Result<OptimumResult> SolveOptimumLp(const IntensityTrace& trace, int start_window, const KnobSet& knobs,
                                     const OptimumConfig& config);
// An error where the budgeted time is too short for the work (as the LP's).
Result<OptimumResult> SolveOptimumGreedy(const IntensityTrace& trace, int start_window, const KnobSet& knobs,
                                         const OptimumConfig& config);

}  // namespace perseus::carbon
