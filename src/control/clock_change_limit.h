// Clock switches that take long: when a GPU shows a locked clock only after
// a delay comparable to its computations (100 ms on an H200, docs/real_gpu.md),
// a plan that changes clocks between computations runs them partly at the
// previous clock, which can make the "no-slowdown" plan slower than all-max.
// These decide when that is worth a warning and how many changes per GPU per
// iteration plans may then make. perseus doctor, the server's window-report
// checks, its optimisation and the emulator's closed loop all use them.
// Thread safety: pure functions (LimitClockChangesForLatency writes only the
// frontier it is given).
#pragma once

#include <atomic>

#include "perseus/optimizer.h"

namespace perseus::control {

// A switch slower than this is worth a warning (doctor, the server) and has
// plans checked against it.
inline constexpr double kSlowClockSwitchS = 0.010;

// The modelled slowdown against all-max a limited plan may have: half the
// 1% run-to-run noise of iteration times. Without it no limit but zero
// changes qualifies at 100 ms switches on the shared GPT-3 profile (8 x 12):
// at 0.5% it keeps 2 changes per GPU and 3.5% savings for a 0.26% slowdown
// (perseus emulate --closed-loop, docs/schedules.md "Clock changes").
inline constexpr double kLatencySlowdownTolerance = 0.005;

// True when a measured switch latency is slow for computations of this mean
// length: above kSlowClockSwitchS and a quarter of a computation.
bool IsSlowClockSwitch(double latency_s, double mean_computation_s);

// The limit to solve a job's frontier with (FrontierOptions::
// max_clock_changes_per_gpu) before LimitClockChangesForLatency: the spec's,
// or none (-1) where switches are slower than kSlowClockSwitchS, since
// LimitClockChangesForLatency then limits the unlimited frontier itself,
// with the runs moved only where late switches leave them on time.
int SolveClockChangeLimit(int spec_limit, double clock_switch_latency_s);

struct ClockChangeDecision {
  // Clock changes per GPU per iteration every plan makes at most: the spec's
  // limit, or the chosen one; -1: no limit.
  int limit = -1;
  bool automatic = false;  // chosen for the latency (not the spec's)
  // This call limited the frontier (a limit chosen, or the spec's under slow
  // switches); otherwise it is as solved.
  bool frontier_limited = false;
  bool runs_moved = true;  // the limited plans' runs moved (MoveLimitedPlansRuns); chosen with the limit
  // The no-slowdown plan evaluated with the latency
  // (EvaluatePlanWithClockLatency) without a limit and with `limit`; both
  // zero when the latency was not checked.
  PlanCost unlimited, limited;
  double all_max_time_s = 0;
};

// With switches no slower than kSlowClockSwitchS (or unmeasured, < 0):
// nothing changes (the spec's limit, if any, was applied by the solve).
// Otherwise by the model of a late switch (OptionWithClockLatency): among the
// candidate limits, each with runs moved (MoveLimitedPlansRuns) or not, the
// one whose no-slowdown plan (LimitClockChanges of the frontier's, or where
// cheaper the cheapest of OneClockPerGpuPlans no slower than all-max, which
// every limit's frontier holds), evaluated with the latency, uses the least
// energy while at most kLatencySlowdownTolerance slower than all-max (the
// fastest when none is); then every frontier plan is limited to it
// (LimitFrontierClockChanges). The candidates are no limit and 0, 1, 2, 3, 4,
// 6, 9, 13, ... changes per GPU per iteration, and nothing changes when the
// unlimited plan is within the tolerance. Zero changes nearly always
// qualifies: every GPU then runs one clock, which no latency delays. With a
// limit in the spec (spec_limit >= 0) that limit holds and only whether runs
// move is chosen (moved runs spend the slack that absorbs late switches): the
// frontier is limited both ways and judged by the plan each would run, its
// own no-slowdown plan with the latency, by the same rule.
// The plans are limited on `threads` threads (0: every CPU).
// REQUIRES: `frontier` was solved for `problem` with SolveClockChangeLimit's
// limit and has a no-slowdown plan.
ClockChangeDecision LimitClockChangesForLatency(const Problem& problem, int spec_limit, double clock_switch_latency_s,
                                                Frontier* frontier, const std::atomic<bool>* cancel = nullptr,
                                                int threads = 0);

}  // namespace perseus::control
