#include "runtime/server/store.h"

#include <fcntl.h>
#include <sqlite3.h>
#include <sys/file.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <exception>
#include <set>

#include "common/json_fields.h"

namespace perseus::server {

namespace {

const char* kSchema = R"sql(
CREATE TABLE IF NOT EXISTS jobs (
  id TEXT PRIMARY KEY, spec_json TEXT NOT NULL, state_json TEXT NOT NULL DEFAULT '',
  profile_csv TEXT NOT NULL DEFAULT '', frontier_json TEXT NOT NULL DEFAULT '');
CREATE TABLE IF NOT EXISTS ranks (
  job_id TEXT NOT NULL, rank INTEGER NOT NULL, dp_rank INTEGER NOT NULL, pp_rank INTEGER NOT NULL,
  tp_rank INTEGER NOT NULL, gpu_name TEXT NOT NULL, gpu_uuid TEXT NOT NULL, sm_clocks_json TEXT NOT NULL,
  PRIMARY KEY (job_id, rank));
CREATE TABLE IF NOT EXISTS measurements (
  job_id TEXT NOT NULL, rank INTEGER NOT NULL, freq_mhz INTEGER NOT NULL,
  fwd_count INTEGER NOT NULL, fwd_time_s REAL NOT NULL, fwd_energy_j REAL NOT NULL,
  bwd_count INTEGER NOT NULL, bwd_time_s REAL NOT NULL, bwd_energy_j REAL NOT NULL,
  blocking_time_s REAL NOT NULL, blocking_energy_j REAL NOT NULL, reports INTEGER NOT NULL,
  PRIMARY KEY (job_id, rank, freq_mhz));
CREATE TABLE IF NOT EXISTS profiling_windows (
  job_id TEXT NOT NULL, rank INTEGER NOT NULL, window INTEGER NOT NULL, report_json TEXT NOT NULL,
  PRIMARY KEY (job_id, rank, window));
CREATE TABLE IF NOT EXISTS settings (key TEXT PRIMARY KEY, value_json TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS iterations (
  job_id TEXT NOT NULL, rank INTEGER NOT NULL, iteration INTEGER NOT NULL,
  compute_time_s REAL NOT NULL, energy_j REAL NOT NULL, plan_version INTEGER NOT NULL,
  PRIMARY KEY (job_id, rank, iteration));
)sql";

// A prepared statement that finalizes itself.
class Stmt {
 public:
  Stmt(sqlite3* db, const char* sql) : db_(db) { rc_ = sqlite3_prepare_v2(db, sql, -1, &stmt_, nullptr); }
  ~Stmt() { sqlite3_finalize(stmt_); }
  Stmt(const Stmt&) = delete;
  Stmt& operator=(const Stmt&) = delete;

  Status status() const {
    return rc_ == SQLITE_OK ? Status::Ok() : Status::IoError(std::string("sqlite: ") + sqlite3_errmsg(db_));
  }
  Stmt& Bind(int i, const std::string& v) {
    sqlite3_bind_text(stmt_, i, v.data(), static_cast<int>(v.size()), SQLITE_TRANSIENT);
    return *this;
  }
  Stmt& Bind(int i, int64_t v) {
    sqlite3_bind_int64(stmt_, i, v);
    return *this;
  }
  Stmt& Bind(int i, int v) { return Bind(i, static_cast<int64_t>(v)); }
  Stmt& Bind(int i, double v) {
    sqlite3_bind_double(stmt_, i, v);
    return *this;
  }
  // Runs a statement that returns no rows.
  Status Run() {
    if (rc_ != SQLITE_OK) return status();
    int rc = sqlite3_step(stmt_);
    if (rc != SQLITE_DONE) return Status::IoError(std::string("sqlite: ") + sqlite3_errmsg(db_));
    sqlite3_reset(stmt_);
    sqlite3_clear_bindings(stmt_);
    return Status::Ok();
  }
  // Advances to the next row; false at the end (check status()).
  bool Next() {
    if (rc_ != SQLITE_OK) return false;
    int rc = sqlite3_step(stmt_);
    if (rc == SQLITE_ROW) return true;
    if (rc != SQLITE_DONE) rc_ = rc;
    return false;
  }
  std::string Text(int col) const {
    const unsigned char* p = sqlite3_column_text(stmt_, col);
    return p ? std::string(reinterpret_cast<const char*>(p), sqlite3_column_bytes(stmt_, col)) : std::string();
  }
  int64_t Int(int col) const { return sqlite3_column_int64(stmt_, col); }
  double Real(int col) const { return sqlite3_column_double(stmt_, col); }

