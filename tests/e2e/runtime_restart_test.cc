// End to end: the server is SIGKILLed mid-profiling and mid-run and restarted
// on the same database; the job continues with nothing lost, and the ranks
// keep training while the server is gone.
#include <gtest/gtest.h>

#include "common/temp_dir_for_test.h"
#include "tests/e2e/runtime_emulation.h"
#include "tests/e2e/runtime_server_process.h"

namespace perseus::e2e {
namespace {

constexpr char kJob[] = "restart";

Json Job(const ServerProcess& server) { return HttpGet(server.url(), std::string("/jobs/") + kJob).json(); }

int ProfilingWindow(const Json& job) {
  return job["profiling"].is_object() ? job["profiling"]["window"].get<int>() : 0;
}

TEST(RuntimeRestartTest, SigkilledServerRestartsOnTheSameDatabaseAndTheJobContinues) {
  const ClusterShape shape{4, 4, 4, 8, "a100", std::nullopt, runtime::IdealRealism()};  // 64 ranks
  ScopedTempDir tmp;  // before the server: removed after it stops
  ServerProcess server(PerseusBinary(), tmp.Path("perseus.db"), {});
  ASSERT_TRUE(server.Start());
  Json body = {{"id", kJob}, {"dp", shape.dp}, {"pp", shape.pp}, {"tp", shape.tp},
               {"microbatches", shape.microbatches}, {"profiling", {{"window_iterations", 2}, {"clock_stride", 10}}}};
  ASSERT_EQ(HttpSend("POST", server.url(), "/jobs", body.dump(), "").status, 201);
  Cluster cluster(shape, ServerClusterOptions(server.url(), "", kJob));
  cluster.Start();

  // Mid-profiling: hold the ranks, let their reports drain, snapshot, kill, restart.
  ASSERT_TRUE(WaitUntil([&] { return ProfilingWindow(Job(server)) >= 3; }, 300)) << Job(server).dump();
  cluster.Pause();
  std::this_thread::sleep_for(std::chrono::milliseconds(600));
  const Json before = Job(server);
  ASSERT_EQ(before["phase"], "profiling");
  server.Kill();
  EXPECT_EQ(HttpGet(server.url(), "/healthz").status, -1);
  ASSERT_TRUE(server.Start());
  EXPECT_EQ(Job(server), before);
  cluster.Resume();

  // The job finishes profiling and runs.
  ASSERT_TRUE(WaitUntil([&] { return Job(server)["phase"] == "running"; }, 400)) << Job(server).dump();
  const std::string profile = HttpGet(server.url(), std::string("/jobs/") + kJob + "/profile").body;

  // Mid-run, with the ranks going: declare a straggler, kill, keep training, restart.
  ASSERT_EQ(HttpSend("POST", server.url(), std::string("/jobs/") + kJob + "/stragglers",
                     Json{{"pipeline", 0}, {"slowdown", 1.15}}.dump(), "").status, 200);
  const Json running = Job(server);
  server.Kill();
  ASSERT_TRUE(WaitUntil([&] { return !cluster.client(0)->Stats().connected; }, 30));
  const int64_t mark = cluster.iterations();
  ASSERT_TRUE(WaitUntil([&] { return cluster.iterations() >= mark + 20; }, 60));  // training goes on
  ASSERT_TRUE(server.Start());
  Json after = Job(server);
  EXPECT_EQ(after["phase"], "running");
  EXPECT_EQ(after["stragglers"], running["stragglers"]);
  for (int d = 0; d < shape.dp; ++d) {
    EXPECT_EQ(after["pipelines"][d]["plan_index"], running["pipelines"][d]["plan_index"]);
    EXPECT_EQ(after["pipelines"][d]["version"], running["pipelines"][d]["version"]);
  }
  EXPECT_EQ(HttpGet(server.url(), std::string("/jobs/") + kJob + "/profile").body, profile);

  // The ranks reconnect and follow the next change.
  ASSERT_EQ(HttpSend("DELETE", server.url(), std::string("/jobs/") + kJob + "/stragglers/0", "", "").status, 200);
  ASSERT_TRUE(WaitUntil([&] {
    for (int r = 0; r < shape.world_size(); ++r) {
      client::RankClientStats st = cluster.client(r)->Stats();
      if (!st.connected || st.plan_index != 0) return false;
    }
    return true;
  }, 60));
  cluster.Stop();
}

}  // namespace
}  // namespace perseus::e2e
