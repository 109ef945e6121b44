// JobService: online profiling and the background optimisation.
#include <algorithm>
#include <mutex>

#include "runtime/server/job_service.h"

namespace perseus::server {

namespace {

Status ParseTotals(const Json& body, const char* key, bool with_count, InstructionTotals* out) {
  auto it = body.find(key);
  if (it == body.end()) return FieldError(key, "missing");
  if (!it->is_object()) return FieldError(key, "expected an object, got " + Quote(*it));
  const std::string k = key;
  if (with_count) {
    Result<int64_t> count = GetInt(*it, "count", k + ".count", 0, 1'000'000'000);
    if (!count.ok()) return count.status();
    out->count = *count;
  }
  Result<double> time = GetNumber(*it, "time_s", k + ".time_s", 0, 1e7);
  if (!time.ok()) return time.status();
  Result<double> energy = GetNumber(*it, "energy_j", k + ".energy_j", 0, 1e10);
  if (!energy.ok()) return energy.status();
  out->time_s = *time;
  out->energy_j = *energy;
  return Status::Ok();
}

struct MeasurementReport {
  int freq_mhz = 0;
  int iterations = 1;
  InstructionTotals forward, backward, blocking;
};

Result<MeasurementReport> ParseMeasurement(const Json& body, const RankInfo& info) {
  MeasurementReport r;
  Result<int64_t> freq = GetInt(body, "sm_clock_mhz", "sm_clock_mhz", 1, 100000);
  if (!freq.ok()) return freq.status();
  r.freq_mhz = static_cast<int>(*freq);
  if (std::find(info.sm_clocks_mhz.begin(), info.sm_clocks_mhz.end(), r.freq_mhz) == info.sm_clocks_mhz.end()) {
    return FieldError("sm_clock_mhz", std::to_string(r.freq_mhz) + " MHz is not a supported clock of rank " +
                                          std::to_string(info.rank) + " (" + info.gpu_name + ")");
  }
  Result<int64_t> iterations = GetInt(body, "iterations", "iterations", 1, 100000);
  if (!iterations.ok()) return iterations.status();
  r.iterations = static_cast<int>(*iterations);
  PERSEUS_RETURN_IF_ERROR(ParseTotals(body, "forward", true, &r.forward));
  PERSEUS_RETURN_IF_ERROR(ParseTotals(body, "backward", true, &r.backward));
  if (body.contains("blocking")) PERSEUS_RETURN_IF_ERROR(ParseTotals(body, "blocking", false, &r.blocking));
  if (r.forward.count == 0 || r.backward.count == 0) {
    return FieldError(r.forward.count == 0 ? "forward.count" : "backward.count", "expected at least 1, got 0");
  }
  return r;
}

void AddTotals(InstructionTotals* to, const InstructionTotals& add) {
  to->count += add.count;
  to->time_s += add.time_s;
  to->energy_j += add.energy_j;
}

}  // namespace

void JobService::StartProfiling(Job& job, ControlState* state) {
  std::vector<std::vector<const RankInfo*>> by_stage = job.RanksByStage();
  state->base_version = state->NextVersion();
  state->stages.clear();
  for (int s = 0; s < job.spec.pp; ++s) {
    StageSweep sweep;
    sweep.clocks_mhz = SweepClocks(by_stage[s], job.spec.profiling);
    sweep.version = state->base_version;
    if (sweep.clocks_mhz.empty()) {
      state->phase = Phase::kFailed;
      state->error = "stage " + std::to_string(s) + ": its ranks share no supported SM clock at or above " +
                     std::to_string(job.spec.profiling.min_clock_mhz) + " MHz";
      state->stages.clear();
      return;
    }
    state->stages.push_back(std::move(sweep));
  }
  state->phase = Phase::kProfiling;
}

Status JobService::AdvanceProfiling(Job& job, int stage, int ready, ControlState* state, StoreWrite* write) {
  if (ready < static_cast<int>(job.stage_ranks[stage].size())) return Status::Ok();
  StageSweep& sweep = state->stages[stage];
  const int ipc = job.spec.profiling.iterations_per_clock;
  std::optional<StagePoint> point = MeasuredStagePoint(job.StageRanks(stage), job.measurements, sweep.clock_mhz(), ipc);
  if (!point) return Status::Ok();
  AdvanceSweep(&sweep, point->forward.energy_j + point->backward.energy_j, job.spec.profiling);
  sweep.version = state->NextVersion();
  bool all_done = std::all_of(state->stages.begin(), state->stages.end(), [](const StageSweep& s) { return s.done; });
  if (!all_done) return Status::Ok();
  std::vector<std::vector<const RankInfo*>> by_stage = job.RanksByStage();
  Result<Profile> profile =
      BuildMeasuredProfile(by_stage, job.measurements, state->stages, ipc, job.spec.schedule.chunks);
  if (!profile.ok()) return profile.status();
  std::optional<double> measured = MeasuredBlockingPowerW(job.measurements);
  state->blocking_power_w = job.spec.blocking_power_w.value_or(measured.value_or(0));
  state->phase = Phase::kOptimizing;
  state->base_version = state->NextVersion();
  write->profile_csv = ProfileToCsv(*profile);
  return Status::Ok();
}

Result<Reply> JobService::ReportMeasurement(const std::string& job_id, int rank, const Json& body) {
  Result<LockedRank> locked = LockRank(job_id, rank);
  if (!locked.ok()) return locked.status();
  Job& job = *locked->job;
  const RankInfo& info = *locked->info;
  Result<MeasurementReport> report = ParseMeasurement(body, info);
  if (!report.ok()) return report.status();
  if (job.state.phase != Phase::kProfiling) {
    return Status::Unavailable("job '" + job_id + "' is not profiling (phase " + PhaseName(job.state.phase) + ")");
  }
  const StageSweep& sweep = job.state.stages[info.pp_rank];
  if (sweep.done || sweep.clock_mhz() != report->freq_mhz) {
    return Status::Unavailable("stage " + std::to_string(info.pp_rank) +
                               (sweep.done ? " has finished profiling"
                                           : " is profiling " + std::to_string(sweep.clock_mhz()) + " MHz, not " +
                                                 std::to_string(report->freq_mhz) + " MHz"));
  }
  const std::pair<int, int> key{rank, report->freq_mhz};
  auto old = job.measurements.find(key);
  std::optional<Measurement> saved = old == job.measurements.end() ? std::nullopt : std::optional(old->second);
  Measurement m = saved.value_or(Measurement{rank, report->freq_mhz, {}, {}, 0, 0, 0});
  const int ipc = job.spec.profiling.iterations_per_clock;
  const bool was_ready = m.reports >= ipc;
  AddTotals(&m.forward, report->forward);
  AddTotals(&m.backward, report->backward);
  m.blocking_time_s += report->blocking.time_s;
  m.blocking_energy_j += report->blocking.energy_j;
  m.reports += report->iterations;
  job.measurements[key] = m;
  ControlState state = job.state;
  StoreWrite write;
  write.measurements.push_back(m);
  const int ready = job.stage_ready[info.pp_rank] + (!was_ready && m.reports >= ipc ? 1 : 0);
  const int64_t old_version = sweep.version;
  Status st = AdvanceProfiling(job, info.pp_rank, ready, &state, &write);
  if (st.ok()) st = CommitState(job, state, write);
  if (!st.ok()) {
    if (saved) job.measurements[key] = *saved; else job.measurements.erase(key);
    return st;
  }
  if (write.profile_csv) job.profile_csv = *write.profile_csv;
  const StageSweep& now = state.stages[info.pp_rank];
  job.stage_ready[info.pp_rank] = now.version != old_version ? job.CountReady(info.pp_rank) : ready;
  if (now.version != old_version) {
    Log("stage_profiled_clock", {{"job", job_id}, {"stage", info.pp_rank}, {"sm_clock_mhz", report->freq_mhz},
                                 {"energy_j", now.last_energy_j}, {"done", now.done}});
  }
  if (state.phase == Phase::kOptimizing) Enqueue(job_id);
  return Reply{200, {{"accepted", true}, {"phase", PhaseName(state.phase)}}};
}

void JobService::Enqueue(const std::string& job_id) {
  {
    std::lock_guard<std::mutex> lock(queue_mu_);
    queue_.push_back(job_id);
  }
  queue_cv_.notify_all();
}

void JobService::WaitForOptimizer() {
  std::unique_lock<std::mutex> lock(queue_mu_);
  queue_cv_.wait(lock, [&] { return queue_.empty() && busy_ == 0; });
}

void JobService::OptimizerLoop() {
  std::unique_lock<std::mutex> lock(queue_mu_);
  while (true) {
    queue_cv_.wait(lock, [&] { return stopping_ || !queue_.empty(); });
    if (stopping_) return;
    std::string id = queue_.front();
    queue_.pop_front();
    ++busy_;
    lock.unlock();
    Optimize(id);
    lock.lock();
    --busy_;
    queue_cv_.notify_all();
  }
}

void JobService::Optimize(const std::string& job_id) {
  Result<Job*> found = FindJob(job_id);
  if (!found.ok()) return;
  Job& job = **found;
  JobSpec spec;
  std::string csv;
  double blocking_power_w = 0;
  {
    std::lock_guard<std::mutex> lock(job.mu);
    if (job.state.phase != Phase::kOptimizing) return;
    spec = job.spec;
    csv = job.profile_csv;
    blocking_power_w = job.state.blocking_power_w;
  }
  Log("optimization_started", {{"job", job_id}});
  Result<Frontier> frontier = Status::Internal("not solved");
  Result<Profile> profile = ParseProfileCsv(csv, "job " + job_id + " profile", spec.pp);
  if (!profile.ok()) {
    frontier = profile.status();
  } else {
    Result<Problem> problem = BuildProblem(*profile, JobProblemSpec(spec, blocking_power_w));
    FrontierOptions options;
    options.unit_time_s = spec.unit_time_s;
    frontier = problem.ok() ? solver_(*problem, options) : Result<Frontier>(problem.status());
  }
  std::lock_guard<std::mutex> lock(job.mu);
  if (job.state.phase != Phase::kOptimizing) return;
  Result<std::shared_ptr<const PlanBook>> book =
      frontier.ok() && profile.ok() ? PlanBook::Create(spec, *profile, blocking_power_w, *frontier)
                                    : Result<std::shared_ptr<const PlanBook>>(frontier.status());
  ControlState state = job.state;
  StoreWrite write;
  if (book.ok()) {
    state.phase = Phase::kRunning;
    state.base_version = state.NextVersion();
    state.pipelines.assign(spec.dp, PipelinePlan{0, state.base_version});
    job.plans = *book;  // AssignPlans reads it
    AssignPlans(job, &state);
    write.frontier_json = FrontierToJson((*book)->frontier()).dump();
  } else {
    state.phase = Phase::kFailed;
    state.error = "optimization: " + book.status().message();
  }
  Status st = CommitState(job, state, std::move(write));
  if (!st.ok()) {
    job.plans = nullptr;
    if (log_) log_->Error("optimization_not_saved", {{"job", job_id}, {"error", st.message()}});
    return;
  }
  if (book.ok()) {
    const Frontier& f = (*book)->frontier();
    Log("optimization_done", {{"job", job_id}, {"plans", f.plans.size()}, {"fastest_time_s", f.plans.front().time_s},
                              {"fastest_energy_j", f.plans.front().energy_j},
                              {"all_max_energy_j", f.all_max.energy_j}, {"solve_s", f.stats.solve_s},
                              {"sweep_complete", f.stats.sweep_complete}});
  } else if (log_) {
    log_->Error("optimization_failed", {{"job", job_id}, {"error", state.error}});
  }
}

}  // namespace perseus::server