 private:
  sqlite3* db_;
  sqlite3_stmt* stmt_ = nullptr;
  int rc_;
};

// Takes `path`.lock exclusively for the life of the returned descriptor, so
// that a second server on the same database refuses to start instead of
// overwriting the first one's state.
Result<int> LockDatabase(const std::string& path) {
  const std::string lock_path = path + ".lock";
  const int fd = ::open(lock_path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0600);
  if (fd < 0) return Status::IoError(lock_path + ": cannot open: " + std::strerror(errno));
  if (::flock(fd, LOCK_EX | LOCK_NB) != 0) {
    char pid[32] = {};
    const ssize_t n = ::pread(fd, pid, sizeof(pid) - 1, 0);
    ::close(fd);
    std::string holder = n > 0 ? std::string(pid, static_cast<size_t>(n)) : std::string("unknown");
    while (!holder.empty() && (holder.back() == '\n' || holder.back() == ' ')) holder.pop_back();
    return Status::Unavailable(path + ": in use by another perseus server (pid " + holder + ", lock " + lock_path +
                               "); stop it or use another --db");
  }
  const std::string pid = std::to_string(::getpid()) + "\n";
  if (::ftruncate(fd, 0) != 0 || ::pwrite(fd, pid.data(), pid.size(), 0) != static_cast<ssize_t>(pid.size())) {
    // The lock holds without the pid; only the message to a second server loses it.
  }
  return fd;
}

}  // namespace

Result<std::unique_ptr<Store>> Store::Open(const std::string& path, bool full_sync) {
  int lock_fd = -1;
  if (path != ":memory:") {
    Result<int> locked = LockDatabase(path);
    if (!locked.ok()) return locked.status();
    lock_fd = *locked;
  }
  sqlite3* db = nullptr;
  int rc = sqlite3_open_v2(path.c_str(), &db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX,
                           nullptr);
  if (rc != SQLITE_OK) {
    std::string msg = db ? sqlite3_errmsg(db) : sqlite3_errstr(rc);
    sqlite3_close(db);
    if (lock_fd >= 0) ::close(lock_fd);
    return Status::IoError(path + ": " + msg);
  }
  std::unique_ptr<Store> store(new Store(db));
  store->path_ = path;
  store->lock_fd_ = lock_fd;
  if (sqlite3_db_readonly(db, "main") == 1) {
    return Status::IoError(path + ": opened read-only; the server must write every report (check the file's "
                                  "and its directory's permissions)");
  }
  sqlite3_busy_timeout(db, 5000);
  PERSEUS_RETURN_IF_ERROR(store->Exec("PRAGMA journal_mode=WAL"));
  PERSEUS_RETURN_IF_ERROR(store->Exec(full_sync ? "PRAGMA synchronous=FULL" : "PRAGMA synchronous=NORMAL"));
  PERSEUS_RETURN_IF_ERROR(store->Exec("PRAGMA foreign_keys=ON"));
  PERSEUS_RETURN_IF_ERROR(store->Exec(kSchema));
  // A write now, so a database that cannot take one (a read-only directory
  // for the WAL, a full disk) is an error at start and not at the first report.
  PERSEUS_RETURN_IF_ERROR(store->Migrate());
  return store;
}

// Version 2 (2026-11) adds the ranks' session and iteration base. Whatever
// user_version says (an older release, run on a migrated database, sets it
// back to 1), the columns missing are added, in one transaction with the version.
Status Store::Migrate() {
  int version = 0;
  {
    Stmt s(db_, "PRAGMA user_version");
    if (s.Next()) version = static_cast<int>(s.Int(0));
    PERSEUS_RETURN_IF_ERROR(s.status());
  }
  std::set<std::string> columns;
  {
    Stmt s(db_, "PRAGMA table_info(ranks)");
    while (s.Next()) columns.insert(s.Text(1));
    PERSEUS_RETURN_IF_ERROR(s.status());
  }
  std::string sql = "BEGIN IMMEDIATE; ";
  if (!columns.count("session")) sql += "ALTER TABLE ranks ADD COLUMN session TEXT NOT NULL DEFAULT ''; ";
  if (!columns.count("iteration_base")) {
    sql += "ALTER TABLE ranks ADD COLUMN iteration_base INTEGER NOT NULL DEFAULT 0; ";
  }
  Status st = Exec(sql + "PRAGMA user_version = " + std::to_string(std::max(version, kSchemaVersion)) + "; COMMIT");
  if (!st.ok()) (void)Exec("ROLLBACK");
  return st;
}

Store::~Store() {
  sqlite3_close(db_);
  if (lock_fd_ >= 0) ::close(lock_fd_);
}

Status Store::Exec(const std::string& sql) {
  char* err = nullptr;
  if (sqlite3_exec(db_, sql.c_str(), nullptr, nullptr, &err) != SQLITE_OK) {
    std::string msg = err ? err : "unknown error";
    sqlite3_free(err);
    return Status::IoError(path_ + ": sqlite: " + msg);
  }
  return Status::Ok();
}

Status Store::Commit(const StoreWrite& write) {
  std::lock_guard<std::mutex> lock(mu_);
  PERSEUS_RETURN_IF_ERROR(Exec("BEGIN IMMEDIATE"));
  Status st = Apply(write);
  if (!st.ok()) {
    (void)Exec("ROLLBACK");
    return st;
  }
  return Exec("COMMIT");
}

Status Store::Apply(const StoreWrite& w) {
  if (w.delete_job) {
    for (const char* sql : {"DELETE FROM iterations WHERE job_id = ?", "DELETE FROM profiling_windows WHERE job_id = ?",
                            "DELETE FROM measurements WHERE job_id = ?", "DELETE FROM ranks WHERE job_id = ?",
                            "DELETE FROM jobs WHERE id = ?"}) {
      Stmt s(db_, sql);
      PERSEUS_RETURN_IF_ERROR(s.Bind(1, w.job_id).Run());
    }
    return Status::Ok();
  }
  if (w.spec_json) {
    Stmt s(db_, "INSERT INTO jobs (id, spec_json) VALUES (?, ?)");
    PERSEUS_RETURN_IF_ERROR(s.Bind(1, w.job_id).Bind(2, *w.spec_json).Run());
  }
  const std::pair<const std::optional<std::string>*, const char*> columns[] = {
      {&w.state_json, "UPDATE jobs SET state_json = ? WHERE id = ?"},
      {&w.profile_csv, "UPDATE jobs SET profile_csv = ? WHERE id = ?"},
      {&w.frontier_json, "UPDATE jobs SET frontier_json = ? WHERE id = ?"}};
  for (const auto& [value, sql] : columns) {
    if (!*value) continue;
    Stmt s(db_, sql);
    PERSEUS_RETURN_IF_ERROR(s.Bind(1, **value).Bind(2, w.job_id).Run());
  }
  if (w.rank) {
    const RankInfo& r = *w.rank;
    // A restarted rank's row replaces its earlier one (a new session and base).
    Stmt s(db_, "INSERT OR REPLACE INTO ranks (job_id, rank, dp_rank, pp_rank, tp_rank, gpu_name, gpu_uuid, "
                "sm_clocks_json, session, iteration_base) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)");
    PERSEUS_RETURN_IF_ERROR(s.Bind(1, w.job_id).Bind(2, r.rank).Bind(3, r.dp_rank).Bind(4, r.pp_rank)
                                .Bind(5, r.tp_rank).Bind(6, r.gpu_name).Bind(7, r.gpu_uuid)
                                .Bind(8, Json(r.sm_clocks_mhz).dump()).Bind(9, r.session)
                                .Bind(10, r.iteration_base).Run());
  }
  if (w.clear_window_reports) {
    Stmt s(db_, "DELETE FROM profiling_windows WHERE job_id = ?");
    PERSEUS_RETURN_IF_ERROR(s.Bind(1, w.job_id).Run());
  }
  if (!w.window_reports.empty()) {
    Stmt s(db_, "INSERT OR IGNORE INTO profiling_windows VALUES (?, ?, ?, ?)");
    for (const WindowReport& r : w.window_reports) {
      PERSEUS_RETURN_IF_ERROR(
          s.Bind(1, w.job_id).Bind(2, r.rank).Bind(3, r.window).Bind(4, WindowReportToJson(r).dump()).Run());
    }
  }
  if (!w.iterations.empty()) {
    Stmt s(db_, "INSERT OR IGNORE INTO iterations VALUES (?, ?, ?, ?, ?, ?)");
    for (const IterationReport& it : w.iterations) {
      PERSEUS_RETURN_IF_ERROR(s.Bind(1, w.job_id).Bind(2, it.rank).Bind(3, it.iteration)
                                  .Bind(4, it.compute_time_s).Bind(5, it.energy_j).Bind(6, it.plan_version).Run());
    }
  }
  if (w.keep_iterations_per_rank) {
    std::set<int> ranks;
    for (const IterationReport& it : w.iterations) ranks.insert(it.rank);
    Stmt s(db_, "DELETE FROM iterations WHERE job_id = ?1 AND rank = ?2 AND iteration < (SELECT MIN(iteration) FROM "
                "(SELECT iteration FROM iterations WHERE job_id = ?1 AND rank = ?2 ORDER BY iteration DESC LIMIT ?3))");
    for (int rank : ranks) {
      PERSEUS_RETURN_IF_ERROR(s.Bind(1, w.job_id).Bind(2, rank).Bind(3, *w.keep_iterations_per_rank).Run());
    }
  }
  return Status::Ok();
}

Status Store::PutSetting(const std::string& key, const std::optional<std::string>& value_json) {
  std::lock_guard<std::mutex> lock(mu_);
  Stmt s(db_, value_json ? "INSERT OR REPLACE INTO settings VALUES (?, ?)" : "DELETE FROM settings WHERE key = ?");
  s.Bind(1, key);
  if (value_json) s.Bind(2, *value_json);
  return s.Run();
}

Result<std::map<std::string, std::string>> Store::LoadSettings() {
  std::lock_guard<std::mutex> lock(mu_);
  std::map<std::string, std::string> out;
  Stmt s(db_, "SELECT key, value_json FROM settings");
  while (s.Next()) out[s.Text(0)] = s.Text(1);
  PERSEUS_RETURN_IF_ERROR(s.status());
  return out;
}

Result<std::vector<StoredJob>> Store::LoadAll() {
  std::lock_guard<std::mutex> lock(mu_);
  std::vector<StoredJob> jobs;
  PERSEUS_RETURN_IF_ERROR(LoadJobRows(&jobs));
  for (StoredJob& job : jobs) {
    // A damaged row quarantines its job, not the server. Rows of valid SQL
    // types with bad contents are caught here or by the loader's checks.
    Status st;
    try {
      st = LoadRanks(&job);
      if (st.ok()) st = LoadWindowReports(&job);
      if (st.ok()) st = LoadIterations(&job);
    } catch (const std::exception& e) {
      st = Status::Internal(std::string("damaged row: ") + e.what());
    }
    if (!st.ok()) job.load_error = st.message();
  }
  return jobs;
}

Status Store::LoadJobRows(std::vector<StoredJob>* jobs) {
  Stmt s(db_, "SELECT id, spec_json, state_json, profile_csv, frontier_json FROM jobs ORDER BY rowid");
  while (s.Next()) jobs->push_back({s.Text(0), s.Text(1), s.Text(2), s.Text(3), s.Text(4), {}, {}, {}, {}});
  return s.status();
}

Status Store::LoadRanks(StoredJob* job) {
  Stmt s(db_, "SELECT rank, dp_rank, pp_rank, tp_rank, gpu_name, gpu_uuid, sm_clocks_json, session, iteration_base "
              "FROM ranks WHERE job_id = ? ORDER BY rank");
  s.Bind(1, job->id);
  while (s.Next()) {
    RankInfo r{static_cast<int>(s.Int(0)), static_cast<int>(s.Int(1)), static_cast<int>(s.Int(2)),
               static_cast<int>(s.Int(3)), s.Text(4), s.Text(5), {}, s.Text(7), s.Int(8)};
    Json clocks = Json::parse(s.Text(6), nullptr, false);
    if (!clocks.is_array() || !std::all_of(clocks.begin(), clocks.end(), [](const Json& c) {
          return c.is_number_integer() && c.get<int64_t>() > 0 && c.get<int64_t>() < 100000;
        })) {
      return Status::Internal("stored rank " + std::to_string(r.rank) + ": bad clock list");
    }
    r.sm_clocks_mhz = clocks.get<std::vector<int>>();
    job->ranks.push_back(std::move(r));
  }
  return s.status();
}

Status Store::LoadWindowReports(StoredJob* job) {
  Stmt s(db_, "SELECT rank, window, report_json FROM profiling_windows WHERE job_id = ? ORDER BY window, rank");
  s.Bind(1, job->id);
  while (s.Next()) {
    const std::string where = "stored profiling window " + std::to_string(s.Int(1)) + " of rank " +
                              std::to_string(s.Int(0));
    Json j = Json::parse(s.Text(2), nullptr, false);
    if (!j.is_object()) return Status::Internal(where + ": not a JSON object");
    Result<WindowReport> r = ParseWindowReport(j);
    if (!r.ok()) return r.status().WithContext(where);
    r->rank = static_cast<int>(s.Int(0));
    job->window_reports.push_back(*r);
  }
  return s.status();
}

Status Store::LoadIterations(StoredJob* job) {
  Stmt s(db_, "SELECT rank, iteration, compute_time_s, energy_j, plan_version FROM iterations WHERE job_id = ? "
              "ORDER BY iteration, rank");
  s.Bind(1, job->id);
  while (s.Next()) {
    job->iterations.push_back(
        {static_cast<int>(s.Int(0)), s.Int(1), s.Real(2), s.Real(3), s.Int(4)});
  }
  return s.status();
}

}  // namespace perseus::server
