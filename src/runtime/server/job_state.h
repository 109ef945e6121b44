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

#include "control/carbon_window.h"
#include "control/profiling_sweep.h"
#include "control/straggler_detection.h"
#include "perseus/status.h"
#include "runtime/protocol/rank_messages.h"
#include "runtime/protocol/job_spec.h"
#include "runtime/protocol/rank_plan.h"
#include "common/json_fields.h"

namespace perseus::server {

// The job as it registered (runtime/protocol/job_spec.h).
using protocol::CarbonConfig;
using protocol::CarbonPause;
using protocol::JobSpec;
using protocol::JobSpecToJson;
using protocol::ParseJobSpec;
using protocol::RedactedJobSpecJson;

enum class Phase { kRegistering, kProfiling, kOptimizing, kRunning, kDone, kFailed };
const char* PhaseName(Phase phase);  // "registering", "profiling", ...
Result<Phase> ParsePhase(const std::string& name);

// A registered rank: what it sent (sm_clocks_mhz descending).
using RankInfo = protocol::RankRegistration;
// Ok when `r`'s ranks fit the job's degrees; otherwise InvalidArgument naming the field.
Status CheckRankFitsJob(const RankInfo& r, int dp, int pp, int tp);

// Online profiling's options and state (control/profiling_sweep.h), and
// straggler detection's options (control/straggler_detection.h).
using control::ProfilingOptions;
using control::ProfilingState;
using control::StragglerOptions;
using control::ProfilingWindowPlan;

// Something a user should know about a job: a bad profile, ranks that run
// another schedule than declared, clocks that do not stick. Raised once per
// (code, stage, rank), logged at warning level, shown by GET /jobs/{id},
// perseus status and perseus_job_warnings; rank plans carry them too, so the
// type and its encoding are the protocol's.
using protocol::JobWarning;

struct PipelinePlan {
  int plan_index = 0;  // into Frontier::plans
  int64_t version = 0;
  // > 0: the plan with every clock held at most this (a power cap below the
  // frontier's least power; PlanBook::Cost and StagePlanJson apply it).
  int clock_ceiling_mhz = 0;
  // The carbon policy paused the job (CarbonState::paused, carbon.pause): its
  // ranks get a "pause" plan, whose steps are plan_index's. Not stored: a
  // loaded state derives it from the carbon state.
  bool paused = false;
};

using control::CarbonState;
using control::Straggler;

// The power cap in force (docs/power.md) and which of its two settings runs.
struct PowerCapState {
  bool set = false;       // a cap is in force
  bool from_api = false;  // set or cleared through the API: the spec's cap no longer applies
  protocol::PowerCapRequest cap;
  bool run_fast = true;   // the faster of the mix's two settings runs now
};

struct ControlState {
  Phase phase = Phase::kRegistering;
  std::string error;  // why the job failed
  int64_t version_counter = 0;
  int64_t base_version = 0;
  ProfilingState profiling;              // filled when profiling starts
  std::vector<JobWarning> warnings;      // at most kMaxJobWarnings
  std::vector<PipelinePlan> pipelines;   // [pipeline], filled when running starts
  std::vector<Straggler> stragglers;
  double blocking_power_w = 0;           // per GPU, used by the optimisation
  // The slowest clock switch any rank reported (seconds; < 0: none), which
  // limits clock changes when the spec does not (control::LimitClockChangesForLatency).
  double clock_switch_latency_s = -1;
  CarbonState carbon;
  // While carbon.paused: the iteration (the server's count, with the ranks'
  // bases) the pause takes effect before; -1 otherwise.
  int64_t pause_from_iteration = -1;
  PowerCapState power_cap;

  static constexpr size_t kMaxJobWarnings = 100;
  int64_t NextVersion() { return ++version_counter; }
  const Straggler* FindStraggler(int pipeline) const;
  // Adds `w` unless one with its code, stage and rank exists; true if added.
  bool AddWarning(JobWarning w);
};

Json ControlStateToJson(const ControlState& state);
// [{"pipeline", "slowdown", "source": "detected" or "api"}], as replies show them.
Json StragglersJson(const std::vector<Straggler>& stragglers);
Result<ControlState> ControlStateFromJson(const Json& j);

// The rank client's messages (runtime/protocol/rank_messages.h).
using protocol::DurationTotals;
using protocol::IterationReport;
using protocol::ParseWindowReport;
using protocol::WindowReport;
using protocol::WindowReportToJson;

}  // namespace perseus::server
