// Running under a power cap: the spec's cap, the alternation of the capped
// mix's two settings within each window, the API's cap and its removal, and
// a restart keeping the cap in force.
#include <gtest/gtest.h>

#include <cstdio>

#include "carbon/iso_time.h"
#include "common/temp_dir_for_test.h"
#include "runtime/server/metrics.h"
#include "runtime/server/test_util.h"

namespace perseus::server {
namespace {

using testing::JobBody;
using testing::Plan;

class JobServicePowerTest : public ::testing::Test {
 protected:
  void Open(const std::string& path) { testing::OpenService(path, [this] { return now_; }, &store_, &service_); }
  void SetUp() override { Open(path_); }
  Json Summary() { return *service_->JobSummary("j"); }
  std::vector<int> PlanIndices() {
    std::vector<int> out;
    const Json summary = Summary();
    for (const Json& p : summary["pipelines"]) out.push_back(p["plan_index"]);
    return out;
  }
  // Registers a 2-pipeline job (with `cap` as its spec's power_cap unless null) and runs it.
  void RunJob(const Json& cap) {
    Json body = JobBody("j", 2, 2, 4);
    if (!cap.is_null()) body["power_cap"] = cap;
    ASSERT_TRUE(HandleRegisterJob(*service_, body).ok());
    testing::RegisterAndProfile(*service_, "j", 2, 2, 4);
    service_->WaitForOptimizer();
    ASSERT_EQ(Summary()["phase"], "running");
  }
  // The uncapped job's power: both pipelines on the fastest plan.
  double FastestPowerW() {
    Json frontier = *service_->FrontierJson("j");
    return 2 * frontier["plans"][0]["energy_j"].get<double>() / frontier["plans"][0]["time_s"].get<double>();
  }

