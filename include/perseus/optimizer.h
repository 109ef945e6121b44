// The optimizer: a training pipeline's iteration time-energy Pareto frontier.
//
// SolveFrontier computes, for iteration times from the all-maximum-frequency
// time up to the minimum-energy time T*, frequency plans that minimise energy
// subject to the iteration time, plus a certified lower bound on the energy
// any plan can reach at each time. Every reported (time, energy) is the plan
// replayed on the real profile values by EvaluatePlan, never a model number.
// See docs/design.md for the algorithm. Thread safety: SolveFrontier is
// reentrant; it only reads the Problem.
#pragma once

#include <algorithm>
#include <atomic>
#include <vector>

#include "perseus/problem.h"
#include "perseus/status.h"

namespace perseus {

inline constexpr int kAutoCheckMaxNodes = 4096;

// What SolveFrontier has done so far, for progress output from another thread.
struct FrontierProgress {
  std::atomic<int> sweep_steps{0};     // min-cut steps of the sweep
  // How far the sweep has come, from the slowest iteration time (0) to the
  // fastest (1). Steps are not spread evenly over it: later ones are slower.
  std::atomic<double> sweep_fraction{0};
  std::atomic<int> plans_recorded{0};  // plans extracted after the sweep
  std::atomic<int> record_times{0};    // at most this many (set when the sweep ends)
};

struct FrontierOptions {
  // Step between the iteration times plans are made for (the
  // Phillips-Dessouky unit time); coarser where max_plans asks, finer where
  // fewer than 64 would fall before the relaxation's least-energy time.
  double unit_time_s = 1e-3;
  // Lower bounds come from the sweep, which solves the convex relaxation
  // exactly at every step. -1 (default): a dual-flow certificate proves the
  // relaxation optimal at the all-max time, at any size (optimizer/
  // dual_certificate.h, milliseconds); should it fail, one min-cost-flow
  // solve as below when the problem has at most kAutoCheckMaxNodes
  // computations. N > 0: this many iteration times (the all-max time first)
  // are solved independently (a LEMON min-cost flow each: 0.1 s at 1,536
  // computations, 2 s at 8,192); should they disagree, the bounds
  // fall back to the independent solves. 0: no check.
  int lower_bound_samples = -1;
  // When set and it becomes true, SolveFrontier returns kUnavailable
  // ("cancelled") within one sweep step (a server stopping mid-solve).
  const std::atomic<bool>* cancel = nullptr;
  // When set, updated as the solve goes.
  FrontierProgress* progress = nullptr;
  // At most this many clock changes per GPU per iteration in every plan
  // (LimitClockChanges on each frontier plan, then the Pareto filter again);
  // -1: no limit. Lower bounds stay those of the unlimited problem.
  int max_clock_changes_per_gpu = -1;
  // Threads that make the discrete plans (0: every CPU this process may run
  // on). With two or more, all but one start on the plans at and below the
  // relaxation's least-energy time while the sweep still runs; the rest are
  // made once it is done, on all of them. The frontier is the same for any
  // count.
  int threads = 0;
  // Plans are made at about this many evenly spaced iteration times between
  // the fastest time and the relaxation's least-energy time where that
  // spacing is coarser than the unit time, and at no more than 4 x this many
  // in all (0: every unit time). The fastest and the all-max time always get
  // theirs. Making plans is most of a large solve's time. See MakePlansFor.
  int max_plans = 0;
};

// The plans `perseus optimize` writes and a server keeps per job by default
// (--max-plans, --max-frontier-plans): the frontier's time span / 1,000 is
// finer than a straggler response can use.
inline constexpr int kDefaultMaxPlans = 1000;

// FrontierOptions::max_plans for a caller that keeps at most `kept_plans`
// plans (0: all, made at every unit time): plans are made at no fewer than
// kDefaultMaxPlans times, so keeping few plans picks among the same frontier.
inline int MakePlansFor(int kept_plans) { return kept_plans == 0 ? 0 : std::max(kept_plans, kDefaultMaxPlans); }

struct FrontierPlan {
  PlanChoice choice;          // option index per node (see Problem)
  double time_s = 0;          // exact, by EvaluatePlan
  double energy_j = 0;        // exact, by EvaluatePlan
  double lower_bound_j = 0;   // no plan with time <= time_s uses less energy (0 if not computed)
};

struct FrontierStats {
  int sweep_steps = 0;         // min-cut steps of the sweep
  int candidate_plans = 0;     // plans evaluated before Pareto filtering
  double solve_s = 0;          // wall time of the sweep and plan extraction
  double plans_s = 0;          // the part of solve_s spent making discrete plans
  int plan_threads = 1;        // on this many threads (FrontierOptions::threads)
  int plans_during_sweep = 0;  // of candidate_plans, made while the sweep ran (on plan_threads - 1)
  double lower_bound_s = 0;    // time the lower-bound check took (its certificate runs beside the plans on 2+ threads)
  bool lower_bound_checked = false;   // the sweep's relaxation matched the certificate or every independent solve
  double lower_bound_max_error = 0;   // largest relative difference seen in that check
  double clock_limit_s = 0;           // wall time of FrontierOptions::max_clock_changes_per_gpu
  // The sweep reached the fastest possible iteration time. False means it
  // stopped early (a numerical stall) and plans faster than the first plan
  // other than all-max may be missing; the plans reported are still honest.
  bool sweep_complete = true;
};

struct Frontier {
  FrontierPlan all_max;              // every computation at its highest frequency
  std::vector<FrontierPlan> plans;   // Pareto-optimal, time ascending, energy descending
  FrontierStats stats;

