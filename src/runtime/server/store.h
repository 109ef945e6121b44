// Store: the server's SQLite database, and the only code that touches SQLite.
//
// The database runs in WAL mode. Every StoreWrite is one transaction that is
// committed before Commit returns, so an HTTP reply is sent only for state
// that survives a SIGKILL of the server. With `full_sync` each commit is also
// fsynced (survives power loss); without it commits survive process crashes.
// Thread safety: thread-safe (one connection behind a mutex).
#pragma once

#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "perseus/status.h"
#include "runtime/server/job_state.h"

struct sqlite3;

namespace perseus::server {

// One atomic change to one job. Unset members are left alone.
struct StoreWrite {
  std::string job_id;
  std::optional<std::string> spec_json;      // inserts the job (must be new)
  std::optional<std::string> state_json;     // ControlState
  std::optional<std::string> profile_csv;
  std::optional<std::string> frontier_json;
  std::optional<RankInfo> rank;              // inserts a rank (must be new)
  std::vector<WindowReport> window_reports;  // inserted; a (rank, window) already stored is kept
  bool clear_window_reports = false;         // deletes the job's profiling windows (before inserting)
  std::vector<IterationReport> iterations;   // inserted; duplicates are ignored
  // Keeps only the newest (highest-numbered) this many iterations of each
  // rank in `iterations`, however far apart their numbers are.
  std::optional<int64_t> keep_iterations_per_rank;
  bool delete_job = false;  // deletes every row of the job (alone in its write)
};

// Everything stored about one job.
struct StoredJob {
  std::string id, spec_json, state_json, profile_csv, frontier_json;
  std::vector<RankInfo> ranks;
  std::vector<WindowReport> window_reports;
  std::vector<IterationReport> iterations;
  std::string load_error;  // why a row of this job could not be read (the job is quarantined)
};

class Store {
 public:
  // Opens or creates the database at `path` (":memory:" for tests), holding
  // `path`.lock exclusively until destroyed: a second Store (or server) on
  // the same path fails with kUnavailable naming the holder's pid. A
  // database that cannot be written (read-only file or directory, full
  // disk) is an error here.
  static Result<std::unique_ptr<Store>> Open(const std::string& path, bool full_sync);
  ~Store();
  Store(const Store&) = delete;
  Store& operator=(const Store&) = delete;

  Status Commit(const StoreWrite& write);
  // Every job; a job whose rows cannot be read has `load_error` set. Fails
  // only when the jobs table itself cannot be read.
  Result<std::vector<StoredJob>> LoadAll();
  // Server-wide settings (the shared power cap): one JSON text per key,
  // written in a transaction of its own; nullopt deletes the key.
  Status PutSetting(const std::string& key, const std::optional<std::string>& value_json);
  Result<std::map<std::string, std::string>> LoadSettings();

 private:
  explicit Store(sqlite3* db) : db_(db) {}
  Status Exec(const std::string& sql);
  Status Migrate();  // to kSchemaVersion; also the first write (a read-only database fails here)
  static constexpr int kSchemaVersion = 2;
  Status Apply(const StoreWrite& write);
  Status LoadJobRows(std::vector<StoredJob>* jobs);
  Status LoadRanks(StoredJob* job);
  Status LoadWindowReports(StoredJob* job);
  Status LoadIterations(StoredJob* job);

  std::mutex mu_;
  sqlite3* db_;
  std::string path_;
  int lock_fd_ = -1;
};

}  // namespace perseus::server
