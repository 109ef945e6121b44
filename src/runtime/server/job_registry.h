// JobRegistry: the server's jobs by id, and the jobs that could not be loaded
// from the store (quarantined, with the reason).
//
// Locking: one shared mutex inside guards both maps. A Job's own mutex
// (job.h) guards the job; the registry never takes it and reads only a job's
// `spec`, which no one changes after registration. A caller may hold a job's
// mutex while calling Remove (the registry's lock is taken after a job's,
// never before), and `create`/`delete_rows` below run under the registry's
// lock, so they must not take a job's.
// Thread safety: thread-safe.
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <shared_mutex>
#include <string>
#include <utility>
#include <vector>

#include "runtime/server/job.h"

namespace perseus::server {

class JobRegistry {
 public:
  explicit JobRegistry(int max_jobs) : max_jobs_(max_jobs) {}

  // The job (kept alive while the pointer lives); NotFound, or Unavailable
  // for a quarantined job.
  Result<std::shared_ptr<Job>> Find(const std::string& job_id) const;
  // Every job, to be visited one lock at a time.
  std::vector<std::shared_ptr<Job>> All() const;
  std::map<std::string, std::string> Quarantined() const;

  // Start-up: a loaded job, or one that could not be (replacing any job of that id).
  void Add(std::shared_ptr<Job> job);
  void Quarantine(const std::string& job_id, const std::string& why);

  // Registers `spec`: the job already registered with the same spec
  // (created false), or `create`'s job (created true; `create` builds and
  // stores it). Unavailable for a quarantined id, a different spec under the
  // same id, or a full server (max_jobs, quarantined ones counted).
  Result<std::pair<std::shared_ptr<Job>, bool>> Register(const JobSpec& spec,
                                                         const std::function<Result<std::shared_ptr<Job>>()>& create);
  // A quarantined job's removal: true if `job_id` was quarantined and
  // `delete_rows` succeeded (then it is gone), false if it is not quarantined.
  Result<bool> RemoveQuarantined(const std::string& job_id, const std::function<Status()>& delete_rows);
  // Removes `job` if it is still the one registered under its id.
  void Remove(const std::shared_ptr<Job>& job);

 private:
  const int max_jobs_;
  mutable std::shared_mutex mu_;
  std::map<std::string, std::shared_ptr<Job>> jobs_;  // guarded by mu_
  std::map<std::string, std::string> quarantined_;    // id -> why; guarded by mu_
};

}  // namespace perseus::server
