// JobSpec: what a training job tells the server when it registers.
//
// Parsed from the POST /jobs body (docs/http_api.md) and stored verbatim as
// JSON, so a restarted server rebuilds the same job. Thread safety: values.
#pragma once

#include <optional>
#include <string>

#include "control/straggler_detection.h"
#include "perseus/schedule.h"
#include "perseus/status.h"
#include "common/json_fields.h"

namespace perseus::server {

// Online profiling in windows (docs/http_api.md, "Online profiling").
struct ProfilingOptions {
  int warmup_iterations = 1;     // run, not measured, after each window change
  int window_iterations = 2;     // measured iterations per window ("iterations_per_clock" is accepted too)
  int clock_stride = 0;          // profile every n-th supported clock (the lowest is always included);
                                 // 0: the smallest stride that keeps at most max_clocks clocks
  int max_clocks = 20;           // with clock_stride 0
  int min_clock_mhz = 0;         // do not profile below this clock (0: the lowest supported)
  int reference_every = 6;       // a window at the highest clocks every n windows (thermal drift anchor)
  double target_relative_error = 0.005;  // per-clock standard error of forward+backward energy
  int max_repeat_rounds = 2;     // rounds of repeat windows for clocks above the target
  double time_budget_s = 1500;   // repeat windows stop when profiling would run past this much job time (0: no limit)
  double thermal_time_constant_s = 0;  // the estimator's thermal drift time constant (0: chosen from the data)
};

using control::StragglerOptions;

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

  int world_size() const { return dp * pp * tp; }
  int pipelines() const { return dp; }
  int stages() const { return pp; }
};

// Validates every field; errors name it ("field 'pp': ...").
Result<JobSpec> ParseJobSpec(const Json& body);
// The canonical JSON form (includes carbon.token: it is stored with the job;
// use RedactedJobSpecJson for anything shown to clients) (ParseJobSpec(JobSpecToJson(s)) == s).
Json JobSpecToJson(const JobSpec& spec);
// JobSpecToJson with carbon.token replaced by "***" when set.
Json RedactedJobSpecJson(const JobSpec& spec);

}  // namespace perseus::server
