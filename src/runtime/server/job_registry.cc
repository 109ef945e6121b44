#include "runtime/server/job_registry.h"

#include <mutex>

namespace perseus::server {

Result<std::shared_ptr<Job>> JobRegistry::Find(const std::string& job_id) const {
  std::shared_lock<std::shared_mutex> lock(mu_);
  auto it = jobs_.find(job_id);
  if (it != jobs_.end()) return it->second;
  auto bad = quarantined_.find(job_id);
  if (bad != quarantined_.end()) {
    return Status::Unavailable("job '" + job_id + "' is quarantined: its stored state could not be loaded (" +
                               bad->second + "); DELETE /jobs/" + job_id + " removes it");
  }
  return Status::NotFound("job '" + job_id + "' is not registered");
}

std::vector<std::shared_ptr<Job>> JobRegistry::All() const {
  std::shared_lock<std::shared_mutex> lock(mu_);
  std::vector<std::shared_ptr<Job>> jobs;
  for (const auto& [id, job] : jobs_) jobs.push_back(job);
  return jobs;
}

std::map<std::string, std::string> JobRegistry::Quarantined() const {
  std::shared_lock<std::shared_mutex> lock(mu_);
  return quarantined_;
}

void JobRegistry::Add(std::shared_ptr<Job> job) {
  std::unique_lock<std::shared_mutex> lock(mu_);
  const std::string id = job->spec.id;
  quarantined_.erase(id);
  jobs_[id] = std::move(job);
}

void JobRegistry::Quarantine(const std::string& job_id, const std::string& why) {
  std::unique_lock<std::shared_mutex> lock(mu_);
  jobs_.erase(job_id);
  quarantined_[job_id] = why;
}

Result<std::pair<std::shared_ptr<Job>, bool>> JobRegistry::Register(
    const JobSpec& spec, const std::function<Result<std::shared_ptr<Job>>()>& create) {
  std::unique_lock<std::shared_mutex> lock(mu_);
  if (quarantined_.count(spec.id)) {
    return Status::Unavailable("job '" + spec.id + "' is quarantined (its stored state could not be loaded); "
                               "DELETE /jobs/" + spec.id + " first");
  }
  auto it = jobs_.find(spec.id);
  if (it != jobs_.end()) {
    if (JobSpecToJson(it->second->spec) != JobSpecToJson(spec)) {
      return Status::Unavailable("job '" + spec.id + "' is already registered with a different spec");
    }
    return std::make_pair(it->second, false);
  }
  const int64_t held = static_cast<int64_t>(jobs_.size() + quarantined_.size());
  if (held >= max_jobs_) {
    // After a restart with a lower limit the server may hold more than it.
    return Status::Unavailable("the server holds " + std::to_string(held) + " jobs, its limit is " +
                               std::to_string(max_jobs_) + " (--max-jobs); delete finished ones with DELETE /jobs/{id}");
  }
  Result<std::shared_ptr<Job>> job = create();
  if (!job.ok()) return job.status();
  jobs_[spec.id] = *job;
  return std::make_pair(*job, true);
}

Result<bool> JobRegistry::RemoveQuarantined(const std::string& job_id, const std::function<Status()>& delete_rows) {
  std::unique_lock<std::shared_mutex> lock(mu_);
  auto bad = quarantined_.find(job_id);
  if (bad == quarantined_.end()) return false;
  PERSEUS_RETURN_IF_ERROR(delete_rows());
  quarantined_.erase(bad);
  return true;
}

void JobRegistry::Remove(const std::shared_ptr<Job>& job) {
  std::unique_lock<std::shared_mutex> lock(mu_);
  auto it = jobs_.find(job->spec.id);
  if (it != jobs_.end() && it->second == job) jobs_.erase(it);
}

}  // namespace perseus::server
