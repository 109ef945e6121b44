#include "control/clock_change_limit.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <optional>
#include <vector>

namespace perseus::control {
namespace {

// The limits tried: 0-4, then about 1.5x apart, below the most changes any
// GPU makes in the unlimited plan.
std::vector<int> CandidateLimits(int most_changes) {
  std::vector<int> out;
  for (int k = 0; k < most_changes; k = k < 4 ? k + 1 : k + k / 2) out.push_back(k);
  return out;
}

// The least energy of `one_clock_plans` (OneClockPerGpuPlans) no slower than
// `all_max_time_s` (within Frontier::kNoSlowerThan, as the frontier's
// no-slowdown plan is chosen); no clock changes, so no switch latency.
std::optional<PlanCost> CheapestOneClockPlan(const Problem& problem, double all_max_time_s,
                                             const std::vector<PlanChoice>& one_clock_plans) {
  std::optional<PlanCost> best;
  for (const PlanChoice& choice : one_clock_plans) {
    const PlanCost cost = EvaluatePlan(problem, choice);
    if (cost.time_s <= all_max_time_s * (1 + Frontier::kNoSlowerThan) && (!best || cost.energy_j < best->energy_j)) {
      best = cost;
    }
  }
  return best;
}

// Whether LimitClockChangesForLatency limits the frontier itself (unmeasured
// latencies are negative).
bool DecidesForLatency(double clock_switch_latency_s) { return clock_switch_latency_s > kSlowClockSwitchS; }

// Modelled times this close (relative) are the same: two plans whose late
// switches fall alike differ only by rounding.
constexpr double kSameLateTime = 1e-9;

// The spec's limit `d.limit` on `frontier`, with the runs moved or not,
// whichever way leaves the limited frontier's own no-slowdown plan (the plan
// that runs), evaluated with the latency, the cheaper within the tolerance of
// all-max, else the quicker (the cheaper where both are as late). Both ways
// are made in full, in one pass: the plan that runs need not be the
// no-slowdown plan limited (another plan limited can be cheaper, or one on
// one clock per GPU), and a stand-in cost for a late way would choose it
// blindly (both found in review).
void LimitBothWaysForLatency(const Problem& problem, double clock_switch_latency_s,
                             const std::vector<PlanChoice>& one_clock_plans, Frontier* frontier,
                             const std::atomic<bool>* cancel, int threads, ClockChangeDecision& d) {
  const double deadline_s = d.all_max_time_s * (1 + kLatencySlowdownTolerance);
  Frontier way[2];
  way[1] = std::move(*frontier);
  LimitFrontierClockChanges(problem, d.limit, &way[1], cancel, threads, /*move_runs=*/true, &one_clock_plans, &way[0]);
  PlanCost cost[2];
  for (bool move_runs : {false, true}) {
    const FrontierPlan* runs = way[move_runs].NoSlowdownPlan();
    cost[move_runs].time_s = std::numeric_limits<double>::infinity();  // no plan as fast as all-max
    if (runs != nullptr) cost[move_runs] = EvaluatePlanWithClockLatency(problem, runs->choice, clock_switch_latency_s);
  }
  // Both late and as late up to rounding (the late switches, not the moved
  // runs, set the time): the cheaper, as when both are on time.
  const bool on_time[2] = {cost[0].time_s <= deadline_s, cost[1].time_s <= deadline_s};
  const bool as_late = std::abs(cost[1].time_s - cost[0].time_s) <= kSameLateTime * cost[0].time_s;
  const bool moved = on_time[0] == on_time[1] && (on_time[0] || as_late) ? cost[1].energy_j < cost[0].energy_j
                     : on_time[0] != on_time[1]                          ? on_time[1]
                                                                         : cost[1].time_s < cost[0].time_s;
  *frontier = std::move(way[moved]);
  d.runs_moved = moved;
  d.limited = cost[moved];
  d.frontier_limited = true;
}

}  // namespace

bool IsSlowClockSwitch(double latency_s, double mean_computation_s) {
  return latency_s > std::max(kSlowClockSwitchS, 0.25 * mean_computation_s);
}

int SolveClockChangeLimit(int spec_limit, double clock_switch_latency_s) {
  return DecidesForLatency(clock_switch_latency_s) ? -1 : spec_limit;
}

ClockChangeDecision LimitClockChangesForLatency(const Problem& problem, int spec_limit, double clock_switch_latency_s,
                                                Frontier* frontier, const std::atomic<bool>* cancel, int threads) {
  ClockChangeDecision d;
  d.limit = spec_limit;
  if (!DecidesForLatency(clock_switch_latency_s)) return d;
  const FrontierPlan* fastest = frontier->NoSlowdownPlan();
  if (fastest == nullptr) {
    // Nothing to judge the latency by; the spec's limit holds all the same.
    if (spec_limit >= 0) LimitFrontierClockChanges(problem, spec_limit, frontier, cancel, threads);
    d.frontier_limited = spec_limit >= 0;
    return d;
  }
  d.all_max_time_s = frontier->all_max.time_s;
  d.unlimited = EvaluatePlanWithClockLatency(problem, fastest->choice, clock_switch_latency_s);
  const double deadline_s = d.all_max_time_s * (1 + kLatencySlowdownTolerance);
  if (spec_limit < 0 && d.unlimited.time_s <= deadline_s) {
    d.limited = d.unlimited;
    return d;
  }
  // The least energy among limits within the tolerance of all-max; should none be
  // (a GPU whose computations share no clock), the fastest. Under any limit
  // the frontier also holds plans on one clock per GPU: the cheapest no
  // slower than all-max stands for a limit whose own plan costs more.
  const std::vector<PlanChoice> one_clock_plans = OneClockPerGpuPlans(problem, cancel);
  if (spec_limit >= 0) {
    LimitBothWaysForLatency(problem, clock_switch_latency_s, one_clock_plans, frontier, cancel, threads, d);
    return d;
  }
  const std::optional<PlanCost> one_clock = CheapestOneClockPlan(problem, d.all_max_time_s, one_clock_plans);
  const std::vector<int> changes = ClockChangesPerGpu(problem, fastest->choice);
  // Each limit with its runs moved or not (moved runs take the slack that
  // absorbs late switches: at 100 ms on GPT-3 8 x 12 moving them for every
  // limit would leave only zero changes within the tolerance).
  int best = -1, quickest = -1;
  bool best_moved = false, quickest_moved = false;
  PlanCost best_cost, quickest_cost = d.unlimited;
  for (int k : CandidateLimits(*std::max_element(changes.begin(), changes.end()))) {
    const PlanChoice limited = LimitClockChanges(problem, fastest->choice, k);
    for (bool move_runs : {false, true}) {
      if (cancel != nullptr && cancel->load(std::memory_order_relaxed)) return d;
      const PlanChoice plan = move_runs ? MoveLimitedPlansRuns(problem, fastest->choice, limited, cancel) : limited;
      PlanCost cost = EvaluatePlanWithClockLatency(problem, plan, clock_switch_latency_s);
      if (one_clock && (cost.time_s > deadline_s || one_clock->energy_j < cost.energy_j)) cost = *one_clock;
      if (cost.time_s < quickest_cost.time_s) {
        quickest = k;
        quickest_moved = move_runs;
        quickest_cost = cost;
      }
      if (cost.time_s <= deadline_s && (best < 0 || cost.energy_j < best_cost.energy_j)) {
        best = k;
        best_moved = move_runs;
        best_cost = cost;
      }
    }
  }
  if (best < 0) {
    best = quickest;
    best_moved = quickest_moved;
    best_cost = quickest_cost;
  }
  if (best < 0) return d;  // no limit is faster than none
  d.limit = best;
  d.runs_moved = best_moved;
  d.limited = best_cost;
  d.automatic = true;
  d.frontier_limited = true;
  LimitFrontierClockChanges(problem, d.limit, frontier, cancel, threads, d.runs_moved, &one_clock_plans);
  // What the warning reports is the plan that runs: the limited frontier's
  // own no-slowdown plan, which can be another plan limited (on the shared
  // profiles' 8 x 12 and 8 x 24 jobs at 20-200 ms, within 0.16% in energy and
  // 0.03% in time of the one judged, and within the tolerance in every case).
  if (const FrontierPlan* runs = frontier->NoSlowdownPlan()) {
    d.limited = EvaluatePlanWithClockLatency(problem, runs->choice, clock_switch_latency_s);
  }
  return d;
}

}  // namespace perseus::control
