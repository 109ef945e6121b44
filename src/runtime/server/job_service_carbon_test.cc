// The carbon policy in the server: plan switching, the budget, stragglers on
// top, config validation, restart, and a slow intensity source.
#include <gtest/gtest.h>
#include <httplib.h>

#include <condition_variable>
#include <cstdio>
#include <future>
#include <mutex>
#include <thread>

#include "common/temp_dir_for_test.h"
#include "runtime/server/job_service.h"
#include "runtime/server/metrics.h"
#include "runtime/server/test_util.h"

namespace perseus::server {
namespace {

using testing::JobBody;
using testing::Plan;

constexpr int64_t kDay0 = 1640995200;  // 2022-01-01T00:00:00Z

// Four days: 100 gCO2/kWh from 00:00 to 11:59 UTC, 700 from 12:00 to 23:59.
std::string WriteDiurnalTrace(const ScopedTempDir& dir) {
  std::string text = "timestamp,gco2_per_kwh\n";
  for (int d = 0; d < 4; ++d) {
    for (int h = 0; h < 24; ++h) {
      char ts[32];
      std::snprintf(ts, sizeof ts, "2022-01-%02dT%02d:00:00Z", d + 1, h);
      text += std::string(ts) + "," + (h < 12 ? "100" : "700") + "\n";
    }
  }
  return dir.Write("trace.csv", text);
}

bool IsHigh(int64_t now) { return (now - kDay0) % 86400 >= 12 * 3600; }

class JobServiceCarbonTest : public ::testing::Test {
 protected:
  void Open(const std::string& path) { testing::OpenService(path, [this] { return now_; }, &store_, &service_); }
  void SetUp() override { Open(":memory:"); }

  // Registers, profiles and optimises a dp x pp job with `carbon`.
  void StartJob(int dp, int pp, const Json& carbon) {
    Json body = JobBody("j", dp, pp, 4);
    body["carbon"] = carbon;
    Result<ApiReply> reply = HandleRegisterJob(*service_, body);
    ASSERT_TRUE(reply.ok()) << reply.status().ToString();
    testing::RegisterAndProfile(*service_, "j", dp, pp, 4);
    service_->WaitForOptimizer();
    ASSERT_EQ((*service_->JobSummary("j"))["phase"], "running");
  }
  std::vector<double> PlanTimes() {
    std::vector<double> out;
    const Json frontier = *service_->FrontierJson("j");
    for (const Json& p : frontier["plans"]) out.push_back(p["time_s"].get<double>());
    return out;
  }
  std::string RegisterError(const Json& carbon) {
    Json body = JobBody("bad", 1, 2, 4);
    body["carbon"] = carbon;
    Result<ApiReply> reply = HandleRegisterJob(*service_, body);
    if (reply.ok()) return "accepted";
    EXPECT_EQ(reply.status().code(), Status::Code::kInvalidArgument) << reply.status().ToString();
    return reply.status().message();
  }

  // The job's control state as the store holds it.
  ControlState StoredState(const std::string& id) {
    Result<std::vector<StoredJob>> jobs = store_->LoadAll();
    EXPECT_TRUE(jobs.ok());
    for (const StoredJob& job : *jobs) {
      if (job.id != id) continue;
      Result<ControlState> state = ControlStateFromJson(Json::parse(job.state_json));
      EXPECT_TRUE(state.ok()) << state.status().ToString();
      return *state;
    }
    ADD_FAILURE() << "no stored job " << id;
    return {};
  }

