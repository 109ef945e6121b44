#include "runtime/server/store.h"

#include <gtest/gtest.h>

#include "runtime/server/test_util.h"

namespace perseus::server {
namespace {

TEST(StoreTest, CommitsSurviveReopen) {
  const std::string path = testing::TempDbPath("store_reopen");
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
    r.rank = RankInfo{3, 1, 0, 0, "A100", "GPU-3", {1410, 1395}};
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
  dup.rank = RankInfo{0, 0, 0, 0, "x", "y", {1}};
  EXPECT_FALSE((*store)->Commit(dup).ok());
  Result<std::vector<StoredJob>> jobs = (*store)->LoadAll();
  ASSERT_TRUE(jobs.ok());
  EXPECT_TRUE(jobs->front().ranks.empty());
}

TEST(StoreTest, PrunesOldIterations) {
  Result<std::unique_ptr<Store>> store = Store::Open(":memory:", false);
  ASSERT_TRUE(store.ok());
  StoreWrite w;
  w.job_id = "j";
  w.spec_json = "{}";
  for (int i = 0; i < 10; ++i) w.iterations.push_back({0, i, 1.0, 0, 1});
  ASSERT_TRUE((*store)->Commit(w).ok());
  StoreWrite p;
  p.job_id = "j";
  p.prune_iterations_before = 7;
  ASSERT_TRUE((*store)->Commit(p).ok());
  EXPECT_EQ((*store)->LoadAll()->front().iterations.size(), 3u);
}

TEST(StoreTest, OpenReportsThePath) {
  Result<std::unique_ptr<Store>> store = Store::Open("/nonexistent-dir/x.db", false);
  ASSERT_FALSE(store.ok());
  EXPECT_NE(store.status().message().find("/nonexistent-dir/x.db"), std::string::npos);
}

}  // namespace
}  // namespace perseus::server
