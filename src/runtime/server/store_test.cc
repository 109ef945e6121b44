#include "runtime/server/store.h"

#include <gtest/gtest.h>
#include <sqlite3.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/temp_dir_for_test.h"
#include "runtime/server/test_util.h"

namespace perseus::server {
namespace {

// A database of the previous schema (version 1: ranks without session and
// iteration base) opens, keeps its rows, and takes the new columns.
TEST(StoreTest, MigratesAVersionOneDatabase) {
  ScopedTempDir tmp;
  const std::string path = tmp.Path("old.db");
  {
    sqlite3* db = nullptr;
    ASSERT_EQ(sqlite3_open(path.c_str(), &db), SQLITE_OK);
    const char* v1 =
        "CREATE TABLE jobs (id TEXT PRIMARY KEY, spec_json TEXT NOT NULL, state_json TEXT NOT NULL DEFAULT '', "
        "profile_csv TEXT NOT NULL DEFAULT '', frontier_json TEXT NOT NULL DEFAULT '');"
        "CREATE TABLE ranks (job_id TEXT NOT NULL, rank INTEGER NOT NULL, dp_rank INTEGER NOT NULL, pp_rank INTEGER "
        "NOT NULL, tp_rank INTEGER NOT NULL, gpu_name TEXT NOT NULL, gpu_uuid TEXT NOT NULL, sm_clocks_json TEXT NOT "
        "NULL, PRIMARY KEY (job_id, rank));"
        "INSERT INTO jobs VALUES ('j', '{\"id\":\"j\"}', '{}', '', '');"
        "INSERT INTO ranks VALUES ('j', 0, 0, 0, 0, 'A100', 'GPU-0', '[1410,1395]');"
        "PRAGMA user_version = 1;";
    ASSERT_EQ(sqlite3_exec(db, v1, nullptr, nullptr, nullptr), SQLITE_OK) << sqlite3_errmsg(db);
    sqlite3_close(db);
  }
  for (int open = 0; open < 2; ++open) {  // and opens again at version 2
    Result<std::unique_ptr<Store>> store = Store::Open(path, false);
    ASSERT_TRUE(store.ok()) << store.status().ToString();
    Result<std::vector<StoredJob>> jobs = (*store)->LoadAll();
    ASSERT_TRUE(jobs.ok()) << jobs.status().ToString();
    ASSERT_EQ(jobs->size(), 1u);
    ASSERT_EQ((*jobs)[0].ranks.size(), 1u);
    const RankInfo& r = (*jobs)[0].ranks[0];
    EXPECT_EQ(r.gpu_uuid, "GPU-0");
    EXPECT_EQ(r.iteration_base, open == 0 ? 0 : 77);
    StoreWrite w;
    w.job_id = "j";
    w.rank = r;
    w.rank->session = "s";
    w.rank->iteration_base = 77;  // a restarted rank's row replaces the old one
    ASSERT_TRUE((*store)->Commit(w).ok());
  }
  // An older release run on the migrated database sets user_version back to 1:
  // the columns are there, so opening again adds nothing and keeps the rows.
  {
    sqlite3* db = nullptr;
    ASSERT_EQ(sqlite3_open(path.c_str(), &db), SQLITE_OK);
    ASSERT_EQ(sqlite3_exec(db, "PRAGMA user_version = 1;", nullptr, nullptr, nullptr), SQLITE_OK);
    sqlite3_close(db);
  }
  Result<std::unique_ptr<Store>> store = Store::Open(path, false);
  ASSERT_TRUE(store.ok()) << store.status().ToString();
  EXPECT_EQ((*store)->LoadAll().value()[0].ranks.at(0).iteration_base, 77);
}

TEST(StoreTest, CommitsSurviveReopen) {
  ScopedTempDir tmp;
  const std::string path = tmp.Path("perseus.db");
  {
    Result<std::unique_ptr<Store>> store = Store::Open(path, false);
    ASSERT_TRUE(store.ok()) << store.status().ToString();
    StoreWrite w;
    w.job_id = "j1";
    w.spec_json = "{\"id\":\"j1\"}";
    w.state_json = "{}";
    ASSERT_TRUE((*store)->Commit(w).ok());
    StoreWrite r;
    r.job_id = "j1";
    r.rank = RankInfo{3, 1, 0, 0, "A100", "GPU-3", {1410, 1395}, "", 0};
    WindowReport wr;
    wr.rank = 3;
    wr.window = 5;
    wr.forward_clock_mhz = wr.backward_clock_mhz = 1410;
    wr.iterations = 1;
    wr.cycle_time_s = 1.3;
    wr.energy_j = 300;
    wr.forward = {4, 0.4, 0.04};
    wr.backward = {4, 0.8, 0.16};
    r.window_reports.push_back(wr);
    wr.energy_j = 999;  // a repeated (rank, window) keeps the first
    r.window_reports.push_back(wr);
    r.iterations.push_back({3, 10, 0.5, 120, 2});
    ASSERT_TRUE((*store)->Commit(r).ok());
  }
  Result<std::unique_ptr<Store>> store = Store::Open(path, true);
  ASSERT_TRUE(store.ok());
  Result<std::vector<StoredJob>> jobs = (*store)->LoadAll();
  ASSERT_TRUE(jobs.ok());
  ASSERT_EQ(jobs->size(), 1u);
  const StoredJob& j = jobs->front();
  EXPECT_EQ(j.spec_json, "{\"id\":\"j1\"}");
  ASSERT_EQ(j.ranks.size(), 1u);
  EXPECT_EQ(j.ranks[0].gpu_uuid, "GPU-3");
  EXPECT_EQ(j.ranks[0].sm_clocks_mhz, (std::vector<int>{1410, 1395}));
  ASSERT_EQ(j.window_reports.size(), 1u);
  EXPECT_EQ(j.window_reports[0].rank, 3);
  EXPECT_EQ(j.window_reports[0].window, 5);
  EXPECT_DOUBLE_EQ(j.window_reports[0].energy_j, 300);
  EXPECT_DOUBLE_EQ(j.window_reports[0].backward.time_sq_s2, 0.16);
  ASSERT_EQ(j.iterations.size(), 1u);
  EXPECT_EQ(j.iterations[0].plan_version, 2);
  EXPECT_DOUBLE_EQ(j.iterations[0].energy_j, 120);
}

TEST(StoreTest, FailedWriteLeavesNothingBehind) {
  Result<std::unique_ptr<Store>> store = Store::Open(":memory:", false);
  ASSERT_TRUE(store.ok());
  StoreWrite w;
  w.job_id = "j";
  w.spec_json = "{}";
  ASSERT_TRUE((*store)->Commit(w).ok());
  StoreWrite dup;  // inserting the same job again fails, and so must the rank in the same write
  dup.job_id = "j";
  dup.spec_json = "{}";
  dup.rank = RankInfo{0, 0, 0, 0, "x", "y", {1}, "", 0};
  EXPECT_FALSE((*store)->Commit(dup).ok());
  Result<std::vector<StoredJob>> jobs = (*store)->LoadAll();
  ASSERT_TRUE(jobs.ok());
  EXPECT_TRUE(jobs->front().ranks.empty());
}

TEST(StoreTest, KeepsTheNewestIterationsOfEachRankHoweverFarApart) {
  Result<std::unique_ptr<Store>> store = Store::Open(":memory:", false);
  ASSERT_TRUE(store.ok());
  StoreWrite w;
  w.job_id = "j";
  w.spec_json = "{}";
  for (int i = 0; i < 10; ++i) w.iterations.push_back({0, i, 1.0, 0, 1});
  for (int i = 0; i < 10; ++i) w.iterations.push_back({1, i, 1.0, 0, 1});
  ASSERT_TRUE((*store)->Commit(w).ok());
  StoreWrite p;
  p.job_id = "j";
  p.iterations.push_back({0, int64_t{1} << 50, 1.0, 0, 1});  // a huge iteration number cuts nothing extra
  p.keep_iterations_per_rank = 3;
  ASSERT_TRUE((*store)->Commit(p).ok());
  std::vector<IterationReport> kept = (*store)->LoadAll()->front().iterations;
  int rank0 = 0, rank1 = 0;
  for (const IterationReport& it : kept) (it.rank == 0 ? rank0 : rank1)++;
  EXPECT_EQ(rank0, 3);   // 8, 9 and the huge one
  EXPECT_EQ(rank1, 10);  // not in the write: untouched
}

// A write that inserts job `id` with one rank.
StoreWrite JobWithRank(const std::string& id, int clock_mhz) {
  StoreWrite w;
  w.job_id = id;
  w.spec_json = "{}";
  w.rank = RankInfo{0, 0, 0, 0, "x", "y", {clock_mhz}, "", 0};
  return w;
}

TEST(StoreTest, DeleteJobRemovesEveryRow) {
  Result<std::unique_ptr<Store>> store = Store::Open(":memory:", false);
  ASSERT_TRUE(store.ok());
  for (const char* id : {"a", "b"}) {
    StoreWrite w = JobWithRank(id, 1);
    w.iterations.push_back({0, 1, 1.0, 0, 1});
    ASSERT_TRUE((*store)->Commit(w).ok());
  }
  StoreWrite d;
  d.job_id = "a";
  d.delete_job = true;
  ASSERT_TRUE((*store)->Commit(d).ok());
  Result<std::vector<StoredJob>> jobs = (*store)->LoadAll();
  ASSERT_EQ(jobs->size(), 1u);
  EXPECT_EQ(jobs->front().id, "b");
  EXPECT_EQ(jobs->front().ranks.size(), 1u);
}

TEST(StoreTest, ASecondStoreOnTheSameFileIsRefusedNamingTheHolder) {
  ScopedTempDir tmp;
  const std::string path = tmp.Path("perseus.db");
  Result<std::unique_ptr<Store>> first = Store::Open(path, false);
  ASSERT_TRUE(first.ok()) << first.status().ToString();
  Result<std::unique_ptr<Store>> second = Store::Open(path, false);
  ASSERT_FALSE(second.ok());
  EXPECT_EQ(second.status().code(), Status::Code::kUnavailable);
  EXPECT_NE(second.status().message().find("in use by another perseus server (pid " + std::to_string(::getpid())),
            std::string::npos)
      << second.status().message();
  first->reset();
  EXPECT_TRUE(Store::Open(path, false).ok());  // released with the first
}

// A database the server could open but not write would lose every report:
// it is an error at start. Root writes read-only files, so as root the
// database sits on a tmpfs remounted read-only (skipped where mounting is not allowed).
TEST(StoreTest, AReadOnlyDatabaseIsAnErrorAtOpen) {
  ScopedTempDir tmp;
  std::string path = tmp.Path("perseus.db");
  std::string mounted;
  if (::geteuid() == 0) {
    mounted = tmp.Path("ro");
    if (!tmp.MountTmpfs("ro", "size=4m")) {
      GTEST_SKIP() << "root writes read-only files and no tmpfs can be mounted here: the read-only test did not run";
    }
    path = mounted + "/perseus.db";
  }
  ASSERT_TRUE(Store::Open(path, false).ok());
  if (mounted.empty()) {
    ASSERT_EQ(::chmod(path.c_str(), 0400), 0);
  } else {
    ASSERT_EQ(::mount("tmpfs", mounted.c_str(), "tmpfs", MS_REMOUNT | MS_RDONLY, "size=4m"), 0);
  }
  Result<std::unique_ptr<Store>> store = Store::Open(path, false);
  ASSERT_FALSE(store.ok());
  EXPECT_NE(store.status().message().find(path), std::string::npos) << store.status().message();
}

TEST(StoreTest, ADamagedRowMarksItsJobOnly) {
  ScopedTempDir tmp;
  const std::string path = tmp.Path("perseus.db");
  {
    Result<std::unique_ptr<Store>> store = Store::Open(path, false);
    ASSERT_TRUE(store.ok());
    for (const char* id : {"good", "bad"}) ASSERT_TRUE((*store)->Commit(JobWithRank(id, 1410)).ok());
  }
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open(path.c_str(), &db), SQLITE_OK);
  ASSERT_EQ(sqlite3_exec(db, "UPDATE ranks SET sm_clocks_json = '[\"x\", 1e999]' WHERE job_id = 'bad'", nullptr,
                         nullptr, nullptr),
            SQLITE_OK);
  sqlite3_close(db);
  Result<std::unique_ptr<Store>> store = Store::Open(path, false);
  ASSERT_TRUE(store.ok());
  Result<std::vector<StoredJob>> jobs = (*store)->LoadAll();
  ASSERT_TRUE(jobs.ok()) << jobs.status().ToString();
  ASSERT_EQ(jobs->size(), 2u);
  EXPECT_EQ((*jobs)[0].load_error, "");
  EXPECT_NE((*jobs)[1].load_error.find("bad clock list"), std::string::npos) << (*jobs)[1].load_error;
}

TEST(StoreTest, OpenReportsThePath) {
  Result<std::unique_ptr<Store>> store = Store::Open("/nonexistent-dir/x.db", false);
  ASSERT_FALSE(store.ok());
  EXPECT_NE(store.status().message().find("/nonexistent-dir/x.db"), std::string::npos);
}

}  // namespace
}  // namespace perseus::server