  int64_t now_ = kDay0;
  ScopedTempDir tmp_;  // before the store and service: removed after they close
  std::unique_ptr<Store> store_;
  std::unique_ptr<JobService> service_;
};

TEST_F(JobServiceCarbonTest, SwitchesToSlowerPlansWhenIntensityRisesWithinTheBudget) {
  const double budget = 0.05;
  StartJob(2, 2, {{"source", "trace"}, {"trace_path", WriteDiurnalTrace(tmp_)}, {"slowdown_budget", budget}});
  const std::vector<double> times = PlanTimes();
  ASSERT_GT(times.size(), 1u);
  Json carbon = *service_->CarbonJson("j");
  EXPECT_EQ(carbon["evaluated"], false);
  EXPECT_TRUE(carbon["plan_index"].is_null());

  double elapsed = 0, work = 0, high_time = 0, low_time = 0;
  int high = 0, low = 0, prev = -1;
  bool switched_up_at_rise = false;
  int64_t version = Plan(*service_, "j", 0)["version"];
  for (int w = 0; w < 72; ++w, now_ += 3600) {
    if (prev >= 0) {  // the previous window ran plan `prev`
      elapsed += 1;
      work += times[0] / times[prev];
      EXPECT_LE(elapsed / work - 1, budget + 1e-9) << "window " << w;
    }
    Result<Json> r = service_->EvaluateCarbon("j");
    ASSERT_TRUE(r.ok()) << r.status().ToString();
    const int plan = (*r)["plan_index"];
    // No look-ahead: the hour before's value (the trace's first hour reads its own, marked stale).
    EXPECT_EQ((*r)["intensity_g_per_kwh"].get<double>(), w > 0 && IsHigh(now_ - 3600) ? 700 : 100);
    EXPECT_EQ((*r)["stale"].get<bool>(), w == 0);
    EXPECT_FALSE((*r)["explanation"].get<std::string>().empty());
    // Every pipeline runs the carbon plan, and ranks see a new version when it changes.
    Json rank_plan = Plan(*service_, "j", 0);
    EXPECT_EQ(rank_plan["plan_index"], plan);
    EXPECT_EQ(Plan(*service_, "j", 3)["plan_index"], plan);
    if (prev >= 0 && plan != prev) {
      EXPECT_GT(rank_plan["version"].get<int64_t>(), version);
    }
    version = rank_plan["version"];
    if (w >= 24) {
      (IsHigh(now_) ? high_time : low_time) += times[plan];
      ++(IsHigh(now_) ? high : low);
      if ((now_ - kDay0) % 86400 == 12 * 3600 && plan > prev) switched_up_at_rise = true;
    }
    prev = plan;
  }
  // Once a day of history shows the pattern, the high-intensity hours run slower plans.
  EXPECT_GT(high_time / high, low_time / low);
  EXPECT_TRUE(switched_up_at_rise);
  carbon = *service_->CarbonJson("j");
  EXPECT_LE(carbon["slowdown_so_far"].get<double>(), budget + 1e-9);
  EXPECT_GT(carbon["slowdown_so_far"].get<double>(), 0);
  EXPECT_EQ(carbon["forecast_g_per_kwh"].is_number(), true);
  const std::string metrics = RenderMetrics(service_->AllSummaries(), 0);
  EXPECT_NE(metrics.find("perseus_carbon_intensity_grams_per_kilowatt_hour{job_id=\"j\"} "), std::string::npos) << metrics;
  EXPECT_NE(metrics.find("perseus_carbon_forecast_grams_per_kilowatt_hour{job_id=\"j\"} "), std::string::npos);
  EXPECT_NE(metrics.find("perseus_carbon_plan_index{job_id=\"j\"} "), std::string::npos);
  EXPECT_NE(metrics.find("perseus_carbon_forecast_uses_fuel_mix{job_id=\"j\"} 0"), std::string::npos);  // a CSV trace
}

TEST_F(JobServiceCarbonTest, ZeroBudgetKeepsTheFastestPlan) {
  StartJob(1, 2, {{"source", "trace"}, {"trace_path", WriteDiurnalTrace(tmp_)}, {"slowdown_budget", 0}});
  for (int w = 0; w < 48; ++w, now_ += 3600) {
    Result<Json> r = service_->EvaluateCarbon("j");
    ASSERT_TRUE(r.ok());
    EXPECT_EQ((*r)["plan_index"], 0) << "window " << w;
  }
}

TEST_F(JobServiceCarbonTest, StragglerHandlingAppliesOnTop) {
  StartJob(3, 2, {{"source", "fixed"}, {"value_g_per_kwh", 500}, {"slowdown_budget", 0.1}});
  const std::vector<double> times = PlanTimes();
  ASSERT_TRUE(service_->EvaluateCarbon("j").ok());
  const int carbon_plan = (*service_->CarbonJson("j"))["plan_index"];
  ASSERT_GT(carbon_plan, 0);
  for (const double slowdown : {1.01, 1.5}) {
    ASSERT_TRUE(HandleDeclareStraggler(*service_, "j", {{"pipeline", 1}, {"slowdown", slowdown}}).ok());
    // Without carbon, non-stragglers would run PlanForTime(min(s T0, T*)).
    const double target = std::min(slowdown * times[0], times.back()) * (1 + 1e-9);
    int straggler_plan = 0;
    for (size_t i = 0; i < times.size(); ++i) {
      if (times[i] <= target) straggler_plan = static_cast<int>(i);
    }
    const int expected = std::max(carbon_plan, straggler_plan);
    EXPECT_EQ(Plan(*service_, "j", 0)["plan_index"], expected) << "slowdown " << slowdown;  // pipeline 0
    EXPECT_EQ(Plan(*service_, "j", 4)["plan_index"], expected) << "slowdown " << slowdown;  // pipeline 2
    EXPECT_EQ(Plan(*service_, "j", 2)["plan_index"], carbon_plan) << "slowdown " << slowdown;  // the straggler
    if (slowdown > 1.4) {
      EXPECT_GT(expected, carbon_plan);
    } else {
      EXPECT_EQ(expected, carbon_plan);
    }
    // A new carbon decision keeps the straggler response.
    now_ += 3600;
    ASSERT_TRUE(service_->EvaluateCarbon("j").ok());
    const int c = (*service_->CarbonJson("j"))["plan_index"];
    EXPECT_EQ(Plan(*service_, "j", 0)["plan_index"], std::max(c, straggler_plan));
    EXPECT_EQ(Plan(*service_, "j", 2)["plan_index"], c);
  }
  ASSERT_TRUE(service_->ClearStraggler("j", 1).ok());
  const int c = (*service_->CarbonJson("j"))["plan_index"];
  for (int r : {0, 2, 4}) EXPECT_EQ(Plan(*service_, "j", r)["plan_index"], c);
}

TEST_F(JobServiceCarbonTest, BadConfigsAreRejectedNamingTheField) {
  EXPECT_EQ(RegisterError(5), "field 'carbon': expected an object, got 5");
  EXPECT_EQ(RegisterError({{"value_g_per_kwh", 5}}), "field 'carbon.source': missing");
  EXPECT_EQ(RegisterError({{"source", "wind"}}),
            "field 'carbon.source': expected 'fixed', 'trace' or 'electricitymaps', got \"wind\"");
  EXPECT_EQ(RegisterError({{"source", "fixed"}}), "field 'carbon.value_g_per_kwh': missing");
  EXPECT_EQ(RegisterError({{"source", "fixed"}, {"value_g_per_kwh", -1}}).rfind("field 'carbon.value_g_per_kwh':", 0), 0u);
  EXPECT_EQ(RegisterError({{"source", "fixed"}, {"value_g_per_kwh", 1}, {"slowdown_budget", -0.1}})
                .rfind("field 'carbon.slowdown_budget':", 0),
            0u);
  EXPECT_EQ(RegisterError({{"source", "fixed"}, {"value_g_per_kwh", 1}, {"window_s", 0}}).rfind("field 'carbon.window_s':", 0),
            0u);
  EXPECT_EQ(RegisterError({{"source", "fixed"}, {"value_g_per_kwh", 1}, {"budget", 0.1}}),
            "field 'carbon.budget': unknown field");
  EXPECT_EQ(RegisterError({{"source", "trace"}}), "field 'carbon.trace_path': missing");
  EXPECT_EQ(RegisterError({{"source", "trace"}, {"trace_path", "/nonexistent/trace.csv"}}).rfind("field 'carbon.trace_path':", 0),
            0u);
  EXPECT_EQ(RegisterError({{"source", "electricitymaps"}}), "field 'carbon.zone': missing");
  // The zone goes into the request's query string: "FR&zone=DE" asked for another zone.
  EXPECT_EQ(RegisterError({{"source", "electricitymaps"}, {"zone", "FR&zone=DE"}}),
            "field 'carbon.zone': expected a zone key such as \"US-CAL-CISO\" (1 to 64 letters, digits, '-' or '_'), "
            "got \"FR&zone=DE\"");
  EXPECT_EQ(RegisterError({{"source", "electricitymaps"}, {"zone", "DE"}, {"base_url", "ftp://x"}}),
            "field 'carbon.base_url': expected http://host[:port] or https://host[:port], got \"ftp://x\"");
  EXPECT_EQ(RegisterError({{"source", "fixed"}, {"value_g_per_kwh", 1}, {"pause", "hold"}}),
            "field 'carbon.pause': pausing needs the job's length: set carbon.job_hours (deadline mode)");
  EXPECT_EQ(RegisterError({{"source", "fixed"}, {"value_g_per_kwh", 1}, {"job_hours", 10}, {"pause", "sleep"}}),
            "field 'carbon.pause': expected 'never', 'hold' or 'release', got \"sleep\"");
  EXPECT_EQ(RegisterError({{"source", "fixed"}, {"value_g_per_kwh", 1}, {"job_hours", 10}, {"pause", true}}),
            "field 'carbon.pause': expected a string, got true");
  for (const std::string field : {"restart_s", "restart_power_w"}) {  // a release pause's restart only
    const Json release = {{"source", "fixed"}, {"value_g_per_kwh", 1}, {"job_hours", 10}, {"pause", "release"}};
    Json hold = release;
    hold["pause"] = "hold";
    hold[field] = 60;
    EXPECT_EQ(RegisterError(hold), "field 'carbon." + field +
                                       "': a restart follows only a pause that releases the GPUs: set carbon.pause "
                                       "to 'release'");
    for (const Json& bad : {Json(-5), Json("idle")}) {
      Json config = release;
      config[field] = bad;
      EXPECT_EQ(RegisterError(config).rfind("field 'carbon." + field + "':", 0), 0u) << bad;
    }
  }
  EXPECT_TRUE(service_->AllSummaries().empty());
  // A release pause's restart: 10 minutes unless told, at the blocking power
  // unless told (the config shows only what was given).
  Json release = JobBody("release", 1, 2, 4);
  release["carbon"] = {{"source", "fixed"}, {"value_g_per_kwh", 1}, {"job_hours", 10}, {"pause", "release"}};
  ASSERT_TRUE(HandleRegisterJob(*service_, release).ok());
  EXPECT_EQ((*service_->CarbonJson("release"))["config"]["restart_s"], 600);
  EXPECT_FALSE((*service_->CarbonJson("release"))["config"].contains("restart_power_w"));
  ASSERT_TRUE(service_->DeleteJob("release").ok());
  release["carbon"]["restart_power_w"] = 45.5;
  ASSERT_TRUE(HandleRegisterJob(*service_, release).ok());
  EXPECT_EQ((*service_->CarbonJson("release"))["config"]["restart_power_w"], 45.5);
  ASSERT_TRUE(service_->DeleteJob("release").ok());

  // A valid config; the token is stored but never shown.
  Json body = JobBody("em", 1, 2, 4);
  body["carbon"] = {{"source", "electricitymaps"}, {"zone", "DE"}, {"token", "secret"},
                    {"base_url", "http://127.0.0.1:1"}};
  ASSERT_EQ(HandleRegisterJob(*service_, body)->created, true);
  Json summary = *service_->JobSummary("em");
  EXPECT_EQ(summary["spec"]["carbon"]["token"], "***");
  EXPECT_EQ(summary.dump().find("secret"), std::string::npos);
  EXPECT_EQ((*service_->CarbonJson("em"))["config"]["token"], "***");
  // Not running yet; a job without carbon has no carbon resource.
  EXPECT_EQ(service_->EvaluateCarbon("em").status().code(), Status::Code::kUnavailable);
  ASSERT_TRUE(HandleRegisterJob(*service_, JobBody("plain", 1, 2, 4)).ok());
  EXPECT_EQ(service_->CarbonJson("plain").status().code(), Status::Code::kNotFound);
  EXPECT_EQ(service_->EvaluateCarbon("plain").status().code(), Status::Code::kUnavailable);
  EXPECT_EQ(service_->CarbonJson("nope").status().code(), Status::Code::kNotFound);
}

// A job may make the server read only files under its --job-files folders
// and fetch only the default carbon URL (a review, 2026-11-28: any caller who
// could register a job could have the server read any file it can).
TEST_F(JobServiceCarbonTest, TheServerReadsOnlyWhatItsPolicyAllows) {
  ScopedTempDir other;
  const std::string trace = WriteDiurnalTrace(tmp_), outside = WriteDiurnalTrace(other);
  const std::string caps = other.Write("caps.csv", "timestamp,average_w\n2022-01-01T00:00:00Z,1000\n");
  CarbonOptions clock;
  clock.clock = [this] { return now_; };
  clock.background = false;
  ServiceLimits limits;
  limits.job_resources = {*RealFolders({tmp_.path()}), false};
  service_.reset();
  service_ = JobService::Create(store_.get(), nullptr, testing::UniformPlansSolver, clock, limits).value();
  const std::string only = "this server reads the files a job names only under " + (*limits.job_resources.file_dirs)[0] +
                           " (--job-files)";
  EXPECT_EQ(RegisterError({{"source", "trace"}, {"trace_path", outside}}), "field 'carbon.trace_path': " + only);
  EXPECT_EQ(RegisterError({{"source", "electricitymaps"}, {"zone", "DE"}, {"base_url", "http://127.0.0.1:1"}})
                .rfind("field 'carbon.base_url': only a server with a token", 0),
            0u);
  Json body = JobBody("capped", 1, 2, 4);
  body["power_cap_schedule"] = caps;
  EXPECT_EQ(HandleRegisterJob(*service_, body).status().message(), "field 'power_cap_schedule': " + only);
  EXPECT_TRUE(service_->AllSummaries().empty());
  // What the policy allows.
  EXPECT_EQ(RegisterError({{"source", "electricitymaps"}, {"zone", "DE"}}), "accepted");
  ASSERT_TRUE(service_->DeleteJob("bad").ok());
  StartJob(1, 2, {{"source", "trace"}, {"trace_path", trace}});
  // The default (a server with a token) reads any file.
  service_.reset();
  service_ = JobService::Create(store_.get(), nullptr, testing::UniformPlansSolver, clock, ServiceLimits{}).value();
  EXPECT_EQ(RegisterError({{"source", "trace"}, {"trace_path", outside}}), "accepted");
}

TEST_F(JobServiceCarbonTest, TicksOncePerWindowWithTheInjectedClock) {
  StartJob(1, 2, {{"source", "fixed"}, {"value_g_per_kwh", 300}, {"window_s", 600}});
  service_->CarbonTick();
  Json c = *service_->CarbonJson("j");
  ASSERT_EQ(c["evaluated"], true);
  EXPECT_EQ(c["last_eval_unix_s"], now_);
  EXPECT_EQ(c["next_eval_unix_s"], now_ + 600);
  now_ += 599;
  service_->CarbonTick();
  EXPECT_EQ((*service_->CarbonJson("j"))["last_eval_unix_s"], now_ - 599);
  now_ += 1;
  service_->CarbonTick();
  EXPECT_EQ((*service_->CarbonJson("j"))["last_eval_unix_s"], now_);
}

TEST_F(JobServiceCarbonTest, ASlowIntensitySourceDoesNotBlockTheJob) {
  // An ElectricityMaps stand-in that answers only when the test lets it.
  std::mutex mu;
  std::condition_variable cv;
  bool entered = false, release = false;
  httplib::Server em;
  em.Get("/v3/carbon-intensity/latest", [&](const httplib::Request&, httplib::Response& res) {
    std::unique_lock<std::mutex> lock(mu);
    entered = true;
    cv.notify_all();
    cv.wait_for(lock, std::chrono::seconds(20), [&] { return release; });
    res.set_content(R"({"zone":"DE","carbonIntensity":321,"datetime":"2022-01-01T00:00:00.000Z"})", "application/json");
  });
  const int port = em.bind_to_any_port("127.0.0.1");
  std::thread server([&] { em.listen_after_bind(); });
  while (!em.is_running()) std::this_thread::sleep_for(std::chrono::milliseconds(1));

  StartJob(1, 2, {{"source", "electricitymaps"}, {"zone", "DE"}, {"base_url", "http://127.0.0.1:" + std::to_string(port)}});
  auto decision = std::async(std::launch::async, [&] { return service_->EvaluateCarbon("j"); });
  {
    std::unique_lock<std::mutex> lock(mu);
    ASSERT_TRUE(cv.wait_for(lock, std::chrono::seconds(20), [&] { return entered; }));
  }
  // The request is in flight; the job answers (it would wait for the read
  // if the decision held the job's lock) and shows no decision yet.
  Json summary = *service_->JobSummary("j");
  EXPECT_EQ(summary["carbon"]["evaluated"], false);
  {
    std::lock_guard<std::mutex> lock(mu);
    release = true;
  }
  cv.notify_all();
  Result<Json> reply = decision.get();
  ASSERT_TRUE(reply.ok()) << reply.status().ToString();
  EXPECT_EQ((*reply)["intensity_g_per_kwh"], 321);
  EXPECT_EQ((*reply)["stale"], false);
  em.stop();
  server.join();
}

TEST_F(JobServiceCarbonTest, HistoryStaysHourlyForAnyWindow) {
  // Quarter-hour windows: four decisions per hour share one history entry,
  // and the daily pattern still drives the plan.
  const double budget = 0.05;
  StartJob(1, 2, {{"source", "trace"}, {"trace_path", WriteDiurnalTrace(tmp_)}, {"slowdown_budget", budget},
                  {"window_s", 900}});
  const std::vector<double> times = PlanTimes();
  double high_time = 0, low_time = 0;
  int high = 0, low = 0;
  for (int w = 0; w < 3 * 96; ++w, now_ += 900) {
    Result<Json> r = service_->EvaluateCarbon("j");
    ASSERT_TRUE(r.ok()) << r.status().ToString();
    if (w < 96) continue;
    (IsHigh(now_) ? high_time : low_time) += times[(*r)["plan_index"].get<int>()];
    ++(IsHigh(now_) ? high : low);
  }
  const CarbonState stored = StoredState("j").carbon;
  EXPECT_EQ(stored.history.size(), 3u * 24 - 1);  // the last decisions read hour 70: hour 71 is not over
  EXPECT_EQ(stored.history[13], 700);
  EXPECT_EQ(stored.history[11], 100);
  EXPECT_GT(high_time / high, low_time / low);
  EXPECT_LE((*service_->CarbonJson("j"))["slowdown_so_far"].get<double>(), budget + 1e-9);
}

TEST(CarbonHistory, LongWindowsAndGapsRepeatTheLastReadingHourly) {
  ControlState state;
  state.carbon.history = {100, 200};
  Json j = ControlStateToJson(state);
  // A database written before hourly history: "last_window" was the hour.
  j["carbon"].erase("history_last_hour");
  j["carbon"]["last_window"] = 455;
  j["carbon"]["history_first_hour"] = 22;  // stored until 2026-11; ignored
  Result<ControlState> legacy = ControlStateFromJson(j);
  ASSERT_TRUE(legacy.ok()) << legacy.status().ToString();
  EXPECT_EQ(legacy->carbon.history_last_hour, 455);
  // Written before the control library: no option time, resolved from plan_index at the next decision.
  Json older = ControlStateToJson(state);
  older["carbon"].erase("option");
  older["carbon"].erase("option_time_s");
  Result<ControlState> before = ControlStateFromJson(older);
  ASSERT_TRUE(before.ok()) << before.status().ToString();
  EXPECT_LT(before->carbon.option_time_s, 0);
}

// An EIA-format trace: the server forecasts with its fuel mix; when a fuel
// column cannot be used the trace still runs, on intensity alone, and the
// server's log says why.
TEST_F(JobServiceCarbonTest, AnEiaTraceForecastsWithItsFuelMixAndLogsWhyWhenItCannot) {
  const std::string header = "timestamp,WND,SUN,WAT,OIL,NG,COL,NUC,OTH,avg_CI\n";
  std::string good = header, bad = header;
  for (int h = 0; h < 48; ++h) {
    char row[160];
    std::snprintf(row, sizeof row, "2022-01-%02d %02d:00:00+00:00,100,%d,0,0,%d,0,0,0,", h / 24 + 1, h % 24,
                  h % 24 < 12 ? 300 : 0, h % 24 < 12 ? 100 : 400);
    const std::string ci = h % 24 < 12 ? "132.25" : "392.2";
    good += row + ci + "\n";
    bad += row + (h == 5 ? std::string("") : ci) + "\n";  // one empty avg_CI cell
  }
  bad.replace(bad.find(",0,0,100,0,0,0,"), 15, ",0,0,-1,0,0,0,");  // a negative gas cell: the mix is dropped

  std::FILE* log_file = std::tmpfile();
  ASSERT_NE(log_file, nullptr);
  JsonLog log(log_file);
  testing::OpenService(":memory:", [this] { return now_; }, &store_, &service_, &log);
  const Json carbon = {{"source", "trace"}, {"trace_path", tmp_.Write("good.csv", good)}, {"slowdown_budget", 0.1}};
  StartJob(1, 2, carbon);
  tmp_.Write("good.csv", "not a trace\n");  // registration read the file, once: the job keeps what it read
  Json again = JobBody("j", 1, 2, 4);
  again["carbon"] = carbon;
  Result<ApiReply> repeated = HandleRegisterJob(*service_, again);  // the known job: nothing is read
  ASSERT_TRUE(repeated.ok()) << repeated.status().ToString();
  now_ += 3 * 3600;
  Result<Json> decided = service_->EvaluateCarbon("j");
  ASSERT_TRUE(decided.ok()) << decided.status().ToString();
  EXPECT_TRUE((*decided)["forecast_with_fuel_mix"].get<bool>());
  EXPECT_EQ(StoredState("j").carbon.history_mix_mw.size(), 8 * StoredState("j").carbon.history.size());

  testing::OpenService(":memory:", [this] { return now_; }, &store_, &service_, &log);
  const std::string bad_path = tmp_.Write("bad.csv", bad);
  StartJob(1, 2, {{"source", "trace"}, {"trace_path", bad_path}, {"slowdown_budget", 0.1}});
  decided = service_->EvaluateCarbon("j");
  ASSERT_TRUE(decided.ok()) << decided.status().ToString();
  EXPECT_FALSE((*decided)["forecast_with_fuel_mix"].get<bool>());
  service_.reset();  // it holds the log, which this scope owns
  std::fflush(log_file);
  std::rewind(log_file);
  std::string logged;
  char buf[4096];
  for (size_t n; (n = std::fread(buf, 1, sizeof buf, log_file)) > 0;) logged.append(buf, n);
  std::fclose(log_file);
  EXPECT_NE(logged.find("fuel mix not used: " + bad_path + ":2: column 'NG': must be >= 0"), std::string::npos)
      << logged;
  const std::string filled = bad_path + ": filled 1 hour(s) by linear interpolation";
  ASSERT_NE(logged.find(filled), std::string::npos) << logged;
  EXPECT_EQ(logged.find(filled, logged.find(filled) + 1), std::string::npos) << "logged once: " << logged;
  EXPECT_NE(logged.find("\"carbon_source\""), std::string::npos);
}

TEST(CarbonHistory, TheFuelMixIsStoredAndABadOneIsRefusedByName) {
  ControlState state;
  state.carbon.history = {100, 200, 300};
  state.carbon.history_last_hour = 455;
  state.carbon.history_mix_mw = std::vector<double>(8, 1.5);
  state.carbon.history_mix_mw.insert(state.carbon.history_mix_mw.end(), 8, 2.0);
  const Json stored = ControlStateToJson(state);
  EXPECT_EQ(stored["carbon"]["history_mix_mw"], Json::parse("[[1.5,1.5,1.5,1.5,1.5,1.5,1.5,1.5],[2,2,2,2,2,2,2,2]]"));
  Result<ControlState> back = ControlStateFromJson(stored);
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  EXPECT_EQ(back->carbon.history_mix_mw, state.carbon.history_mix_mw);
  Json older = ControlStateToJson(state);  // written before the fuel mix
  older["carbon"].erase("history_mix_mw");
  back = ControlStateFromJson(older);
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  EXPECT_TRUE(back->carbon.history_mix_mw.empty());

  Json bad = ControlStateToJson(state);
  bad["carbon"]["history_mix_mw"][1] = {1, 2, 3};
  EXPECT_EQ(ControlStateFromJson(bad).status().message(),
            "stored job state: carbon.history_mix_mw[1]: expected 8 generations >= 0 (MW)");
  bad["carbon"]["history_mix_mw"][1] = std::vector<double>(8, -1);
  EXPECT_FALSE(ControlStateFromJson(bad).ok());
  bad["carbon"]["history_mix_mw"] = std::vector<std::vector<double>>(4, std::vector<double>(8, 1));
  EXPECT_EQ(ControlStateFromJson(bad).status().message(),
            "stored job state: carbon.history_mix_mw has 4 hours, more than the history's 3");
}

TEST_F(JobServiceCarbonTest, AStateStoredBeforeOptionTimesIsChargedAtItsPlansTime) {
  const std::string path = tmp_.Path("perseus.db");
  Open(path);
  StartJob(1, 2, {{"source", "fixed"}, {"value_g_per_kwh", 700}, {"slowdown_budget", 0.5}});
  ASSERT_TRUE(service_->EvaluateCarbon("j").ok());
  const int plan = (*service_->CarbonJson("j"))["plan_index"];
  ASSERT_GT(plan, 0);  // a large budget on a dirty grid: a slower plan
  const std::vector<double> times = PlanTimes();
  // Rewrite the stored state as an older server wrote it, then restart.
  ControlState stored = StoredState("j");
  Json j = ControlStateToJson(stored);
  j["carbon"].erase("option");
  j["carbon"].erase("option_time_s");
  StoreWrite rewrite;
  rewrite.job_id = "j";
  rewrite.state_json = j.dump();
  ASSERT_TRUE(store_->Commit(rewrite).ok());
  Open(path);
  now_ += 3600;
  ASSERT_TRUE(service_->EvaluateCarbon("j").ok());
  const CarbonState after = StoredState("j").carbon;
  EXPECT_NEAR(after.work_windows, times[0] / times[plan], 1e-9);  // not 1: the slower plan ran
}

TEST_F(JobServiceCarbonTest, FourHourWindowsKeepAnHourlyHistory) {
  StartJob(1, 2, {{"source", "trace"}, {"trace_path", WriteDiurnalTrace(tmp_)}, {"window_s", 4 * 3600}});
  for (int w = 0; w < 6; ++w, now_ += 4 * 3600) ASSERT_TRUE(service_->EvaluateCarbon("j").ok());
  // Decisions at hours 0, 4, ..., 20 read hours 0, 3, 7, ..., 19 (no
  // look-ahead): the history holds hours 0..19, each hour between readings
  // repeating the reading before it.
  const CarbonState stored = StoredState("j").carbon;
  const std::vector<double>& h = stored.history;
  ASSERT_EQ(h.size(), 20u);
  for (int hour = 0; hour <= 19; ++hour) {
    const int read = hour < 3 ? 0 : hour - (hour + 1) % 4;  // the last hour read at or before `hour`
    EXPECT_EQ(h[hour], read < 12 ? 100 : 700) << "hour " << hour;
  }
  EXPECT_EQ(stored.history_last_hour, (kDay0 + 19 * 3600) / 3600);
}

TEST_F(JobServiceCarbonTest, StateSurvivesARestart) {
  const std::string path = tmp_.Path("perseus.db");
  Open(path);
  StartJob(2, 2, {{"source", "trace"}, {"trace_path", WriteDiurnalTrace(tmp_)}, {"slowdown_budget", 0.05}});
  for (int w = 0; w < 40; ++w, now_ += 3600) ASSERT_TRUE(service_->EvaluateCarbon("j").ok());
  Json carbon = *service_->CarbonJson("j"), summary = *service_->JobSummary("j");
  Json plan = Plan(*service_, "j", 1);
  Open(path);
  EXPECT_EQ(*service_->CarbonJson("j"), carbon);
  // Everything but the pipelines' totals, which count since the server started (/metrics' counters).
  Json reloaded = *service_->JobSummary("j");
  EXPECT_GT(summary["pipelines"][0]["totals"]["plan_switches"].get<int>(), 0) << "the carbon windows switched plans";
  EXPECT_EQ(reloaded["pipelines"][0]["totals"]["plan_switches"], 0) << "a restarted server counts from 0";
  EXPECT_EQ(testing::WithoutTotals(reloaded), testing::WithoutTotals(summary));
  EXPECT_EQ(Plan(*service_, "j", 1), plan);
  EXPECT_EQ(summary["spec"]["carbon"]["slowdown_budget"], 0.05);
  // Decisions continue from the stored accounting and history.
  ASSERT_TRUE(service_->EvaluateCarbon("j").ok());
  Json next = *service_->CarbonJson("j");
  EXPECT_NEAR(next["elapsed_windows"].get<double>(), carbon["elapsed_windows"].get<double>() + 1, 1e-9);
  EXPECT_LE(next["slowdown_so_far"].get<double>(), 0.05 + 1e-9);
}

// A job in deadline mode that may pause: the dirty half of the day pauses it
// (a "pause" plan for every rank, the metric, the log line), the clean half
// resumes it, and a server restarted while the job is paused keeps it paused.
TEST_F(JobServiceCarbonTest, PausesInDirtyHoursAndStaysPausedAcrossARestart) {
  const std::string path = tmp_.Path("perseus.db");
  Open(path);
  StartJob(2, 2, {{"source", "trace"}, {"trace_path", WriteDiurnalTrace(tmp_)}, {"slowdown_budget", 0.5},
                  {"job_hours", 24}, {"pause", "hold"}});
  int paused = 0, resumed = 0;
  Json while_paused;
  for (int w = 0; w < 40; ++w, now_ += 3600) {
    Result<Json> r = service_->EvaluateCarbon("j");
    ASSERT_TRUE(r.ok()) << r.status().ToString();
    const Json plan = Plan(*service_, "j", 3);
    if ((*r)["paused"].get<bool>()) {
      ++paused;
      EXPECT_EQ(plan["kind"], "pause") << "hour " << w;
      EXPECT_EQ(plan["pause"]["hold_clock_mhz"], 780);  // the synthetic ranks' lowest clock
      EXPECT_EQ(plan["pause"]["max_s"].get<double>(), 2 * 3600);  // the next decision is due within one window
      EXPECT_GE(plan["pause"]["from_iteration"].get<int64_t>(), 2);  // a few iterations ahead
      EXPECT_NE((*r)["explanation"].get<std::string>().find("-> paused (GPUs held idle, "), std::string::npos);
      if (while_paused.is_null()) while_paused = *r;
    } else {
      resumed += paused > 0;
      EXPECT_EQ(plan["kind"], "frontier") << "hour " << w;
    }
    if (paused > 0 && resumed > 0 && !(*r)["paused"].get<bool>() && !while_paused.is_null()) break;
  }
  ASSERT_GT(paused, 0);
  ASSERT_GT(resumed, 0);
  // Pause again, then restart the server.
  for (int w = 0; w < 24 && !(*service_->CarbonJson("j"))["paused"].get<bool>(); ++w) {
    now_ += 3600;
    ASSERT_TRUE(service_->EvaluateCarbon("j").ok());
  }
  ASSERT_TRUE((*service_->CarbonJson("j"))["paused"].get<bool>());
  const std::string metrics = RenderMetrics(service_->AllSummaries(), 0);
  EXPECT_NE(metrics.find("perseus_carbon_paused{job_id=\"j\"} 1"), std::string::npos);
  const Json carbon = *service_->CarbonJson("j");
  const Json paused_plan = Plan(*service_, "j", 0);
  Open(path);
  EXPECT_EQ(*service_->CarbonJson("j"), carbon);
  EXPECT_EQ(Plan(*service_, "j", 0), paused_plan);  // the same pause, from the same iteration
  EXPECT_TRUE(StoredState("j").carbon.paused);
  // Decisions that fail (the trace is gone) do not hold the pause forever: two
  // windows after the last decision the job runs its plan again, from where it
  // was paused.
  ASSERT_EQ(std::remove(tmp_.Path("trace.csv").c_str()), 0);
  Open(path);
  now_ += 3600;
  service_->CarbonTick();  // fails: still paused
  EXPECT_TRUE((*service_->CarbonJson("j"))["paused"].get<bool>());
  now_ += 3600;
  service_->CarbonTick();
  EXPECT_FALSE((*service_->CarbonJson("j"))["paused"].get<bool>());
  const Json running_again = Plan(*service_, "j", 0);
  EXPECT_EQ(running_again["kind"], "frontier");
  EXPECT_EQ(running_again["plan_index"], paused_plan["plan_index"]);
  EXPECT_FALSE(StoredState("j").carbon.paused);
}

// A job's first decision starts from what its source knew of the hours before
// (three weeks at most): the trace's hours up to the one it reads now, not
// that one reading. The history is kept from then on (a restart does not
// seed it again); a fixed value has no history.
TEST_F(JobServiceCarbonTest, AFirstDecisionStartsFromTheSourcesHistory) {
  const std::string path = tmp_.Path("seeded.db");
  Open(path);
  now_ = kDay0 + 2 * 86400 + 12 * 3600 + 1800;  // day 3, 12:30 UTC: the trace's 11:00 (clean) is the last known
  StartJob(2, 2, {{"source", "trace"}, {"trace_path", WriteDiurnalTrace(tmp_)}, {"slowdown_budget", 0.2}});
  Result<Json> first = service_->EvaluateCarbon("j");
  ASSERT_TRUE(first.ok()) << first.status().ToString();
  EXPECT_EQ((*first)["history_hours"], 2 * 24 + 12);
  EXPECT_EQ((*first)["intensity_g_per_kwh"], 100);
  // The last two days turned dirty at noon: so does the forecast of this hour, from a clean reading.
  EXPECT_GT((*first)["forecast_g_per_kwh"].get<double>(), 400);
  Open(path);
  now_ += 3600;
  Result<Json> next = service_->EvaluateCarbon("j");
  ASSERT_TRUE(next.ok());
  EXPECT_EQ((*next)["history_hours"], 2 * 24 + 13);
  Open(":memory:");
  StartJob(1, 2, {{"source", "fixed"}, {"value_g_per_kwh", 300}});
  EXPECT_EQ((*service_->EvaluateCarbon("j"))["history_hours"], 1);
}

// Under the server's power cap, a paused job is counted at what its idle GPUs
// draw (held: every GPU's blocking power; released: nothing), and the watts
// it no longer uses go to the jobs still running.
TEST_F(JobServiceCarbonTest, APausedJobGivesItsShareOfTheServersCapToTheOthers) {
  for (const char* pause : {"hold", "release"}) {
    SCOPED_TRACE(pause);
    Open(":memory:");
    now_ = kDay0;
    StartJob(2, 2, {{"source", "trace"}, {"trace_path", WriteDiurnalTrace(tmp_)}, {"slowdown_budget", 0.5},
                    {"job_hours", 24}, {"pause", pause}});
    ASSERT_TRUE(HandleRegisterJob(*service_, JobBody("other", 1, 2, 4)).ok());
    testing::RegisterAndProfile(*service_, "other", 1, 2, 4);
    service_->WaitForOptimizer();
    auto fastest_w = [&](const std::string& id, int dp) {
      const Json plan = (*service_->FrontierJson(id))["plans"][0];
      return dp * plan["energy_j"].get<double>() / plan["time_s"].get<double>();
    };
    const double cap_w = 0.8 * (fastest_w("j", 2) + fastest_w("other", 1));
    ASSERT_TRUE(HandleSetServerPowerCap(*service_, {{"average_w", cap_w}}).ok());
    auto share_w = [&](const std::string& id) {
      const Json shared = service_->ServerPowerCapJson();
      for (const Json& j : shared["jobs"]) {
        if (j["id"] == id) return j["share_w"].get<double>();
      }
      ADD_FAILURE() << "no share for " << id << ": " << shared.dump();
      return 0.0;
    };
    ASSERT_TRUE(service_->EvaluateCarbon("j").ok());
    ASSERT_FALSE((*service_->CarbonJson("j"))["paused"].get<bool>());  // 00:00: clean, runs
    service_->PowerCapTick();
    const double running_share_w = share_w("other");
    EXPECT_LT(running_share_w, fastest_w("other", 1) * (1 - 1e-6));  // the cap binds it
    for (int h = 0; h < 24 && !(*service_->CarbonJson("j"))["paused"].get<bool>(); ++h) {
      now_ += 3600;
      ASSERT_TRUE(service_->EvaluateCarbon("j").ok());
    }
    ASSERT_TRUE((*service_->CarbonJson("j"))["paused"].get<bool>());
    service_->PowerCapTick();
    const double idle_w = std::string(pause) == "hold" ? 2 * 2 * 60.0 : 0.0;
    EXPECT_NEAR(share_w("j"), idle_w, 1e-9);
    const Json j_cap = (*service_->JobSummary("j"))["power_cap"];
    EXPECT_EQ(j_cap["running"], "paused") << j_cap.dump();
    EXPECT_NEAR(j_cap["predicted_w"].get<double>(), idle_w, 1e-9);
    EXPECT_NEAR(j_cap["server_share_w"].get<double>(), idle_w, 1e-9);
    // The other job gets the rest, up to all it can use.
    EXPECT_NEAR(share_w("other"), std::min(cap_w - idle_w, fastest_w("other", 1)), 1e-6 * cap_w);
    EXPECT_GT(share_w("other"), running_share_w);
    EXPECT_EQ((*service_->JobSummary("other"))["pipelines"][0]["plan_index"], 0);
    // Resumed, the job takes its share back.
    for (int h = 0; h < 24 && (*service_->CarbonJson("j"))["paused"].get<bool>(); ++h) {
      now_ += 3600;
      ASSERT_TRUE(service_->EvaluateCarbon("j").ok());
    }
    ASSERT_FALSE((*service_->CarbonJson("j"))["paused"].get<bool>());
    // The decision that resumed it shared the cap again: no tick needed, and
    // never a moment under its pause power.
    EXPECT_GT(share_w("j"), idle_w + 1);
    const Json resumed_cap = (*service_->JobSummary("j"))["power_cap"];
    EXPECT_EQ(resumed_cap["feasible"], true) << resumed_cap.dump();
    EXPECT_NEAR(resumed_cap["server_share_w"].get<double>(), share_w("j"), 1e-9);
    service_->PowerCapTick();
    EXPECT_GT(share_w("j"), idle_w + 1);
    EXPECT_NEAR(share_w("other"), running_share_w, 1e-6 * cap_w);
  }
}

}  // namespace
}  // namespace perseus::server
