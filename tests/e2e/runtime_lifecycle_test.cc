// End to end: the real server binary and 64 emulated ranks (8 pipelines x 4
// stages x 2 tensor-parallel GPUs) on loopback go through online profiling,
// optimisation, deployment of the fastest plan, a declared straggler, a
// detected straggler and its recovery.
#include <gtest/gtest.h>

#include <cmath>

#include <cstdio>

#include "common/temp_dir_for_test.h"
#include "tests/e2e/runtime_emulation.h"
#include "tests/e2e/runtime_server_process.h"

namespace perseus::e2e {
namespace {

constexpr char kToken[] = "e2e-token";
constexpr char kJob[] = "gpt-e2e";

Json JobBody(const ClusterShape& shape) {
  return {{"id", kJob}, {"dp", shape.dp}, {"pp", shape.pp}, {"tp", shape.tp},
          {"microbatches", shape.microbatches}, {"schedule", "1f1b"},
          {"profiling", {{"window_iterations", 2}, {"clock_stride", 10}}}};
}

Json Job(const ServerProcess& server) { return HttpGet(server.url(), std::string("/jobs/") + kJob).json(); }

// The plan index of every pipeline (a copy: safe in a range-for, unlike
// Job(server)["pipelines"], whose temporary dies before the loop runs).
std::vector<int> PipelinePlans(const ServerProcess& server) {
  std::vector<int> plans;
  for (const Json& p : Job(server).at("pipelines").get<std::vector<Json>>()) plans.push_back(p["plan_index"]);
  return plans;
}

std::vector<int> PlanClocks(const ServerProcess& server, int rank) {
  Json plan = HttpGet(server.url(), std::string("/jobs/") + kJob + "/ranks/" + std::to_string(rank) + "/plan").json();
  std::vector<int> clocks;
  for (const Json& s : plan["instructions"]) clocks.push_back(s["sm_clock_mhz"]);
  return clocks;
}

// True when every rank holds (and last ran) the plan the server has for it.
bool AllRanksRunTheirPlans(Cluster& cluster, const ServerProcess& server) {
  Json job = Job(server);
  for (int r = 0; r < cluster.shape().world_size(); ++r) {
    client::RankClientStats st = cluster.client(r)->Stats();
    int d = r / (cluster.shape().pp * cluster.shape().tp);
    if (st.plan_kind != "frontier" || st.plan_index != job["pipelines"][d]["plan_index"]) return false;
    if (cluster.LastClocks(r) != PlanClocks(server, r)) return false;
  }
  return true;
}

// The index of Frontier::PlanForTime(min(slowdown * T_fastest, T*)).
int ExpectedPlanIndex(const Json& frontier, double slowdown) {
  const Json& plans = frontier["plans"];
  double target = std::min(slowdown * plans[0]["time_s"].get<double>(), plans.back()["time_s"].get<double>());
  int best = 0;
  for (size_t i = 0; i < plans.size(); ++i) {
    if (plans[i]["time_s"].get<double>() <= target * (1 + 1e-9)) best = static_cast<int>(i);
  }
  return best;
}

IterationStats MeanOfLast(const std::vector<IterationStats>& history, size_t n) {
  IterationStats mean;
  n = std::min(n, history.size());
  for (size_t i = history.size() - n; i < history.size(); ++i) {
    mean.time_s += history[i].time_s / n;
    mean.energy_j += history[i].energy_j / n;
  }
  return mean;
}

TEST(RuntimeLifecycleTest, SixtyFourRanksProfileOptimiseRunAndAnswerStragglers) {
  const ClusterShape shape{8, 4, 2, 8, "a100", std::nullopt, runtime::IdealRealism()};
  ASSERT_EQ(shape.world_size(), 64);

  // Baseline: every GPU at its maximum clock, no server.
  ClusterOptions baseline_options;
  baseline_options.use_server = false;
  Cluster baseline(shape, baseline_options);
  baseline.Start();
  ASSERT_TRUE(WaitUntil([&] { return baseline.History().size() >= 3; }, 60));
  baseline.Stop();
  const IterationStats all_max = MeanOfLast(baseline.History(), 2);

  ScopedTempDir tmp;  // before the server: removed after it stops
  ServerProcess server(PerseusBinary(), tmp.Path("perseus.db"), {"--token-file", TokenFile(tmp.Path("token"), kToken)});
  ASSERT_TRUE(server.Start()) << server.Log();
  ASSERT_EQ(HttpSend("POST", server.url(), "/jobs", JobBody(shape).dump(), kToken).status, 201);

  Cluster cluster(shape, ServerClusterOptions(server.url(), kToken, kJob));
  cluster.Start();

  // Profiling, then optimisation, then every rank on the fastest plan.
  ASSERT_TRUE(WaitUntil([&] { return Job(server)["phase"] == "running"; }, 400)) << Job(server).dump();
  const int64_t profiled_iterations = cluster.iterations();
  ASSERT_TRUE(WaitUntil([&] { return AllRanksRunTheirPlans(cluster, server); }, 60));
  Json job = Job(server);
  for (const Json& p : job["pipelines"]) EXPECT_EQ(p["plan_index"], 0);
  Json frontier = HttpGet(server.url(), std::string("/jobs/") + kJob + "/frontier").json();
  HttpReply csv = HttpGet(server.url(), std::string("/jobs/") + kJob + "/profile");
  EXPECT_EQ(csv.status, 200);
  EXPECT_EQ(csv.body.rfind("stage,instruction,frequency,time,energy", 0), 0u) << csv.body.substr(0, 80);

  // Energy per iteration is below the all-maximum run, at the same iteration time.
  const int64_t mark = cluster.iterations();
  ASSERT_TRUE(WaitUntil([&] { return cluster.iterations() >= mark + 4; }, 60));
  const IterationStats fastest = MeanOfLast(cluster.History(), 3);
  EXPECT_LT(fastest.energy_j, all_max.energy_j);
  EXPECT_LE(fastest.time_s, all_max.time_s * 1.001);
  std::printf("[figures] all-max: %.4f s %.1f J/iteration; fastest plan: %.4f s %.1f J/iteration (%.2f%% less); "
              "profiling took %lld iterations; frontier: %zu plans\n",
              all_max.time_s, all_max.energy_j, fastest.time_s, fastest.energy_j,
              100 * (1 - fastest.energy_j / all_max.energy_j), static_cast<long long>(profiled_iterations),
              frontier["plans"].size());

  // A declared straggler: every other pipeline moves to PlanForTime(min(1.2 T, T*)).
  const int expected = ExpectedPlanIndex(frontier, 1.2);
  ASSERT_GT(expected, 0);
  ASSERT_EQ(HttpSend("POST", server.url(), std::string("/jobs/") + kJob + "/stragglers",
                     Json{{"pipeline", 3}, {"slowdown", 1.2}}.dump(), kToken).status, 200);
  job = Job(server);
  for (int d = 0; d < shape.dp; ++d) EXPECT_EQ(job["pipelines"][d]["plan_index"], d == 3 ? 0 : expected);
  ASSERT_TRUE(WaitUntil([&] { return AllRanksRunTheirPlans(cluster, server); }, 60));
  ASSERT_EQ(HttpSend("DELETE", server.url(), std::string("/jobs/") + kJob + "/stragglers/3", "", kToken).status, 200);
  ASSERT_TRUE(WaitUntil([&] { return AllRanksRunTheirPlans(cluster, server); }, 60));
  for (int plan : PipelinePlans(server)) EXPECT_EQ(plan, 0);

  // A detected straggler: pipeline 5 runs 25% slower, then recovers.
  cluster.SetSlowdown(5, 1.25);
  ASSERT_TRUE(WaitUntil([&] { return !Job(server)["stragglers"].empty(); }, 120));
  // The first estimate may come while the window still holds iterations from
  // before the slowdown; it is refined as they leave the window.
  ASSERT_TRUE(WaitUntil(
      [&] {
        Json st = Job(server)["stragglers"];
        return !st.empty() && std::abs(st[0]["slowdown"].get<double>() - 1.25) < 0.03;
      },
      120))
      << Job(server).dump();
  Json s = Job(server)["stragglers"][0];
  EXPECT_EQ(s["pipeline"], 5);
  EXPECT_EQ(s["source"], "detected");
  ASSERT_TRUE(WaitUntil([&] { return AllRanksRunTheirPlans(cluster, server); }, 60));
  EXPECT_GT(Job(server)["pipelines"][0]["plan_index"].get<int>(), 0);
  cluster.SetSlowdown(5, 1.0);
  ASSERT_TRUE(WaitUntil([&] { return Job(server)["stragglers"].empty(); }, 120)) << Job(server).dump();
  ASSERT_TRUE(WaitUntil([&] { return AllRanksRunTheirPlans(cluster, server); }, 60));
  for (int plan : PipelinePlans(server)) EXPECT_EQ(plan, 0);

  // Observability.
  HttpReply metrics = HttpGet(server.url(), "/metrics");
  EXPECT_NE(metrics.body.find("perseus_job_phase{job_id=\"gpt-e2e\",phase=\"running\"} 1"), std::string::npos);
  EXPECT_NE(metrics.body.find("perseus_pipeline_plan_index{job_id=\"gpt-e2e\",pipeline=\"7\"} 0"), std::string::npos);
  EXPECT_EQ(metrics.body.find("{job=\""), std::string::npos) << "no label Prometheus would rename exported_job";
  EXPECT_NE(metrics.body.find("# TYPE perseus_pipeline_energy_joules_total counter"), std::string::npos);
  const std::string p0 = "{job_id=\"gpt-e2e\",pipeline=\"0\"} ";
  // Slowed down for pipeline 5's straggle, back to plan 0 after it recovered.
  EXPECT_GE(MetricValue(metrics.body, "perseus_pipeline_plan_switches_total" + p0), 2) << metrics.body;
  EXPECT_GT(MetricValue(metrics.body, "perseus_pipeline_iterations_total" + p0), 0);
  const double energy_j = MetricValue(metrics.body, "perseus_pipeline_energy_joules_total" + p0);
  EXPECT_GT(energy_j, 0);
  EXPECT_GT(MetricValue(metrics.body, "perseus_pipeline_all_max_energy_joules_total" + p0), energy_j)
      << "the plans save energy against all-max";
  std::string cmd = PerseusBinary() + " status --server " + server.url() + " --job " + kJob;
  FILE* out = popen(cmd.c_str(), "r");
  ASSERT_NE(out, nullptr);
  char buf[4096];
  std::string text;
  while (size_t n = fread(buf, 1, sizeof(buf), out)) text.append(buf, n);
  EXPECT_EQ(pclose(out), 0);
  EXPECT_NE(text.find("job gpt-e2e: running (dp 8, pp 4, tp 2"), std::string::npos) << text;
  cluster.Stop();
  // A job that ended leaves /metrics (only the count by phase remains).
  ASSERT_EQ(HttpSend("POST", server.url(), "/jobs/gpt-e2e/finish", "{}", kToken).status, 200);
  metrics = HttpGet(server.url(), "/metrics");
  EXPECT_EQ(metrics.body.find("job_id=\"gpt-e2e\""), std::string::npos) << metrics.body;
  EXPECT_NE(metrics.body.find("perseus_jobs{phase=\"done\"} 1\n"), std::string::npos) << metrics.body;
}

}  // namespace
}  // namespace perseus::e2e
