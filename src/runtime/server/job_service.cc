// JobService: construction, loading, job registration and read-only views.
#include "runtime/server/job_service.h"

#include <exception>
#include <iterator>
#include <mutex>

#include "control/carbon_window.h"

namespace perseus::server {

std::vector<std::vector<const RankInfo*>> Job::RanksByStage() const {
  std::vector<std::vector<const RankInfo*>> out(spec.pp);
  for (const std::optional<RankInfo>& r : ranks) {
    if (r) out[r->pp_rank].push_back(&*r);
  }
  return out;
}

std::vector<const RankInfo*> Job::StageRanks(int stage) const {
  std::vector<const RankInfo*> out;
  for (int r : stage_ranks[stage]) out.push_back(&*ranks[r]);
  return out;
}

void Job::IndexRank(const RankInfo& info) {
  if (stage_ranks.empty()) stage_ranks.resize(spec.pp);
  stage_ranks[info.pp_rank].push_back(info.rank);
  by_coords[{info.dp_rank, info.pp_rank, info.tp_rank}] = info.rank;
  ++registered;
}

int Job::CountReported(int window) const {
  auto begin = window_reports.lower_bound({window, -1});
  auto end = window_reports.lower_bound({window + 1, -1});
  return static_cast<int>(std::distance(begin, end));
}

int64_t Job::RankVersion(const RankInfo& info) const {
  int64_t v = state.base_version;
  if (state.phase == Phase::kProfiling) v = std::max(v, state.profiling.version);
  if (state.phase == Phase::kRunning && info.dp_rank < static_cast<int>(state.pipelines.size())) {
    v = std::max(v, state.pipelines[info.dp_rank].version);
  }
  return v;
}

bool Job::CarbonPaused(const ControlState& s) const {
  return spec.carbon && s.carbon.evaluated && s.carbon.paused && s.phase == Phase::kRunning;
}

double Job::PausedPowerW() const {
  return spec.dp * control::PausePowerW(plans->problem(), spec.carbon->pause == protocol::CarbonPause::kHold);
}

JobService::JobService(Store* store, JsonLog* log, SolverFn solver, CarbonOptions carbon, ServiceLimits limits)
    : store_(store), log_(log), solver_(std::move(solver)), limits_(limits), jobs_(limits.max_jobs), carbon_(std::move(carbon)) {
  if (!solver_) solver_ = [](const Problem& p, const FrontierOptions& o) { return SolveFrontier(p, o); };
}

void JobService::Log(const std::string& event, Json fields) {
  if (log_ != nullptr) log_->Info(event, std::move(fields));
}

void JobService::LogWarnings(const std::string& job_id, const std::vector<JobWarning>& warnings, size_t from) {
  if (log_ == nullptr) return;
  for (size_t i = from; i < warnings.size(); ++i) {
    const JobWarning& w = warnings[i];
    log_->Warn("job_warning",
               {{"job", job_id}, {"code", w.code}, {"stage", w.stage}, {"rank", w.rank}, {"message", w.message}});
  }
}

Result<std::unique_ptr<JobService>> JobService::Create(Store* store, JsonLog* log, SolverFn solver,
                                                      CarbonOptions carbon, ServiceLimits limits) {
  std::unique_ptr<JobService> service(
      new JobService(store, log, std::move(solver), std::move(carbon), limits));
  Result<std::vector<StoredJob>> stored = store->LoadAll();
  if (!stored.ok()) return stored.status();
  for (StoredJob& job : *stored) {
    const std::string id = job.id;
    Status st = job.load_error.empty() ? Status::Ok() : Status::Internal(job.load_error);
    if (st.ok()) {
      try {
        st = service->LoadJob(std::move(job));
      } catch (const std::exception& e) {  // a stored value of the wrong JSON type
        st = Status::Internal(std::string("damaged row: ") + e.what());
      }
    }
    if (!st.ok()) service->Quarantine(id, st.message());
  }
  PERSEUS_RETURN_IF_ERROR(service->LoadServerPowerCap());
  service->optimizer_ = std::make_unique<OptimizationQueue>(
      service->limits_.optimizer_workers, [s = service.get()](const std::string& id) { s->Optimize(id); });
  for (const std::shared_ptr<Job>& job : service->jobs_.All()) {  // before any request: no job lock needed
    if (job->state.phase == Phase::kOptimizing) service->Enqueue(job->spec.id);
  }
  if (service->carbon_.background) {
    JobService* s = service.get();
    s->carbon_thread_ = std::thread([s] { s->BackgroundLoop([s] { s->CarbonTick(); s->PowerCapTick(); }); });
    s->maintenance_thread_ = std::thread([s] { s->BackgroundLoop([s] { s->MaintenanceTick(); }); });
  }
  return service;
}

void JobService::Quarantine(const std::string& job_id, const std::string& why) {
  jobs_.Quarantine(job_id, why);
  if (log_ != nullptr) {
    log_->Error("job_quarantined", {{"job", job_id}, {"error", why},
                                    {"hint", "the other jobs are served; DELETE /jobs/" + job_id + " removes it"}});
  }
}

JobService::~JobService() {
  {
    std::lock_guard<std::mutex> lock(carbon_mu_);
    carbon_stopping_ = true;
  }
  carbon_cv_.notify_all();
  if (carbon_thread_.joinable()) carbon_thread_.join();
  if (maintenance_thread_.joinable()) maintenance_thread_.join();
  // A stop does not wait for a solve (the job stays optimizing; a restart solves it).
  cancel_solves_ = true;
  for (const std::shared_ptr<Job>& job : jobs_.All()) {
    std::lock_guard<std::mutex> lock(job->mu);  // Optimize resets the flag under it
    job->cancel_solve = true;
  }
  if (optimizer_) optimizer_->Stop();
}

namespace {

// Checks that a stored rank fits its job (a damaged row would index out of range).
Status CheckStoredRank(const RankInfo& r, const JobSpec& spec) {
  Status fits = CheckRankFitsJob(r, spec.dp, spec.pp, spec.tp);
  if (!fits.ok() || r.sm_clocks_mhz.empty()) {
    return Status::Internal("stored rank " + std::to_string(r.rank) + " does not fit the job (dp " +
                            std::to_string(spec.dp) + ", pp " + std::to_string(spec.pp) + ", tp " +
                            std::to_string(spec.tp) + ")");
  }
  return Status::Ok();
}

}  // namespace

Status JobService::LoadJob(StoredJob stored) {
  auto job = std::make_shared<Job>();
  Json spec_json = Json::parse(stored.spec_json, nullptr, false);
  Result<JobSpec> spec = ParseJobSpec(spec_json, protocol::UnknownFields::kIgnore);  // stored by any release
  if (!spec.ok()) return spec.status();
  job->spec = *spec;
  Result<Schedule> schedule = BuildSchedule(job->spec.schedule);
  if (!schedule.ok()) return schedule.status();
  job->schedule = std::move(*schedule);
  if (!job->spec.power_cap_schedule.empty()) {  // a file gone since registration: the job runs without it
    Result<PowerCapSchedule> caps = LoadCapSchedule(job->spec);
    if (caps.ok()) job->cap_schedule = std::move(*caps);
    if (!caps.ok() && log_ != nullptr) {
      log_->Warn("power_cap_schedule_unreadable", {{"job", job->spec.id}, {"error", caps.status().message()}});
    }
  }
  Result<ControlState> state = ControlStateFromJson(Json::parse(stored.state_json, nullptr, false));
  if (!state.ok()) return state.status();
  job->state = std::move(*state);
  job->ranks.resize(job->spec.world_size());
  job->stage_ranks.resize(job->spec.pp);
  for (RankInfo& r : stored.ranks) {
    PERSEUS_RETURN_IF_ERROR(CheckStoredRank(r, job->spec));
    if (job->ranks[r.rank] || job->by_coords.count({r.dp_rank, r.pp_rank, r.tp_rank})) {
      return Status::Internal("stored rank " + std::to_string(r.rank) + " is stored twice");
    }
    job->ranks[r.rank] = std::move(r);
    job->IndexRank(*job->ranks[r.rank]);
  }
  for (const WindowReport& w : stored.window_reports) {
    if (w.rank < 0 || w.rank >= job->spec.world_size()) {
      return Status::Internal("stored profiling window " + std::to_string(w.window) + " names rank " +
                              std::to_string(w.rank) + ", outside the job");
    }
    job->window_reports[{w.window, w.rank}] = w;
  }
  if (job->state.phase == Phase::kProfiling && job->state.profiling.windows.empty()) {
    // Stored by a server that profiled with a per-stage clock sweep: profile again in windows.
    ControlState state = job->state;
    StartProfiling(*job, &state);
    StoreWrite write;
    write.clear_window_reports = true;
    PERSEUS_RETURN_IF_ERROR(CommitState(*job, state, std::move(write)));
  }
  job->profile_csv = stored.profile_csv;
  job->windows.resize(job->spec.dp);
  if (!stored.frontier_json.empty()) {
    Result<Frontier> frontier = FrontierFromJson(Json::parse(stored.frontier_json, nullptr, false));
    if (!frontier.ok()) return frontier.status();
    Result<Profile> profile = ParseProfileCsv(job->profile_csv, "stored profile", job->spec.pp, ProfileOrigin::kMeasured);
    if (!profile.ok()) return profile.status();
    Result<std::shared_ptr<const PlanBook>> book =
        PlanBook::Create(job->spec, *profile, job->state.blocking_power_w, std::move(*frontier));
    if (!book.ok()) return book.status();
    job->plans = *book;
  }
  for (const IterationReport& it : stored.iterations) AddToWindow(*job, it);
  if (job->spec.id != stored.id) return Status::Internal("stored spec names job '" + job->spec.id + "'");
  job->last_activity_unix_s = Now();  // a restart gives every job a full expiry period
  job->history.RecordState(job->state, job->state, Now());  // the history starts with the loaded state
  jobs_.Add(std::move(job));
  return Status::Ok();
}

Result<std::shared_ptr<Job>> JobService::FindJob(const std::string& job_id) { return jobs_.Find(job_id); }

Result<JobService::LockedRank> JobService::LockRank(const std::string& job_id, int rank) {
  Result<std::shared_ptr<Job>> found = FindJob(job_id);
  if (!found.ok()) {
    unknown_rank_requests_.fetch_add(1, std::memory_order_relaxed);
    return found.status();
  }
  Job& job = **found;
  std::unique_lock<std::mutex> lock(job.mu);
  if (job.deleted) return Status::NotFound("job '" + job_id + "' was deleted");
  if (rank < 0 || rank >= job.spec.world_size() || !job.ranks[rank]) {
    unknown_rank_requests_.fetch_add(1, std::memory_order_relaxed);
    return Status::NotFound("job '" + job_id + "': rank " + std::to_string(rank) + " is not registered");
  }
  job.last_activity_unix_s = Now();
  return LockedRank{*found, &job, &*job.ranks[rank], std::move(lock)};
}

Status JobService::CommitState(Job& job, const ControlState& state, StoreWrite write) {
  if (job.deleted) return Status::NotFound("job '" + job.spec.id + "' was deleted");
  write.job_id = job.spec.id;
  const Json state_json = ControlStateToJson(state);
  // JSON has no NaN or infinity (they would be stored as null and the job
  // could not be loaded again): refuse the change instead of poisoning the store.
  if (std::optional<std::string> where = FindNonFinite(state_json, "state")) {
    return Status::Internal("job '" + job.spec.id + "': refusing to store a non-finite number at " + *where);
  }
  write.state_json = state_json.dump();
  PERSEUS_RETURN_IF_ERROR(store_->Commit(write));
  job.history.RecordState(job.state, state, Now());
  job.state = state;
  return Status::Ok();
}

// The job's power-cap schedule file, if the server may read it (job_resources.h).
Result<PowerCapSchedule> JobService::LoadCapSchedule(const JobSpec& spec) const {
  PERSEUS_RETURN_IF_ERROR(CheckJobFile(limits_.job_resources, "power_cap_schedule", spec.power_cap_schedule));
  Result<PowerCapSchedule> schedule = LoadPowerCapSchedule(spec.power_cap_schedule, kScheduledCapWindowS);
  if (!schedule.ok()) return FieldError("power_cap_schedule", schedule.status().message());
  return schedule;
}

Result<Registered> JobService::RegisterJob(const JobSpec& spec) {
  if (spec.carbon) PERSEUS_RETURN_IF_ERROR(CheckCarbonResources(*spec.carbon));
  std::unique_ptr<carbon::IntensitySource> carbon_source;
  if (spec.carbon && spec.carbon->source == "trace" && !FindJob(spec.id).ok()) {
    // Read here, not in ParseJobSpec, so a restarted server still loads the
    // job when the file has gone (its decisions then report the error). A
    // repeated registration of a known job reads nothing: the job has its source.
    Result<std::unique_ptr<carbon::IntensitySource>> made = MakeCarbonSource(spec);
    if (!made.ok()) return FieldError("carbon.trace_path", made.status().message());
    carbon_source = std::move(*made);
  }
  std::optional<PowerCapSchedule> caps;
  if (!spec.power_cap_schedule.empty()) {  // read at registration; a restart reads it again (LoadJob)
    Result<PowerCapSchedule> schedule = LoadCapSchedule(spec);
    if (!schedule.ok()) return schedule.status();
    caps = std::move(*schedule);
  }
  Result<std::pair<std::shared_ptr<Job>, bool>> registered =
      jobs_.Register(spec, [&] { return NewJob(spec, std::move(caps), std::move(carbon_source)); });
  if (!registered.ok()) return registered.status();
  return Registered{registered->second};
}

Result<std::shared_ptr<Job>> JobService::NewJob(const JobSpec& spec, std::optional<PowerCapSchedule> cap_schedule,
                                                std::unique_ptr<carbon::IntensitySource> carbon_source) {
  auto job = std::make_shared<Job>();
  job->last_activity_unix_s = Now();
  job->spec = spec;
  Result<Schedule> schedule = BuildSchedule(spec.schedule);
  if (!schedule.ok()) return schedule.status();
  job->schedule = std::move(*schedule);
  job->ranks.resize(spec.world_size());
  job->stage_ranks.resize(spec.pp);
  job->windows.resize(spec.dp);
  job->cap_schedule = std::move(cap_schedule);
  job->carbon_source = std::move(carbon_source);  // no lock needed: nobody else sees the job yet
  StoreWrite write;
  write.job_id = spec.id;
  write.spec_json = JobSpecToJson(spec).dump();
  write.state_json = ControlStateToJson(job->state).dump();
  PERSEUS_RETURN_IF_ERROR(store_->Commit(write));
  job->history.RecordState(job->state, job->state, Now());
  return job;
}

Status JobService::FinishJob(const std::string& job_id) {
  Result<std::shared_ptr<Job>> found = FindJob(job_id);
  if (!found.ok()) return found.status();
  Job& job = **found;
  std::lock_guard<std::mutex> lock(job.mu);
  if (job.state.phase == Phase::kDone) return Status::Ok();
  job.cancel_solve = true;  // a solve running for it would be thrown away: it ends at its next step
  ControlState state = job.state;
  state.phase = Phase::kDone;
  state.base_version = state.NextVersion();
  return CommitState(job, state, {});
}

Result<Json> JobService::JobSummary(const std::string& job_id) {
  Result<std::shared_ptr<Job>> found = FindJob(job_id);
  if (!found.ok()) return found.status();
  std::lock_guard<std::mutex> lock((*found)->mu);
  return Summary(**found);
}

std::vector<Json> JobService::AllSummaries() {
  std::vector<std::shared_ptr<Job>> jobs = jobs_.All();
  std::vector<Json> out;
  for (const std::shared_ptr<Job>& job : jobs) {
    std::lock_guard<std::mutex> lock(job->mu);
    out.push_back(Summary(*job));
  }
  return out;
}

Result<std::string> JobService::ProfileCsv(const std::string& job_id) {
  Result<std::shared_ptr<Job>> found = FindJob(job_id);
  if (!found.ok()) return found.status();
  std::lock_guard<std::mutex> lock((*found)->mu);
  if ((*found)->profile_csv.empty()) {
    return Status::Unavailable("job '" + job_id + "' has no profile yet (phase " +
                               PhaseName((*found)->state.phase) + ")");
  }
  return (*found)->profile_csv;
}

Result<Json> JobService::FrontierJson(const std::string& job_id) {
  Result<std::shared_ptr<Job>> found = FindJob(job_id);
  if (!found.ok()) return found.status();
  std::lock_guard<std::mutex> lock((*found)->mu);
  const Job& job = **found;
  if (!job.plans) {
    return Status::Unavailable("job '" + job_id + "' has no frontier yet (phase " + PhaseName(job.state.phase) + ")");
  }
  const Frontier& f = job.plans->frontier();
  Json plans = Json::array();
  for (size_t i = 0; i < f.plans.size(); ++i) {
    plans.push_back({{"index", i}, {"time_s", f.plans[i].time_s}, {"energy_j", f.plans[i].energy_j},
                     {"lower_bound_j", f.plans[i].lower_bound_j}});
  }
  return Json{{"id", job_id},
              {"all_max", {{"time_s", f.all_max.time_s}, {"energy_j", f.all_max.energy_j}}},
              {"plans", plans},
              {"blocking_power_w", job.state.blocking_power_w}};
}

Result<Json> JobService::HistoryJson(const std::string& job_id, const HistoryQuery& query) {
  Result<std::shared_ptr<Job>> found = FindJob(job_id);
  if (!found.ok()) return found.status();
  std::lock_guard<std::mutex> lock((*found)->mu);
  const Job& job = **found;
  if (query.pipeline && *query.pipeline >= job.spec.dp) {
    return Status::InvalidArgument("query 'pipeline': expected an integer in [0, " + std::to_string(job.spec.dp - 1) +
                                   "] (the job has dp " + std::to_string(job.spec.dp) + "), got " +
                                   std::to_string(*query.pipeline));
  }
  Json j = job.history.ToJson(query);
  j["id"] = job_id;
  j["phase"] = PhaseName(job.state.phase);
  j["pipelines"] = job.spec.dp;
  return j;
}

}  // namespace perseus::server
