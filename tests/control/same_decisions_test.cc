// One scenario fed to the server, the emulator and the carbon replay: each
// makes the same decisions, because each calls the control library
// (src/control). The server runs a real job (registration, profiling through
// its windows, the real optimizer); the emulator's perseus policy and the
// replay are given that job's problem and frontier.
#include <gtest/gtest.h>

#include <cstdio>
#include <mutex>

#include "carbon/intensity_trace.h"
#include "common/temp_dir_for_test.h"
#include "control/carbon_window.h"
#include "emulator/carbon_replay.h"
#include "emulator/conditions.h"
#include "emulator/policy.h"
#include "runtime/server/api_handlers.h"
#include "runtime/server/metrics.h"
#include "runtime/server/test_util.h"

namespace perseus {
namespace {

using perseus::Json;
using server::testing::JobBody;

constexpr int64_t kDay0 = 1640995200;  // 2022-01-01T00:00:00Z
constexpr int kPipelines = 4, kStages = 3, kMicrobatches = 6;

// Seven days of a noisy diurnal intensity (a solar dip around noon UTC, from
// about 1,000 to 50 g/kWh: deep enough that a pause holding the GPUs at idle
// power pays); with `fuel_mix`, an EIA-format file whose avg_CI is its mix's
// intensity.
std::string WriteTrace(const ScopedTempDir& dir, bool fuel_mix) {
  std::string text = fuel_mix ? "timestamp,WND,SUN,WAT,OIL,NG,COL,NUC,OTH,avg_CI\n" : "timestamp,gco2_per_kwh\n";
  for (int h = 0; h < 7 * 24; ++h) {
    char ts[32];
    std::snprintf(ts, sizeof ts, "2022-01-%02dT%02d:00:00Z", h / 24 + 1, h % 24);
    const int hour = h % 24;
    const bool sunny = hour >= 10 && hour < 16;
    if (!fuel_mix) {
      text += std::string(ts) + "," + std::to_string((sunny ? 50 : 950) + (h * 37) % 50) + "\n";
      continue;
    }
    const std::vector<double> mw = {200.0 + (h * 53) % 300, sunny ? 3000.0 : 0.0, 100, 5, 900.0 + (h * 37) % 200,
                                    sunny ? 100.0 : 600.0, 500, 50};
    text += ts;
    for (double v : mw) text += "," + std::to_string(v);
    text += "," + std::to_string(carbon::MixIntensity(mw, carbon::EiaLifecycleFactors())) + "\n";
  }
  return dir.Write(fuel_mix ? "eia.csv" : "trace.csv", text);
}

class SameDecisionsTest : public ::testing::Test {
 protected:
  // A server whose optimizer is the real one; it keeps what it solved.
  void StartJob(const Json& carbon) {
    Result<std::unique_ptr<server::Store>> store = server::Store::Open(":memory:", false);
    ASSERT_TRUE(store.ok());
    store_ = std::move(*store);
    server::CarbonOptions options;
    options.clock = [this] { return now_; };
    options.background = false;
    auto solver = [this](const Problem& problem, const FrontierOptions& o) -> Result<Frontier> {
      Result<Frontier> f = SolveFrontier(problem, o);
      std::lock_guard<std::mutex> lock(mu_);
      problem_ = problem;
      if (f.ok()) frontier_ = *f;
      return f;
    };
    Result<std::unique_ptr<server::JobService>> service = server::JobService::Create(store_.get(), nullptr, solver, options);
    ASSERT_TRUE(service.ok()) << service.status().ToString();
    service_ = std::move(*service);
    Json body = JobBody("j", kPipelines, kStages, kMicrobatches);
    if (!carbon.is_null()) body["carbon"] = carbon;
    ASSERT_TRUE(HandleRegisterJob(*service_, body).ok());
    server::testing::RegisterAndProfile(*service_, "j", kPipelines, kStages, kMicrobatches);
    service_->WaitForOptimizer();
    ASSERT_EQ((*service_->JobSummary("j"))["phase"], "running");
    std::lock_guard<std::mutex> lock(mu_);
    ASSERT_GT(frontier_.plans.size(), 3u);
  }

  void CarbonEveryHour(bool told_length, bool fuel_mix, const std::string& pause = "never");
  std::vector<int> ServerPlans() {
    std::vector<int> out;
    const Json summary = *service_->JobSummary("j");
    for (const Json& p : summary["pipelines"]) out.push_back(p["plan_index"]);
    return out;
  }

