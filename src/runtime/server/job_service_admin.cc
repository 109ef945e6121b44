// JobService: deleting and re-profiling jobs, expiry, quarantine, and the
// background loop that retries what a failed commit left undone.
#include <mutex>

#include "runtime/server/job_service.h"

namespace perseus::server {

namespace {

// Removes every stored row of the job.
Status DeleteRows(Store* store, const std::string& job_id) {
  StoreWrite write;
  write.job_id = job_id;
  write.delete_job = true;
  return store->Commit(write);
}

}  // namespace

Status JobService::DeleteJob(const std::string& job_id) {
  Result<bool> quarantined = jobs_.RemoveQuarantined(job_id, [&] { return DeleteRows(store_, job_id); });
  if (!quarantined.ok()) return quarantined.status();
  if (*quarantined) {
    Log("job_deleted", {{"job", job_id}, {"quarantined", true}});
    return Status::Ok();
  }
  Result<std::shared_ptr<Job>> found = jobs_.Find(job_id);
  if (!found.ok()) return found.status();
  const std::shared_ptr<Job>& job = *found;
  std::lock_guard<std::mutex> job_lock(job->mu);
  if (job->deleted) return Status::NotFound("job '" + job_id + "' is not registered");
  PERSEUS_RETURN_IF_ERROR(DeleteRows(store_, job_id));
  job->deleted = true;
  job->cancel_solve = true;  // a solve running for it ends at its next step
  jobs_.Remove(job);
  Log("job_deleted", {{"job", job_id}, {"phase", PhaseName(job->state.phase)}});
  return Status::Ok();
}

Result<Phase> JobService::Reprofile(const std::string& job_id) {
  Result<std::shared_ptr<Job>> found = FindJob(job_id);
  if (!found.ok()) return found.status();
  Job& job = **found;
  std::lock_guard<std::mutex> lock(job.mu);
  const Phase phase = job.state.phase;
  if (phase != Phase::kRunning && phase != Phase::kFailed && phase != Phase::kDone) {
    return Status::Unavailable("job '" + job_id + "' cannot be profiled again while " + PhaseName(phase) +
                               " (only running, failed or done jobs)");
  }
  if (job.registered < job.spec.world_size()) {
    return Status::Unavailable("job '" + job_id + "' has " + std::to_string(job.registered) + " of " +
                               std::to_string(job.spec.world_size()) + " ranks registered");
  }
  ControlState state = job.state;
  state.error.clear();
  state.stragglers.clear();
  state.pipelines.clear();
  StartProfiling(job, &state);
  StoreWrite write;
  write.clear_window_reports = true;
  write.profile_csv = "";
  write.frontier_json = "";
  PERSEUS_RETURN_IF_ERROR(CommitState(job, state, std::move(write)));
  job.window_reports.clear();
  job.profile_csv.clear();
  job.plans = nullptr;
  for (auto& window : job.windows) window.clear();
  Log("job_reprofiling", {{"job", job_id}, {"from_phase", PhaseName(phase)}});
  return job.state.phase;
}

Result<Phase> JobService::Reoptimize(const std::string& job_id) {
  Result<std::shared_ptr<Job>> found = FindJob(job_id);
  if (!found.ok()) return found.status();
  Job& job = **found;
  {
    std::lock_guard<std::mutex> lock(job.mu);
    const Phase phase = job.state.phase;
    if (phase != Phase::kFailed) {
      return Status::Unavailable("job '" + job_id + "' cannot be optimised again while " + PhaseName(phase) +
                                 " (only failed jobs; POST /jobs/" + job_id + "/reprofile measures a running or " +
                                 "done one again)");
    }
    if (job.profile_csv.empty()) {
      return Status::Unavailable("job '" + job_id + "' failed before its profile was complete (" + job.state.error +
                                 "): POST /jobs/" + job_id + "/reprofile measures it again");
    }
    ControlState state = job.state;
    const std::string error = state.error;
    state.error.clear();
    state.phase = Phase::kOptimizing;
    PERSEUS_RETURN_IF_ERROR(CommitState(job, state, StoreWrite{}));
    Log("job_reoptimizing", {{"job", job_id}, {"previous_error", error}});
  }
  Enqueue(job_id);
  return Phase::kOptimizing;
}

std::map<std::string, std::string> JobService::QuarantinedJobs() { return jobs_.Quarantined(); }

void JobService::MaintenanceTick() {
  const std::vector<std::shared_ptr<Job>> jobs = jobs_.All();
  const int64_t now = Now();
  for (const std::shared_ptr<Job>& job : jobs) {
    const int64_t idle_s = now - job->last_activity_unix_s.load();
    if (limits_.job_expiry_s > 0 && idle_s > limits_.job_expiry_s) {
      const Status deleted = DeleteJob(job->spec.id);
      if (log_ != nullptr && deleted.ok()) {
        log_->Warn("job_expired", {{"job", job->spec.id}, {"idle_s", idle_s}, {"expiry_s", limits_.job_expiry_s}});
      }
      continue;
    }
    bool optimizing = false;
    {
      std::lock_guard<std::mutex> lock(job->mu);
      optimizing = !job->deleted && job->state.phase == Phase::kOptimizing;
      StopOverlongSolve(*job);
    }
    if (optimizing) Enqueue(job->spec.id);  // no-op while queued; retries a result that was not stored
  }
}

void JobService::StopOverlongSolve(Job& job) {
  if (!(limits_.max_solve_s > 0) || !job.solve_started || job.solve_timed_out) return;  // NaN: none either
  const double solving_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - *job.solve_started).count();
  if (solving_s < limits_.max_solve_s) return;
  job.solve_timed_out = true;
  job.cancel_solve = true;
}

void JobService::BackgroundLoop(const std::function<void()>& tick) {
  std::unique_lock<std::mutex> lock(carbon_mu_);
  while (!carbon_stopping_) {
    carbon_cv_.wait_for(lock, std::chrono::duration<double>(carbon_.poll_s), [this] { return carbon_stopping_; });
    if (carbon_stopping_) break;
    lock.unlock();
    tick();
    lock.lock();
  }
}

}  // namespace perseus::server
