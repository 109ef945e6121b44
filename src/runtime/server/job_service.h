// JobService: the job lifecycle behind the HTTP API, independent of HTTP.
//
// register job -> ranks register -> online profiling (windows of forward and
// backward clocks, fitted by src/profiling/) -> optimisation (SolveFrontier on a background thread) -> running
// (fastest frontier plan; slower plans for the other pipelines while one
// straggles; with a carbon config, at least as slow as the carbon policy's
// plan, re-chosen every window: job_service_carbon.cc) -> done. Every change
// is committed to the Store before the method returns.
//
// Parts: the jobs by id (job_registry.h), the optimisation queue
// (optimization_queue.h), each with its own lock; the lifecycle in one .cc
// file per responsibility: registration and job control (job_service.cc,
// job_service_admin.cc), ranks and their plans (job_service_ranks.cc), online
// profiling (job_service_profiling.cc), running and stragglers
// (job_service_running.cc), carbon (job_service_carbon.cc). Requests arrive
// typed (api_handlers.h parses them); the decisions are src/control's. Errors:
// kInvalidArgument for bad input (the message names the field), kNotFound
// for an unknown job or rank, kUnavailable for a request that conflicts with
// the job's state (duplicate registration, wrong phase, stale profiling
// clock), kIoError when the database fails.
// Thread safety: thread-safe; one mutex per job.
#pragma once

#include <atomic>
#include <condition_variable>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <thread>

#include "perseus/optimizer.h"
#include "runtime/protocol/job_requests.h"
#include "runtime/server/job_resources.h"
#include "runtime/server/job.h"
#include "runtime/server/job_registry.h"
#include "runtime/server/optimization_queue.h"
#include "runtime/server/json_log.h"
#include "runtime/server/store.h"

namespace perseus::server {

using SolverFn = std::function<Result<Frontier>(const Problem&, const FrontierOptions&)>;

// What a registration did: created it, or found the same one registered.
struct Registered {
  bool created = false;
  Phase phase = Phase::kRegistering;  // RegisterRank: the job's phase afterwards
};
struct WindowAccepted {
  bool accepted = false;  // false: this rank already reported this window (a retry)
  Phase phase = Phase::kProfiling;
};
struct IterationsAccepted {
  size_t accepted = 0;
  std::vector<Straggler> stragglers;  // the job's, afterwards
  size_t stale = 0;  // dropped: sent by a process the rank has since been restarted from
};

// How the carbon policy (job_service_carbon.cc) and job expiry keep time.
struct CarbonOptions {
  std::function<int64_t()> clock;  // unix seconds; empty: the system clock
  bool background = true;          // threads run CarbonTick() and MaintenanceTick() every `poll_s`
  double poll_s = 1;
};

// What one server holds at most (docs/http_api.md, "Limits").
struct ServiceLimits {
  int max_jobs = 1000;               // registered jobs (quarantined ones count)
  int64_t job_expiry_s = 7 * 86400;  // a job no rank reached for this long is deleted; 0: never
  // Plans a job keeps (ThinFrontier; 0: all): bounds a big job's memory and
  // stored size at a time resolution a straggler response does not feel
  // (about the frontier's time span / 1,000).
  int max_frontier_plans = kDefaultMaxPlans;
  // Threads one optimisation makes its plans on (FrontierOptions::threads;
  // 0: every CPU the server may run on).
  int optimizer_threads = 0;
  // Jobs optimised at once (OptimizationQueue): one long solve does not hold
  // up the jobs that finish profiling after it.
  int optimizer_workers = 2;
  // A job's solve still running after this long is stopped and the job
  // fails, naming the limit (0: no limit). The exact sweep grows faster than
  // the job: 16 x 256 takes seconds, 32 x 128 x 2 chunks about a minute, 32 x
  // 512 x 2 hours (docs/design.md, "Speed").
  double max_solve_s = 3600;
  // The files and URLs a job spec may make the server read (job_resources.h);
  // the default reads any, as a server with a token does.
  JobResourcePolicy job_resources;
};

class JobService {
 public:
  // Loads every job from `store` and resumes unfinished optimisations.
  // `solver` defaults to SolveFrontier; `log` may be nullptr.
  // A job whose stored rows cannot be loaded is quarantined: listed with the
  // reason, refused with kUnavailable, and removable with DeleteJob.
  static Result<std::unique_ptr<JobService>> Create(Store* store, JsonLog* log, SolverFn solver = nullptr,
                                                    CarbonOptions carbon = {}, ServiceLimits limits = {});
  ~JobService();