  int PlanIndexOf(const PlanChoice& choice) {
    for (size_t i = 0; i < frontier_.plans.size(); ++i) {
      if (frontier_.plans[i].choice == choice) return static_cast<int>(i);
    }
    return -1;
  }

  int64_t now_ = kDay0;
  std::mutex mu_;
  Problem problem_;
  Frontier frontier_;
  std::unique_ptr<server::Store> store_;
  std::unique_ptr<server::JobService> service_;
};

TEST_F(SameDecisionsTest, StragglersServerAndEmulatorAssignTheSamePlans) {
  StartJob(nullptr);
  std::unique_ptr<emulator::Policy> policy = emulator::MakePerseusPolicy(problem_, frontier_);
  // (pipeline, slowdown) stragglers, one scenario after another.
  const std::vector<std::vector<std::pair<int, double>>> scenarios = {
      {}, {{1, 1.1}}, {{0, 1.3}}, {{2, 1.05}, {3, 1.2}}, {{0, 1.02}}, {{3, 4.0}}, {{0, 1.1}, {1, 1.1}, {2, 1.1}}, {}};
  int slowed = 0;
  for (size_t k = 0; k < scenarios.size(); ++k) {
    for (int p = 0; p < kPipelines; ++p) (void)service_->ClearStraggler("j", p);
    std::vector<SlowPipelineEvent> events;
    for (const auto& [pipeline, slowdown] : scenarios[k]) {
      ASSERT_TRUE(HandleDeclareStraggler(*service_, "j", {{"pipeline", pipeline}, {"slowdown", slowdown}}).ok());
      events.push_back({slowdown, pipeline, pipeline, 0, -1});
    }
    const emulator::JobConditions conditions = emulator::ConditionsAt(kPipelines, events, {}, 0);
    const emulator::Decision decision = policy->Decide(conditions);
    std::vector<int> emulated;
    for (int p = 0; p < kPipelines; ++p) emulated.push_back(PlanIndexOf(decision.plans[conditions.class_of[p]]));
    const std::vector<int> served = ServerPlans();
    EXPECT_EQ(served, emulated) << "scenario " << k;
    for (int plan : served) slowed += plan > 0;
  }
  EXPECT_GT(slowed, 8);  // the scenarios do move plans
}

// The server (trace source, hourly decisions) and the replay make the same
// decision and explanation every hour; `told_length`: both know the job's
// length (the budget becomes a deadline: the spec's carbon.job_hours);
// `fuel_mix`: the trace is an EIA file and both forecast with its fuel mix.
// `pause` ("never", "hold", "release"; with told_length): the job may pause.
// The job starts two days into the trace: the server's first decision seeds
// its history from its trace source, the replay's run from the trace before it.
void SameDecisionsTest::CarbonEveryHour(bool told_length, bool fuel_mix, const std::string& pause) {
  constexpr int kStartHour = 48;
  now_ = kDay0 + kStartHour * 3600;
  ScopedTempDir tmp;
  const std::string trace_path = WriteTrace(tmp, fuel_mix);
  const double budget = pause == "never" ? 0.05 : 0.3;
  Json carbon = {{"source", "trace"}, {"trace_path", trace_path}, {"slowdown_budget", budget}};
  if (told_length) carbon["job_hours"] = 4 * 24;
  if (pause != "never") carbon["pause"] = pause;
  if (pause == "release") {  // each resume costs 20 minutes at 50 W per GPU
    carbon["restart_s"] = 1200;
    carbon["restart_power_w"] = 50;
  }
  StartJob(carbon);
  Result<carbon::IntensityTrace> trace = carbon::LoadTraceFile(trace_path);
  ASSERT_TRUE(trace.ok()) << trace.status().ToString();
  carbon::KnobSet knobs = control::FrontierKnobsFromNoSlowdown(frontier_);
  knobs.pause_power_w = control::PausePowerW(problem_, pause == "hold");
  knobs.restart_power_w = pause == "release" ? control::RestartPowerW(problem_, 50.0) : 0;
  carbon::ReplayConfig config;
  config.slowdown_budget = budget;
  config.work_h = 4 * 24;
  config.told_job_length = told_length;
  config.may_pause = pause != "never";
  config.restart_h = pause == "release" ? 1200.0 / 3600 : 0;
  // No look-ahead on either side: the server's trace source, like the replay, reads the hour before.
  std::vector<std::string> replay_log;
  const carbon::ReplayResult replay =
      carbon::ReplayJob(*trace, kStartHour, knobs, config, [&](const std::string& line) { replay_log.push_back(line); });
  ASSERT_GE(replay.windows.size(), 4u * 24);
  if (told_length && pause == "never") {  // knowing the length changes decisions: the test exercises the deadline rule
    config.told_job_length = false;
    const carbon::ReplayResult rolling = carbon::ReplayJob(*trace, kStartHour, knobs, config, nullptr);
    int differ = 0;
    for (int h = 0; h < 4 * 24; ++h) differ += rolling.windows[h].option != replay.windows[h].option;
    EXPECT_GT(differ, 0);
  }
  int changes = 0, paused = 0, replayed = 0;
  for (int h = 0; h < 4 * 24 && h < static_cast<int>(replay.windows.size()); ++h, now_ += 3600) {
    Result<Json> r = service_->EvaluateCarbon("j");
    ASSERT_TRUE(r.ok()) << r.status().ToString();
    if (h == 0) {  // seeded: the trace's hours before, not one reading
      EXPECT_EQ((*r)["history_hours"], kStartHour);
    }
    ASSERT_EQ((*r)["paused"].get<bool>(), replay.windows[h].paused) << "hour " << h;
    if (replay.windows[h].paused) {  // the ranks are told to pause; the plan they resume with is kept
      ++paused;
      const Json plan = Json::parse(*service_->RankPlan("j", 0, -1));
      EXPECT_EQ(plan["kind"], "pause") << "hour " << h;
      EXPECT_EQ(plan["pause"]["release"].get<bool>(), pause == "release");
      EXPECT_EQ((*r)["explanation"].get<std::string>(), replay_log[h]);
      continue;
    }
    replayed = knobs.options[replay.windows[h].option].plan_index;
    ASSERT_EQ((*r)["plan_index"].get<int>(), replayed) << "hour " << h;
    EXPECT_EQ(Json::parse(*service_->RankPlan("j", 0, -1))["kind"], "frontier") << "hour " << h;
    EXPECT_EQ((*r)["explanation"].get<std::string>(), replay_log[h]);
    EXPECT_EQ((*r)["forecast_g_per_kwh"].get<double>(), replay.windows[h].forecast_g_per_kwh) << "hour " << h;
    EXPECT_EQ((*r)["forecast_with_fuel_mix"].get<bool>(), fuel_mix) << "hour " << h;
    EXPECT_EQ(ServerPlans(), std::vector<int>(kPipelines, replayed)) << "hour " << h;
    changes += h > 0 && replay.windows[h].option != replay.windows[h - 1].option;
  }
  EXPECT_GT(changes, 4);  // the intensity does move the decision
  if (pause != "never") {
    EXPECT_GT(paused, 0);  // and pauses the job
  }
  if (pause == "release") {  // and charges the restarts alike
    const Json carbon_state = *service_->CarbonJson("j");
    double replay_work_h = 0;
    int restarts = 0;
    for (int h = 0; h < 4 * 24 - 1; ++h) {
      replay_work_h += replay.windows[h].work_h;
      restarts += replay.windows[h].restart_h > 0;
    }
    EXPECT_GT(restarts, 0);
    EXPECT_NEAR(carbon_state["work_windows"].get<double>(), replay_work_h, 1e-6);
  }
  const std::string metrics = server::RenderMetrics(service_->AllSummaries(), 0);
  EXPECT_NE(metrics.find(std::string("perseus_carbon_forecast_uses_fuel_mix{job_id=\"j\"} ") + (fuel_mix ? "1" : "0")),
            std::string::npos);
}

TEST_F(SameDecisionsTest, CarbonServerAndReplayChooseTheSamePlanEveryHour) { CarbonEveryHour(false, false); }

TEST_F(SameDecisionsTest, CarbonWithAKnownJobLengthServerAndReplayChooseTheSamePlanEveryHour) {
  CarbonEveryHour(true, false);
}

TEST_F(SameDecisionsTest, CarbonWithTheFuelMixServerAndReplayForecastAndChooseTheSameEveryHour) {
  CarbonEveryHour(false, true);
}

TEST_F(SameDecisionsTest, CarbonPausingHoldingTheGpusServerAndReplayPauseInTheSameHours) {
  CarbonEveryHour(true, false, "hold");
}

TEST_F(SameDecisionsTest, CarbonPausingReleasingTheGpusServerAndReplayPauseInTheSameHours) {
  CarbonEveryHour(true, false, "release");
}

}  // namespace
}  // namespace perseus