  ScopedTempDir tmp_;  // before the store and service: removed after they close
  const std::string path_ = tmp_.Path("perseus.db");
  static constexpr int64_t kMinute = 1'699'999'980;  // a multiple of 60 s
  int64_t now_ = kMinute + 40;
  std::unique_ptr<Store> store_;
  std::unique_ptr<JobService> service_;
};

TEST_F(JobServicePowerTest, TheSpecsCapAlternatesTwoSettingsWithinEachWindow) {
  RunJob(Json(nullptr));
  const double free_w = FastestPowerW();
  EXPECT_TRUE(Summary()["power_cap"].is_null());
  EXPECT_EQ(PlanIndices(), (std::vector<int>{0, 0})) << Summary().dump();
  // The same job again, with a cap 10% under its uncapped power.
  ASSERT_TRUE(service_->DeleteJob("j").ok());
  RunJob({{"average_w", 0.9 * free_w}, {"window_s", 60}});
  Json cap = Summary()["power_cap"];
  ASSERT_TRUE(cap.is_object()) << Summary().dump();
  EXPECT_EQ(cap["source"], "spec");
  EXPECT_EQ(cap["feasible"], true);
  EXPECT_LE(cap["predicted_w"].get<double>(), 0.9 * free_w * (1 + 1e-9));
  const double share = cap["fast_share"];
  ASSERT_GT(share, 0);
  ASSERT_LT(share, 1);
  // The window's first `share` runs the faster setting, the rest the slower one.
  now_ = kMinute + 60;  // a window's start: fast
  service_->PowerCapTick();
  const std::vector<int> fast = PlanIndices();
  EXPECT_EQ(Summary()["power_cap"]["running"], "fast");
  now_ += static_cast<int64_t>(share * 60) + 1;  // past the fast part
  service_->PowerCapTick();
  const std::vector<int> slow = PlanIndices();
  EXPECT_EQ(Summary()["power_cap"]["running"], "slow");
  EXPECT_GT(slow[0] + slow[1], fast[0] + fast[1]);
  const int64_t version = Plan(*service_, "j", 0)["version"];
  service_->PowerCapTick();  // nothing to change: the ranks keep their plan
  EXPECT_EQ(Plan(*service_, "j", 0)["version"], version);
  // The GPUs draw 20% more than predicted: the correction follows, and the same cap buys less speed.
  for (int64_t iteration = 0; iteration < 3; ++iteration) {
    for (int r = 0; r < 4; ++r) {
      const Json plan = Plan(*service_, "j", r);
      const double energy_j = 1.2 * Summary()["pipelines"][r / 2]["predicted_energy_j"].get<double>() / 2;
      const Json body = {{"iterations", {{{"iteration", iteration}, {"compute_time_s", plan["predicted_time_s"]},
                                           {"energy_j", energy_j}, {"plan_version", plan["version"]}}}}};
      ASSERT_TRUE(HandleReportIterations(*service_, "j", r, body).ok());
    }
  }
  service_->PowerCapTick();
  cap = Summary()["power_cap"];
  EXPECT_NEAR(cap["correction"].get<double>(), 1.2, 1e-9);
  EXPECT_GT(cap["measured_w"].get<double>(), 0);
  EXPECT_LE(cap["predicted_w"].get<double>(), 0.9 * free_w * (1 + 1e-9));
  EXPECT_LT(cap["fast_share"].get<double>(), share);
}

TEST_F(JobServicePowerTest, TheApiSetsAndLiftsACapThatSurvivesARestart) {
  RunJob(Json(nullptr));
  const double free_w = FastestPowerW();
  EXPECT_EQ(HandleSetPowerCap(*service_, "j", {{"average_w", 0}}).status().message(),
            "field 'average_w': expected a number in [1, 1000000000], got 0");
  EXPECT_EQ(HandleSetPowerCap(*service_, "j", {{"average_w", 100}, {"peak_w", 50}}).status().message(),
            "field 'peak_w': expected a number in [100, 1000000000], got 50");
  EXPECT_EQ(HandleSetPowerCap(*service_, "nope", {{"average_w", 100}}).status().code(), Status::Code::kNotFound);
  // A demand-response event: a cap below every setting runs the least power there is.
  Result<ApiReply> tight = HandleSetPowerCap(*service_, "j", {{"average_w", 1}});
  ASSERT_TRUE(tight.ok()) << tight.status().ToString();
  EXPECT_EQ(tight->body["power_cap"]["feasible"], false);
  EXPECT_EQ(tight->body["power_cap"]["source"], "api");
  const std::vector<int> slowest = PlanIndices();
  EXPECT_GT(slowest[0], 0);
  EXPECT_EQ(slowest[0], slowest[1]);
  Open(path_);  // a restart keeps the cap in force
  EXPECT_EQ(Summary()["power_cap"]["average_w"], 1);
  EXPECT_EQ(PlanIndices(), slowest);
  Result<ApiReply> lifted = HandleClearPowerCap(*service_, "j");
  ASSERT_TRUE(lifted.ok());
  EXPECT_TRUE(lifted->body["power_cap"].is_null());
  EXPECT_EQ(PlanIndices(), (std::vector<int>{0, 0}));
  service_->PowerCapTick();
  EXPECT_EQ(PlanIndices(), (std::vector<int>{0, 0}));
  // A cap at the uncapped power changes nothing.
  ASSERT_TRUE(HandleSetPowerCap(*service_, "j", {{"average_w", free_w * 1.01}}).ok());
  EXPECT_EQ(PlanIndices(), (std::vector<int>{0, 0}));
}

// A cap below the least power of the frontier's plans: every pipeline runs
// the minimum-energy plan with its clocks held lower, the ranks get those
// clocks, the prediction meets the cap, and a restart keeps the ceiling.
TEST_F(JobServicePowerTest, ACapBelowTheFrontiersLeastPowerHoldsClocksLower) {
  // GPUs that also list 675 and 570 MHz: below the synthetic stages' least-energy clock (780 MHz).
  ASSERT_TRUE(HandleRegisterJob(*service_, JobBody("j", 2, 2, 4)).ok());
  for (int r = 0; r < 4; ++r) {
    Json rank = testing::RankBody(r, r / 2, r % 2);
    rank["sm_clocks_mhz"].push_back(675);
    rank["sm_clocks_mhz"].push_back(570);
    ASSERT_TRUE(HandleRegisterRank(*service_, "j", rank).ok());
  }
  for (int round = 0; round < 1000 && Summary()["phase"] == "profiling"; ++round) {
    for (int r = 0; r < 4; ++r) {
      const Json plan = Plan(*service_, "j", r);
      if (plan["kind"] == "profiling") {
        ASSERT_TRUE(HandleReportWindow(*service_, "j", r, testing::WindowBody(r % 2, plan, 4)).ok());
      }
    }
  }
  service_->WaitForOptimizer();
  ASSERT_EQ(Summary()["phase"], "running");
  const Json frontier = *service_->FrontierJson("j");
  const Json& slowest = frontier["plans"].back();
  const double least_w = 2 * slowest["energy_j"].get<double>() / slowest["time_s"].get<double>();
  Result<ApiReply> set = HandleSetPowerCap(*service_, "j", {{"average_w", 0.97 * least_w}});
  ASSERT_TRUE(set.ok()) << set.status().ToString();
  const Json cap = set->body["power_cap"];
  EXPECT_EQ(cap["feasible"], true) << cap.dump();
  EXPECT_LE(cap["predicted_w"].get<double>(), 0.97 * least_w * (1 + 1e-9));
  // Late in the window: the slower setting, which holds clocks below the minimum-energy plan's.
  now_ = kMinute + 59;
  service_->PowerCapTick();
  const Json summary = Summary();
  const Json& pipeline = summary["pipelines"][0];
  ASSERT_TRUE(pipeline["clock_ceiling_mhz"].is_number()) << summary.dump();
  const int ceiling = pipeline["clock_ceiling_mhz"];
  EXPECT_EQ(pipeline["plan_index"], static_cast<int>(frontier["plans"].size()) - 1);
  EXPECT_GT(pipeline["predicted_time_s"].get<double>(), slowest["time_s"].get<double>());
  for (int r = 0; r < 4; ++r) {
    const Json plan = Plan(*service_, "j", r);
    EXPECT_DOUBLE_EQ(plan["predicted_time_s"].get<double>(), pipeline["predicted_time_s"].get<double>());
    for (const Json& step : plan["instructions"]) EXPECT_LE(step["sm_clock_mhz"].get<int>(), ceiling) << "rank " << r;
  }
  Open(path_);
  EXPECT_EQ(Summary()["pipelines"][0]["clock_ceiling_mhz"], ceiling);
  ASSERT_TRUE(HandleClearPowerCap(*service_, "j").ok());
  EXPECT_TRUE(Summary()["pipelines"][0]["clock_ceiling_mhz"].is_null());
  EXPECT_EQ(PlanIndices(), (std::vector<int>{0, 0}));
}

// The server's own cap, shared by two running jobs: split within the cap,
// each job under its share (or its own lower cap), kept across a restart,
// lifted, and a damaged stored cap reported without stopping the server.
TEST_F(JobServicePowerTest, TheServersCapIsSharedByItsRunningJobs) {
  auto run = [&](const std::string& id, int dp) {
    ASSERT_TRUE(HandleRegisterJob(*service_, JobBody(id, dp, 2, 4)).ok());
    testing::RegisterAndProfile(*service_, id, dp, 2, 4);
    service_->WaitForOptimizer();
  };
  run("a", 2);
  run("b", 1);
  auto fastest_w = [&](const std::string& id, int dp) {
    const Json plan = (*service_->FrontierJson(id))["plans"][0];
    return dp * plan["energy_j"].get<double>() / plan["time_s"].get<double>();
  };
  const double free_w = fastest_w("a", 2) + fastest_w("b", 1);
  EXPECT_EQ(HandleSetServerPowerCap(*service_, {{"average_w", 100}, {"peak_w", 200}}).status().message(),
            "field 'peak_w': the server's cap is an average only (set a peak on each job)");
  EXPECT_EQ(HandleSetServerPowerCap(*service_, {{"average_w", -5}}).status().message(),
            "field 'average_w': expected a number in [1, 1000000000], got -5");
  EXPECT_TRUE(service_->ServerPowerCapJson()["cap"].is_null());
  Result<ApiReply> set = HandleSetServerPowerCap(*service_, {{"average_w", 0.85 * free_w}, {"window_s", 30}});
  ASSERT_TRUE(set.ok()) << set.status().ToString();
  const Json shared = set->body["power_cap"];
  EXPECT_EQ(shared["feasible"], true);
  ASSERT_EQ(shared["jobs"].size(), 2u) << shared.dump();
  EXPECT_LE(shared["shared_w"].get<double>(), 0.85 * free_w * (1 + 1e-9));
  EXPECT_GE(shared["shared_w"].get<double>(), 0.85 * free_w * (1 - 1e-9));  // all of it is used
  for (const Json& j : shared["jobs"]) {
    const Json cap = (*service_->JobSummary(j["id"]))["power_cap"];
    ASSERT_TRUE(cap.is_object()) << j.dump();
    EXPECT_EQ(cap["source"], "server");
    EXPECT_EQ(cap["window_s"], 30);
    EXPECT_DOUBLE_EQ(cap["server_share_w"].get<double>(), j["share_w"].get<double>());
    EXPECT_LE(cap["predicted_w"].get<double>(), j["share_w"].get<double>() * (1 + 1e-9)) << j.dump();
  }
  // Job b's own, lower cap holds; the watts it cannot use go to job a.
  const double b_own_w = 0.6 * fastest_w("b", 1);
  ASSERT_TRUE(HandleSetPowerCap(*service_, "b", {{"average_w", b_own_w}}).ok());
  service_->PowerCapTick();
  const Json b_cap = (*service_->JobSummary("b"))["power_cap"];
  EXPECT_EQ(b_cap["source"], "api");
  EXPECT_LE(b_cap["average_w"].get<double>(), b_own_w);
  const Json after = service_->ServerPowerCapJson();
  EXPECT_LE(after["jobs"][1]["share_w"].get<double>(), b_own_w * (1 + 1e-9));
  EXPECT_GT(after["jobs"][0]["share_w"].get<double>(), shared["jobs"][0]["share_w"].get<double>() - 1e-9);
  const std::string metrics = RenderMetrics(service_->AllSummaries(), 0, service_->ServerPowerCapJson());
  EXPECT_NE(metrics.find("perseus_server_power_cap_watts " ), std::string::npos) << metrics;
  EXPECT_NE(metrics.find("perseus_power_cap_server_share_watts{job_id=\"a\"}"), std::string::npos);
  // A restart keeps the server's cap.
  Open(path_);
  service_->PowerCapTick();
  EXPECT_NEAR(service_->ServerPowerCapJson()["cap"]["average_w"].get<double>(), 0.85 * free_w, 1e-6);
  EXPECT_EQ((*service_->JobSummary("a"))["power_cap"]["source"], "server");
  // Lifted: job a runs free, job b under its own cap.
  ASSERT_TRUE(HandleClearServerPowerCap(*service_).ok());
  EXPECT_TRUE((*service_->JobSummary("a"))["power_cap"].is_null());
  EXPECT_EQ((*service_->JobSummary("b"))["power_cap"]["source"], "api");
  EXPECT_TRUE(service_->ServerPowerCapJson()["jobs"].empty());
  // A damaged stored cap: the server starts, serves its jobs and says why there is no cap.
  ASSERT_TRUE(store_->PutSetting("power_cap", "{\"average_w\": \"lots\"}").ok());
  Open(path_);
  const Json damaged = service_->ServerPowerCapJson();
  EXPECT_TRUE(damaged["cap"].is_null());
  EXPECT_EQ(damaged["error"], "stored server power cap: field 'average_w': expected a number, got \"lots\"");
  EXPECT_EQ((*service_->JobSummary("a"))["phase"], "running");
}

TEST(PowerCapScheduleTest, ReadsCapsOverTimeAndNamesBadRows) {
  ScopedTempDir tmp;
  const std::string path = tmp.Write("caps.csv",
                                     "timestamp,average_w,peak_w\n"
                                     "2026-07-01T14:00:00Z,250000,\n"
                                     "2026-07-01T18:00:00Z,180000,200000\n"
                                     "2026-07-01T21:00:00Z,0,\n");
  Result<PowerCapSchedule> s = LoadPowerCapSchedule(path, 30);
  ASSERT_TRUE(s.ok()) << s.status().ToString();
  const int64_t t14 = *carbon::ParseIsoUtc("2026-07-01T14:00:00Z");
  EXPECT_FALSE(s->At(t14 - 1).has_value());
  EXPECT_EQ(s->At(t14)->average_w, 250000);
  EXPECT_EQ(s->At(t14 + 4 * 3600)->peak_w, 200000);
  EXPECT_EQ(s->At(t14 + 4 * 3600)->window_s, 30);
  EXPECT_FALSE(s->At(t14 + 7 * 3600).has_value());
  const std::string bad = tmp.Write("bad.csv", "timestamp,average_w\n2026-07-01T14:00:00Z,250000\n2026-07-01T13:00:00Z,1\n");
  EXPECT_EQ(LoadPowerCapSchedule(bad, 60).status().message(),
            bad + ":3: column 'timestamp': not after the row before it");
  const std::string peak = tmp.Write("peak.csv", "timestamp,average_w,peak_w\n2026-07-01T14:00:00Z,250000,10\n");
  EXPECT_EQ(LoadPowerCapSchedule(peak, 60).status().message(),
            peak + ":2: column 'peak_w': expected empty or at least average_w, up to 1e9 W");
}

TEST_F(JobServicePowerTest, AScheduleFileSetsAndLiftsTheCapOnTime) {
  RunJob(Json(nullptr));
  const double free_w = FastestPowerW();
  ASSERT_TRUE(service_->DeleteJob("j").ok());
  char text[256];
  std::snprintf(text, sizeof text, "timestamp,average_w\n%s,%.3f\n%s,0\n", carbon::FormatIsoUtc(kMinute + 3600).c_str(),
                0.5 * free_w, carbon::FormatIsoUtc(kMinute + 7200).c_str());
  const std::string path = tmp_.Write("job_caps.csv", text);
  Json body = JobBody("j", 2, 2, 4);
  body["power_cap_schedule"] = "/nonexistent/caps.csv";
  EXPECT_EQ(HandleRegisterJob(*service_, body).status().message().rfind("field 'power_cap_schedule': ", 0), 0u);
  body["power_cap"] = {{"average_w", 100}};
  EXPECT_EQ(HandleRegisterJob(*service_, body).status().message(),
            "field 'power_cap_schedule': give power_cap or power_cap_schedule, not both");
  body.erase("power_cap");
  body["power_cap_schedule"] = path;
  ASSERT_TRUE(HandleRegisterJob(*service_, body).ok());
  testing::RegisterAndProfile(*service_, "j", 2, 2, 4);
  service_->WaitForOptimizer();
  service_->PowerCapTick();  // before the first row: no cap
  EXPECT_TRUE(Summary()["power_cap"].is_null());
  EXPECT_EQ(PlanIndices(), (std::vector<int>{0, 0}));
  now_ = kMinute + 3600 + 59;  // the cap is in force; late in its window: the slower setting
  service_->PowerCapTick();
  EXPECT_EQ(Summary()["power_cap"]["source"], "schedule");
  EXPECT_GT(PlanIndices()[0], 0);
  now_ = kMinute + 7200;  // lifted
  service_->PowerCapTick();
  EXPECT_TRUE(Summary()["power_cap"].is_null());
  EXPECT_EQ(PlanIndices(), (std::vector<int>{0, 0}));
}

}  // namespace
}  // namespace perseus::server