  // The requests arrive typed (runtime/protocol/: the routes parse them,
  // api_handlers.h); these check them against the job and the server.
  Result<Registered> RegisterJob(const JobSpec& spec);
  Result<Registered> RegisterRank(const std::string& job_id, const RankInfo& rank);
  // The rank's plan as JSON text; {"changed":false,...} when `known_version`
  // is its current version.
  Result<std::string> RankPlan(const std::string& job_id, int rank, int64_t known_version);
  // POST .../windows: one rank's measurement of a profiling window (report.rank names the rank).
  Result<WindowAccepted> ReportWindow(const std::string& job_id, const protocol::WindowReport& report);
  // Every report's rank is `rank`. Reports whose `session` (when given) is
  // not the rank's registered one come from a process the rank has been
  // restarted from: dropped and counted as stale.
  Result<IterationsAccepted> ReportIterations(const std::string& job_id, int rank,
                                              std::vector<IterationReport> reports, const std::string& session = "");
  // Both return the job's stragglers afterwards.
  Result<std::vector<Straggler>> DeclareStraggler(const std::string& job_id,
                                                  const protocol::StragglerDeclaration& declared);
  Result<std::vector<Straggler>> ClearStraggler(const std::string& job_id, int pipeline);
  Status FinishJob(const std::string& job_id);
  // DELETE /jobs/{id}: removes the job and all its rows (also a quarantined one).
  Status DeleteJob(const std::string& job_id);
  // POST /jobs/{id}/reprofile: discards the profile and plans of a running,
  // failed or finished job and profiles it again; the phase afterwards.
  Result<Phase> Reprofile(const std::string& job_id);
  // POST /jobs/{id}/optimize: optimises a failed job again from its stored
  // profile (after an optimisation that failed, for instance past
  // ServiceLimits::max_solve_s before a restart with a higher limit); the
  // phase afterwards.
  Result<Phase> Reoptimize(const std::string& job_id);
  // Deletes expired jobs, retries optimisations whose result could not be
  // stored (a full disk) and stops solves past ServiceLimits::max_solve_s;
  // the background thread calls it every poll_s.
  void MaintenanceTick();
  // Jobs that could not be loaded: id -> why.
  std::map<std::string, std::string> QuarantinedJobs();

  // Carbon policy (job_service_carbon.cc). EvaluateCarbon makes a decision
  // now (POST /jobs/{id}/carbon/evaluate); CarbonTick makes one for every
  // running carbon job whose window elapsed; CarbonJson is GET /jobs/{id}/carbon.
  Result<Json> EvaluateCarbon(const std::string& job_id);
  void CarbonTick();
  Result<Json> CarbonJson(const std::string& job_id);

  // Power cap (job_service_power.cc, docs/power.md). SetPowerCap puts `cap`
  // in force now (nullopt: none; the spec's no longer applies) and returns
  // the job's power-cap summary; PowerCapTick measures each capped running
  // job's power and runs the faster or slower setting of its mix as the cap
  // window's clock says (the background thread calls it every poll_s).
  Result<Json> SetPowerCap(const std::string& job_id, const std::optional<protocol::PowerCapRequest>& cap);
  void PowerCapTick();
  // The server's own power cap (PUT/DELETE/GET /power-cap), shared by its
  // running jobs: every tick splits it by control::ShareCap (the most
  // GPU-weighted throughput) and each job runs under the lower of its own cap
  // and its share. Stored: a restarted server keeps it. Returns
  // ServerPowerCapJson(). Jobs still profiling or optimizing are not counted.
  Result<Json> SetServerPowerCap(const std::optional<protocol::PowerCapRequest>& cap);
  Json ServerPowerCapJson();

  Result<Json> JobSummary(const std::string& job_id);
  std::vector<Json> AllSummaries();
  Result<std::string> ProfileCsv(const std::string& job_id);
  Result<Json> FrontierJson(const std::string& job_id);
  // GET /jobs/{id}/history: the job's plans, stragglers, carbon decisions
  // and iterations over time (job_history.h); a pipeline outside the job is kInvalidArgument.
  Result<Json> HistoryJson(const std::string& job_id, const HistoryQuery& query);

