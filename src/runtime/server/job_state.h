// The persistent state of one job, as plain values.
//
// Ranks, profiling measurements and iteration reports are rows of their own
// tables; ControlState (phase, profiling sweep, plan in use per pipeline,
// stragglers, plan versions, the carbon policy's state) is small and stored as one JSON document. The
// server keeps a copy in memory and writes every change to the Store before
// it replies, so a restarted server rebuilds exactly this state.
//
// Plan versions: every change that alters some rank's plan takes the next
// value of version_counter. A rank's plan version is the largest of
// base_version, its stage's sweep version (profiling) and its pipeline's
// version (running), so a rank whose plan did not change keeps its version.
// Thread safety: values; the JobService guards them.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "perseus/status.h"
#include "runtime/server/json_fields.h"

namespace perseus::server {

enum class Phase { kRegistering, kProfiling, kOptimizing, kRunning, kDone, kFailed };
const char* PhaseName(Phase phase);  // "registering", "profiling", ...
Result<Phase> ParsePhase(const std::string& name);

struct RankInfo {
  int rank = 0, dp_rank = 0, pp_rank = 0, tp_rank = 0;
  std::string gpu_name, gpu_uuid;
  std::vector<int> sm_clocks_mhz;  // supported, descending
};

struct StageSweep {
  std::vector<int> clocks_mhz;  // clocks to sweep, descending
  int index = 0;                // clocks_mhz[index] is being measured
  int rises = 0;                // energy rises in a row so far
  double last_energy_j = -1;    // forward + backward energy per microbatch at the previous clock
  bool done = false;
  int64_t version = 0;
  int clock_mhz() const { return clocks_mhz[index]; }
};

struct PipelinePlan {
  int plan_index = 0;  // into Frontier::plans
  int64_t version = 0;
};

struct Straggler {
  int pipeline = 0;
  double slowdown = 1;      // iteration time / the other pipelines' time
  bool detected = false;    // false: declared through the API
};

// The carbon policy's state (jobs with a carbon config, while running).
// Accounting is in windows of the fastest plan's work: the policy's own
// slowdown, elapsed_windows / work_windows - 1, stays within the budget.
struct CarbonState {
  int plan_index = 0;                // into Frontier::plans; all pipelines run at least this slow
  bool evaluated = false;            // false: no decision yet (plan_index 0)
  int64_t last_eval_unix_s = 0;      // when plan_index was chosen
  int64_t history_last_hour = -1;    // floor(unix_s / 3600) of history.back()
  double intensity_g_per_kwh = 0;    // the reading at the last decision
  bool stale = false;                // the reading was a fallback
  double forecast_g_per_kwh = 0;     // the next window's forecast at the last decision
  double lambda_g_per_s = 0;
  double elapsed_windows = 0;        // wall time under carbon control, in windows
  double work_windows = 0;           // work done, in windows of the fastest plan
  std::vector<double> history;       // one intensity per UTC hour, oldest first (at most 4 weeks)
  int history_first_hour = 0;        // UTC hour of day of history[0]
  std::string explanation;           // the last decision's log line
};

struct ControlState {
  Phase phase = Phase::kRegistering;
  std::string error;  // why the job failed
  int64_t version_counter = 0;
  int64_t base_version = 0;
  std::vector<StageSweep> stages;        // [stage], filled when profiling starts
  std::vector<PipelinePlan> pipelines;   // [pipeline], filled when running starts
  std::vector<Straggler> stragglers;
  double blocking_power_w = 0;           // per GPU, used by the optimisation
  CarbonState carbon;

  int64_t NextVersion() { return ++version_counter; }
  const Straggler* FindStraggler(int pipeline) const;
};

Json ControlStateToJson(const ControlState& state);
Result<ControlState> ControlStateFromJson(const Json& j);

struct InstructionTotals {
  int64_t count = 0;
  double time_s = 0, energy_j = 0;
};

// Everything one rank reported at one clock, summed.
struct Measurement {
  int rank = 0;
  int freq_mhz = 0;
  InstructionTotals forward, backward;
  double blocking_time_s = 0, blocking_energy_j = 0;
  int reports = 0;  // profiled iterations
};

struct IterationReport {
  int rank = 0;
  int64_t iteration = 0;
  double compute_time_s = 0;  // the pipeline schedule, before gradient sync
  double energy_j = 0;        // the rank's GPU energy in that time (0: not measured)
  int64_t plan_version = 0;   // the plan the rank ran
};

}  // namespace perseus::server
