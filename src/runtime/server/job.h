// Job: the server's in-memory copy of one job, rebuilt from the Store at
// start-up and updated only after the Store committed a change.
// Thread safety: guarded by `mu`; `plans` is immutable once set.
#pragma once

#include <atomic>
#include <chrono>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <tuple>
#include <vector>

#include "carbon/intensity_source.h"
#include "perseus/schedule.h"
#include "runtime/server/job_history.h"
#include "runtime/server/job_state.h"
#include "runtime/server/plan_book.h"
#include "runtime/server/power_cap_schedule.h"
#include "runtime/server/profiling_windows.h"

namespace perseus::server {

// One iteration of one pipeline, over the ranks that reported it so far (a
// rank's repeated report of one iteration counts once).
struct IterationSample {
  double max_compute_time_s = 0;
  double energy_j = 0;
  std::set<int> ranks;
  bool in_history = false;  // complete and recorded in the job's history
};

struct Job {
  std::mutex mu;
  JobSpec spec;
  Schedule schedule;
  ControlState state;
  std::vector<std::optional<RankInfo>> ranks;        // [rank]
  std::map<std::tuple<int, int, int>, int> by_coords;  // (dp, pp, tp) -> rank
  int registered = 0;
  std::vector<std::vector<int>> stage_ranks;  // [stage] -> registered ranks
  WindowReportMap window_reports;             // profiling: (window, rank) -> report
  std::set<int> mismatch_warned;              // ranks already warned about schedule mismatches
  std::string profile_csv;
  std::shared_ptr<const PlanBook> plans;  // set once running
  // [pipeline] iteration -> sample; only iterations run under the current plan.
  std::vector<std::map<int64_t, IterationSample>> windows;
  JobHistory history;  // plans, stragglers, carbon decisions and iterations over time (not stored)
  control::CarbonForecastCache carbon_forecast;  // the carbon decision's forecaster (not stored)
  std::map<int, int64_t> stored_since_prune;  // [rank] iteration rows stored since its history was last cut
  // The highest iteration number any rank reported (after its base; -1: none).
  // A restarted rank's numbers continue past it (JobService::RestartRank).
  int64_t last_iteration = -1;
  // Set under mu by DeleteJob: a request that found the job before it was
  // deleted changes nothing.
  bool deleted = false;
  // The job's running solve (JobService::Optimize), not stored: it reads
  // cancel_solve (FrontierOptions::cancel), which DeleteJob, the solve time
  // limit (ServiceLimits::max_solve_s) and a stopping service set. Under mu:
  // when it started (nullopt: none running) and whether the limit stopped it.
  std::atomic<bool> cancel_solve{false};
  std::optional<std::chrono::steady_clock::time_point> solve_started;
  bool solve_timed_out = false;
  // Power capping (job_service_power.cc), not stored: measured again after a restart.
  double measured_power_w = 0;   // the job's GPUs over their recent complete iterations; 0: none yet
  double power_correction = 1;   // measured / predicted for the plans that ran
  std::optional<PowerCapSchedule> cap_schedule;  // the spec's power_cap_schedule, loaded
  // The job's share of the server's power cap (JobService::ShareServerPowerCap,
  // not stored: shared again every tick); nullopt: no server cap applies.
  std::optional<protocol::PowerCapRequest> server_cap_share;
  // When a rank last reached the job (unix s); jobs idle past the server's
  // expiry are deleted.
  std::atomic<int64_t> last_activity_unix_s{0};
  // The carbon config's intensity source, made at the first carbon decision
  // (not stored: a restarted server makes a new one). Guarded by
  // carbon_source_mu, not mu: reading it may wait on the network.
  std::mutex carbon_source_mu;
  std::unique_ptr<carbon::IntensitySource> carbon_source;

  int ranks_per_pipeline() const { return spec.pp * spec.tp; }
  // Ranks of each stage (all pipelines), registered ones only.
  std::vector<std::vector<const RankInfo*>> RanksByStage() const;
  std::vector<const RankInfo*> StageRanks(int stage) const;
  // Records a registered rank in the per-stage index.
  void IndexRank(const RankInfo& info);
  // Ranks that reported profiling window `window`.
  int CountReported(int window) const;
  // The plan version rank `info` sees now.
  int64_t RankVersion(const RankInfo& info) const;
  // Whether the carbon policy pauses the job in `s` (its last decision paused
  // a running job; carbon.pause).
  bool CarbonPaused(const ControlState& s) const;
  // What all the job's GPUs draw together while it is paused: nothing once
  // released, every pipeline's blocking power while held (control::PausePowerW).
  // REQUIRES: spec.carbon, plans.
  double PausedPowerW() const;
};

}  // namespace perseus::server