  // Rank requests (registration, plans, reports) that named a job or rank the
  // server does not know: a wrong job id or rank in a training job.
  int64_t UnknownRankRequests() const { return unknown_rank_requests_.load(std::memory_order_relaxed); }

  // Blocks until no optimisation is queued or running (tests).
  void WaitForOptimizer();

 private:
  // Locking rules. The parts have their own locks, written in their
  // headers: jobs_ (job_registry.h: the jobs by id) and optimizer_
  // (optimization_queue.h). Each Job's mu guards the job (all of it but
  // carbon_source, under carbon_source_mu, and the atomic
  // last_activity_unix_s); carbon_mu_ the carbon thread's stop flag. Order: a
  // job's mu may be held while taking the registry's lock (DeleteJob) or the
  // queue's (Enqueue), never the other way round, and never two jobs' locks at once; carbon_source_mu is
  // never held with mu (a read may wait on the network). Helpers taking a
  // Job& or const Job& below REQUIRE its mu held unless they say otherwise;
  // the decisions themselves are the control library's (src/control), which
  // holds no lock and keeps no state.
  JobService(Store* store, JsonLog* log, SolverFn solver, CarbonOptions carbon, ServiceLimits limits);
  void Log(const std::string& event, Json fields);
  // Logs warnings[from...] at warning level.
  void LogWarnings(const std::string& job_id, const std::vector<JobWarning>& warnings, size_t from);
  // The job (kept alive while the pointer lives); NotFound, or Unavailable
  // for a quarantined job.
  Result<std::shared_ptr<Job>> FindJob(const std::string& job_id);
  // A job and one of its registered ranks, the job's lock held while this
  // lives; NotFound naming the job or rank (also once the job is deleted).
  // Counts as the job's activity (expiry).
  struct LockedRank {
    std::shared_ptr<Job> owner;
    Job* job;
    const RankInfo* info;
    std::unique_lock<std::mutex> lock;
  };
  Result<LockedRank> LockRank(const std::string& job_id, int rank);
  Status LoadJob(StoredJob stored);
  // A new job of `spec` (with its power-cap schedule and its carbon source,
  // when registration made them), stored (RegisterJob's step under the
  // registry's lock).
  Result<std::shared_ptr<Job>> NewJob(const JobSpec& spec, std::optional<PowerCapSchedule> cap_schedule,
                                      std::unique_ptr<carbon::IntensitySource> carbon_source);
  void Quarantine(const std::string& job_id, const std::string& why);
  // REQUIRES: job.mu held. Stores `state` (and `write`) and, once stored, makes it the job's.
  Status CommitState(Job& job, const ControlState& state, StoreWrite write);

  // Profiling (job_service_profiling.cc).
  // REQUIRES (all three): job.mu held.
  static void StartProfiling(Job& job, ControlState* state);
  // Moves to the next window once every rank reported the current one.
  static Status AdvanceProfiling(Job& job, ControlState* state, StoreWrite* write);
  static Status FinishProfilingRound(Job& job, ControlState* state, StoreWrite* write);
  void Enqueue(const std::string& job_id);  // on optimizer_
  // An optimizer thread's work for one job: solve (no lock held), then commit under job.mu.
  void Optimize(const std::string& job_id);
  // REQUIRES: job.mu held. Cancels the job's solve once it has run
  // limits_.max_solve_s (Optimize then fails the job).
  void StopOverlongSolve(Job& job);

  // Running (job_service_running.cc). REQUIRES (all): job.mu held.
  // The iteration (the server's count) a pause that starts now takes effect before.
  static int64_t PauseFromIteration(const Job& job, const ControlState& state);
  static void AssignPlans(const Job& job, ControlState* state);
  // Raises `plans` to the power cap's current setting and sets each
  // pipeline's clock ceiling (0: none; below the frontier's least power)
  // (and records the decision in state->power_cap).
  static void ApplyPowerCap(const Job& job, ControlState* state, std::vector<int>* plans, std::vector<int>* ceilings);
  static Json PowerCapSummary(const Job& job);
  // A registered rank's new process (another session): a new iteration base, stored.
  Status RestartRank(const std::string& job_id, Job& job, const RankInfo& rank);
  static void AddToWindow(Job& job, const IterationReport& report);
  static bool DetectStragglers(const Job& job, ControlState* state);
  static void ResetStaleWindows(Job& job, const ControlState& before);
  // Adds the pipeline's iterations that every one of its ranks reported
  // under `ran`'s plan, and that are not there yet, to the job's history.
  void RecordCompleteIterations(Job& job, int pipeline, const ControlState& ran) const;
  Json Summary(const Job& job) const;
  static Json ProfilingSummary(const Job& job);
  // Raises one warning per rank whose reports show schedule mismatches; true if added.
  static bool WarnAboutMismatches(Job& job, int rank, const std::vector<IterationReport>& reports,
                                  ControlState* state);

