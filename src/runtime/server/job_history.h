// JobHistory: what a running job did over time, for the dashboard
// (GET /jobs/{id}/history): after every change of the job's state, the plan
// each pipeline runs, the stragglers and the carbon decision; and every
// pipeline iteration that all of the pipeline's ranks reported, with its
// measured time and energy beside its plan's prediction; and each pipeline's
// running totals (iterations, energy, plan switches) for /metrics' counters.
//
// Kept in memory since the server started (a restarted server begins with
// the state it loaded) and bounded: the newest kMaxEvents events and
// kMaxIterations iterations (all pipelines together) of each job.
// Thread safety: none; the Job's mutex guards it.
#pragma once

#include <cstdint>
#include <deque>
#include <optional>
#include <string>
#include <vector>

#include "runtime/server/job_state.h"

namespace perseus::server {

// One pipeline iteration (energy over all the pipeline's GPUs).
struct IterationPoint {
  int pipeline = 0;
  int64_t iteration = 0;
  int64_t unix_s = 0;  // when the last of the pipeline's ranks reported it
  int plan_index = 0;  // the frontier plan it ran
  double time_s = 0;   // the slowest rank's compute time
  std::optional<double> energy_j;  // nullopt: the ranks did not measure energy
  double predicted_time_s = 0, predicted_energy_j = 0;
  double all_max_energy_j = 0;  // the same iteration with every computation at the maximum clock
};

// Cumulative figures of one pipeline since the server started (Prometheus
// counters: they only grow, and start again from 0 after a restart).
struct PipelineTotals {
  int64_t iterations = 0;           // complete pipeline iterations recorded
  int64_t measured_iterations = 0;  // of them, those with a measured energy
  double energy_j = 0;              // measured energy of the measured iterations
  double all_max_energy_j = 0;      // the all-max prediction for the same iterations
  double predicted_energy_j = 0;    // their plans' predictions
  int64_t plan_switches = 0;        // changes of the pipeline's frontier plan
};

// How much of the history a reader wants.
struct HistoryQuery {
  int64_t max_events = 256;       // the newest this many events
  int64_t max_iterations = 1024;  // the newest this many iterations (after the pipeline filter)
  std::optional<int> pipeline;    // only this pipeline's iterations
};

class JobHistory {
 public:
  static constexpr size_t kMaxEvents = 1024;
  static constexpr size_t kMaxIterations = 4096;

  // Appends an event when `after` differs from `before` in phase, any
  // pipeline's plan, the stragglers or the carbon decision (always the first).
  void RecordState(const ControlState& before, const ControlState& after, int64_t now_unix_s);
  void RecordIteration(const IterationPoint& point);
  // Since the server started; pipelines that recorded nothing are absent.
  const std::map<int, PipelineTotals>& Totals() const { return totals_; }
  // {"events": [...], "iterations": [...], "dropped_events": N, "dropped_iterations": N}.
  Json ToJson(const HistoryQuery& query) const;

 private:
  struct Event {
    int64_t unix_s = 0;
    Phase phase = Phase::kRegistering;
    std::vector<int> plan_indices;  // [pipeline]
    std::vector<Straggler> stragglers;
    std::optional<CarbonState> carbon;  // a new carbon decision (its history left out)
  };
  void CountPlanSwitches(const ControlState& before, const ControlState& after);

  std::deque<Event> events_;
  std::deque<IterationPoint> iterations_;
  std::map<int, PipelineTotals> totals_;  // [pipeline]
  int64_t dropped_events_ = 0, dropped_iterations_ = 0;
};

}  // namespace perseus::server
