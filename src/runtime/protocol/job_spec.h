// JobSpec: what a training job tells the server when it registers.
//
// Parsed from the POST /jobs body (docs/http_api.md) and stored verbatim as
// JSON, so a restarted server rebuilds the same job; the Python module
// (perseus.register_job) checks a spec with the same parser before sending it.
// Thread safety: values and pure functions.
#pragma once

#include <optional>
#include <string>

#include "control/profiling_sweep.h"
#include "control/straggler_detection.h"
#include "perseus/schedule.h"
#include "perseus/status.h"
#include "common/json_fields.h"
#include "runtime/protocol/job_requests.h"

namespace perseus::protocol {

// Online profiling in windows (docs/http_api.md, "Online profiling").
using control::ProfilingOptions;

using control::StragglerOptions;

// Whether the carbon policy may pause a job: never; kHold (the ranks wait
// holding their GPUs, which draw the blocking power); kRelease (the job is
// asked to stop and restart when the server resumes it; the pause costs this
// job nothing). Spelled "never", "hold", "release" in JSON.
enum class CarbonPause { kNever, kHold, kRelease };
const char* CarbonPauseName(CarbonPause pause);

// Carbon-aware running (docs/carbon.md, "In the server"): where the grid
// intensity comes from and how much average slowdown (vs the no-slowdown plan)
// the policy may spend.
struct CarbonConfig {
  std::string source;            // "fixed", "trace" or "electricitymaps"
  double value_g_per_kwh = 0;    // fixed
  std::string trace_path;        // trace: CSV `timestamp,gco2_per_kwh`
  std::string zone, token, base_url = "https://api.electricitymap.org";  // electricitymaps
  double slowdown_budget = 0.05;
  int64_t window_s = 3600;       // how often the plan is re-chosen
  // > 0: the job's work in hours at the no-slowdown plan, counted from its
  // first carbon decision; the budget becomes a deadline (docs/carbon.md,
  // "Deadline mode"). 0: unknown (a rolling day-ahead budget).
  double job_hours = 0;
  // With job_hours, whether the policy may pause the job (docs/carbon.md,
  // "Pausing in the server").
  CarbonPause pause = CarbonPause::kNever;
  // With pause "release": seconds from a resume to the job's first iteration
  // (it stopped, waits for its restart, restores its checkpoint), charged as
  // time without progress (control::CarbonWindowConfig::restart_windows).
  double restart_s = kDefaultRestartS;
  // With pause "release": watts per GPU drawn during that restart (the
  // decision charges each resume this energy); absent: the job's blocking
  // power, its GPUs idle while the processes start and restore.
  std::optional<double> restart_power_w;
  static constexpr double kDefaultRestartS = 600;
};

struct JobSpec {
  std::string id;
  int dp = 1, pp = 1, tp = 1;
  ScheduleSpec schedule;  // stages == pp
  std::optional<double> blocking_power_w;  // per GPU; measured when absent
  double unit_time_s = 1e-3;               // frontier sweep step
  int max_clock_changes_per_gpu = -1;      // FrontierOptions::max_clock_changes_per_gpu; -1: no limit
  ProfilingOptions profiling;
  StragglerOptions straggler;
  std::optional<CarbonConfig> carbon;  // absent: carbon policy off
  std::optional<PowerCapRequest> power_cap;  // absent: no cap (PUT /jobs/{id}/power-cap sets one later)
  std::string power_cap_schedule;            // a CSV of caps over time (docs/power.md); not with power_cap

  int world_size() const { return dp * pp * tp; }
  int pipelines() const { return dp; }
  int stages() const { return pp; }
};

// A request's fields the parser does not know (a misspelling) are errors; a
// spec stored by an older release may hold fields since dropped.
enum class UnknownFields { kReject, kIgnore };
// Validates every field; errors name it ("field 'pp': ..."; "field
// 'straggler.treshold': unknown field").
Result<JobSpec> ParseJobSpec(const Json& body, UnknownFields unknown = UnknownFields::kReject);
// The canonical JSON form (includes carbon.token: it is stored with the job;
// use RedactedJobSpecJson for anything shown to clients) (ParseJobSpec(JobSpecToJson(s)) == s).
Json JobSpecToJson(const JobSpec& spec);
// JobSpecToJson with carbon.token replaced by "***" when set.
Json RedactedJobSpecJson(const JobSpec& spec);

}  // namespace perseus::protocol