  // Carbon (job_service_carbon.cc). A decision reads the intensity without
  // job.mu (it may wait on the network), then decides holding it.
  // `with_history`: also what the source knew before (IntensitySource::History),
  // for a job whose carbon history is empty (its first decision, or after a
  // restart that lost it).
  // REQUIRES: job.mu not held (takes job.carbon_source_mu).
  struct IntensityRead {
    carbon::IntensityReading now;
    std::vector<carbon::IntensityReading> past;  // oldest first
  };
  Result<IntensityRead> ReadIntensity(Job& job, int64_t now_unix_s, bool with_history);
  // The intensity source of a job with a carbon config; its notes (a trace's
  // interpolated cells, a fuel mix not used) are logged as carbon_source. A
  // trace file is read here: at registration (RegisterJob hands the source to
  // the new job, so the file is read once) or, after a restart, at the job's
  // first decision. Only a trace can fail (the file's error, unprefixed).
  // REQUIRES: CheckCarbonResources(*spec.carbon) passed.
  Result<std::unique_ptr<carbon::IntensitySource>> MakeCarbonSource(const JobSpec& spec);
  // Whether the server may read or fetch what the job's carbon source names,
  // and its power-cap schedule (job_resources.h).
  Status CheckCarbonResources(const CarbonConfig& carbon) const;
  Result<PowerCapSchedule> LoadCapSchedule(const JobSpec& spec) const;
  // REQUIRES: job.mu held. Ok if the job has a carbon config, is running and
  // (unless forced) its window has passed.
  Status CarbonDecisionDue(const Job& job, int64_t now_unix_s, bool forced) const;
  // A job without a carbon history starts from `read.past` (control::SeedCarbonHistory).
  // REQUIRES: job.mu held and CarbonDecisionDue.
  Status DecideCarbon(Job& job, int64_t now_unix_s, const IntensityRead& read);
  // A pause no decision has renewed for two windows (its decisions fail: a
  // trace file gone) is lifted: the job runs its plan again.
  void LiftStalePause(Job& job, int64_t now_unix_s);
  static Json CarbonSummary(const Job& job);  // REQUIRES: job.mu held
  int64_t Now() const;
  // The server's power cap (job_service_power.cc): read at Create; shared
  // among the running jobs (sets each one's server_cap_share).
  Status LoadServerPowerCap();
  void ShareServerPowerCap();
  // Runs `tick` every carbon_.poll_s until the service stops.
  void BackgroundLoop(const std::function<void()>& tick);

  Store* store_;
  JsonLog* log_;
  SolverFn solver_;
  std::atomic<int64_t> unknown_rank_requests_{0};
  ServiceLimits limits_;
  JobRegistry jobs_;  // its own lock (job_registry.h)

  std::atomic<bool> cancel_solves_{false};  // set when the service stops: a running solve ends early
  std::unique_ptr<OptimizationQueue> optimizer_;  // its own lock (optimization_queue.h)

  // The server's power cap. server_cap_mu_ is never held while taking a
  // job's mu (the sharing reads jobs one at a time without it).
  static constexpr const char* kServerPowerCapKey = "power_cap";
  std::mutex server_cap_mu_;
  std::optional<protocol::PowerCapRequest> server_cap_;
  std::string server_cap_error_;  // a stored cap that could not be read
  std::vector<std::pair<std::string, double>> server_cap_shares_;  // (job, watts) at the last sharing
  bool server_cap_feasible_ = true;

  CarbonOptions carbon_;
  std::mutex carbon_mu_;
  std::condition_variable carbon_cv_;
  bool carbon_stopping_ = false;
  std::thread carbon_thread_;
  std::thread maintenance_thread_;
};

}  // namespace perseus::server