  // Times that differ by under this share (floating-point summation order)
  // count as equal, in PlanForTime and in the Pareto filter.
  static constexpr double kSameTime = 1e-12;
  // A plan at most this share slower than a time counts as no slower in
  // PlanForTime: the solver fits its plans to their deadlines within it
  // (kTimeEps), so a no-slowdown plan can come out 1e-9 above the all-max
  // time (found in review: a plan 6e-10 above saving 4.15% was passed over
  // for all-max, 0%).
  static constexpr double kNoSlowerThan = 1e-9;
  // The least-energy plan whose time is <= time_s (kNoSlowerThan), or nullptr.
  const FrontierPlan* PlanForTime(double time_s) const;
  // The least-energy plan no slower than all_max.
  const FrontierPlan* NoSlowdownPlan() const { return PlanForTime(all_max.time_s); }
  // The minimum-energy plan (the frontier's slowest point, T*).
  const FrontierPlan& MinEnergyPlan() const { return plans.back(); }
};

// The plan with at most `max_changes_per_gpu` clock changes per GPU per
// iteration (ClockChangesPerGpu) that uses the least energy among those whose
// computations are each no slower than in `choice`, so the iteration time
// cannot grow. GPUs already within the limit are left alone. Exact per GPU (a
// dynamic programme over its execution order). Where no such assignment meets
// the limit on a GPU (a lower clock measured faster than the highest), its
// computations may take any option, the least added time first, then the
// least energy; only a GPU whose computations share too few clocks to meet
// the limit even so gets the fewest changes it can have.
PlanChoice LimitClockChanges(const Problem& problem, const PlanChoice& choice, int max_changes_per_gpu);
// Plans that run each GPU at one clock (no clock changes; the per-stage
// clocks of Zeus), found by a local search over each GPU's clock (among those
// all its computations list), every state evaluated exactly (time and
// energy): from the highest clocks, (1) a descent, each step lowering one GPU
// or every GPU by one to four clocks, the move that saves energy without
// slowing the iteration first (the most saved), otherwise the one that saves
// the most per second added; (2) from its end, the least energy (moves up or
// down); (3) the frontier walked back from there, each point the least energy
// found at least 1/128 of the time range faster than the last; (4) every
// clock all GPUs share, on every GPU. Every state kept is returned (not
// filtered), the first being the highest clocks; none when a GPU's
// computations share no clock. A heuristic (clock_changes_test compares it
// with exhaustive search). Limited plans are made from the unlimited
// frontier's, whose computations only get faster; where stages differ in
// weight or a lower clock is faster than the highest, these can beat them.
// Stops early (returning what it has) when `cancel` becomes true.
std::vector<PlanChoice> OneClockPerGpuPlans(const Problem& problem, const std::atomic<bool>* cancel = nullptr);
// `choice` with its runs of one clock (each GPU's consecutive computations at
// one clock, around the cycle) moved, each run as a whole, to other clocks
// its computations all list, the most energy saved first, while the plan's
// exact time stays within `deadline_s`: no GPU changes clocks more often, and
// the energy only falls. Limited plans get this after LimitClockChanges,
// which only speeds computations up.
PlanChoice MoveClockRuns(const Problem& problem, const PlanChoice& choice, double deadline_s,
                         const std::atomic<bool>* cancel = nullptr);
// `limited` (LimitClockChanges of `choice`) with MoveClockRuns within the
// slower of `choice`'s time and its own (it is no slower than `choice` unless
// a lower clock is faster); `limited` itself when it already runs one clock
// per GPU (OneClockPerGpuPlans covers those). Moved runs use the slack the
// limit's speed-ups left, which otherwise absorbs late clock switches:
// control::LimitClockChangesForLatency chooses whether to move them.
PlanChoice MoveLimitedPlansRuns(const Problem& problem, const PlanChoice& choice, const PlanChoice& limited,
                                const std::atomic<bool>* cancel = nullptr);
// LimitClockChanges on every plan of `frontier` (of at most kMaxLimitedPlans
// of them, spread evenly in time, the fastest, no-slowdown and minimum-energy
// ones always among them), together with OneClockPerGpuPlans (no changes,
// so within any limit), then the Pareto filter again (limited plans can
// dominate each other). Each takes the lower bound of the first unlimited
// plan at least as slow (a bound holds for every plan no slower than its
// own), so bounds never rise with time. With `move_runs` each plan is kept
// both as LimitClockChanges makes it and with its runs moved
// (MoveLimitedPlansRuns). What SolveFrontier does with
// FrontierOptions::max_clock_changes_per_gpu. When `cancel` becomes true the
// remaining plans are left unlimited (the caller discards the result). On
// `threads` threads (0: every CPU this process may run on). `one_clock_plans`:
// OneClockPerGpuPlans(problem), where the caller has them already (a search of
// 0.3 s at 16 x 256); null: searched here. `unmoved`: also the frontier
// without moved runs, as `move_runs` false makes it, from the same pass.
inline constexpr size_t kMaxLimitedPlans = 256;
void LimitFrontierClockChanges(const Problem& problem, int max_changes_per_gpu, Frontier* frontier,
                               const std::atomic<bool>* cancel = nullptr, int threads = 0, bool move_runs = true,
                               const std::vector<PlanChoice>* one_clock_plans = nullptr, Frontier* unmoved = nullptr);

Result<Frontier> SolveFrontier(const Problem& problem, const FrontierOptions& options);

}  // namespace perseus
