// JobHistory and GET /jobs/{id}/history's source: events on every change of
// plans, stragglers, phase or carbon decision; complete pipeline iterations
// with their plan's prediction; the bounds; the query.
#include "runtime/server/job_history.h"

#include <gtest/gtest.h>

#include "runtime/server/api_handlers.h"
#include "runtime/server/test_util.h"

namespace perseus::server {
namespace {

ControlState Running(std::vector<int> plan_indices) {
  ControlState s;
  s.phase = Phase::kRunning;
  for (int i : plan_indices) s.pipelines.push_back({i, 1});
  return s;
}

TEST(JobHistoryTest, TotalsCountIterationsEnergyAndPlanSwitchesBeyondTheBounds) {
  JobHistory h;
  ControlState none;  // before any plan: handing plans out is not a switch
  ControlState a = Running({0, 0});
  h.RecordState(none, a, 1);
  ControlState b = Running({2, 0});
  h.RecordState(a, b, 2);
  ControlState c = Running({0, 1});
  h.RecordState(b, c, 3);
  h.RecordState(c, c, 4);
  const int64_t n = static_cast<int64_t>(JobHistory::kMaxIterations) + 10;
  for (int64_t i = 0; i < n; ++i) {
    h.RecordIteration({0, i, 10, 0, 1.0, 90.0, 1.0, 95.0, 100.0});
    if (i % 2 == 0) h.RecordIteration({1, i, 10, 0, 1.0, std::nullopt, 1.0, 95.0, 100.0});
  }
  const PipelineTotals& p0 = h.Totals().at(0);
  EXPECT_EQ(p0.iterations, n) << "totals keep counting when the bounded history drops iterations";
  EXPECT_EQ(p0.measured_iterations, n);
  EXPECT_DOUBLE_EQ(p0.energy_j, 90.0 * n);
  EXPECT_DOUBLE_EQ(p0.all_max_energy_j, 100.0 * n);
  EXPECT_DOUBLE_EQ(p0.predicted_energy_j, 95.0 * n);
  EXPECT_EQ(p0.plan_switches, 2);
  const PipelineTotals& p1 = h.Totals().at(1);
  EXPECT_EQ(p1.iterations, (n + 1) / 2);
  EXPECT_EQ(p1.measured_iterations, 0) << "unmeasured iterations add no energy and no baseline";
  EXPECT_EQ(p1.all_max_energy_j, 0);
  EXPECT_EQ(p1.plan_switches, 1);
}

TEST(JobHistoryTest, RecordsAnEventOnlyWhenPlansStragglersPhaseOrCarbonChange) {
  JobHistory h;
  ControlState a = Running({0, 0});
  h.RecordState(a, a, 100);  // the first state is always recorded
  h.RecordState(a, a, 101);  // nothing changed
  ControlState b = a;
  b.warnings.push_back({"achieved_clock", "m", 0, 1});  // not something the history shows
  h.RecordState(a, b, 102);
  ControlState c = b;
  c.stragglers.push_back({1, 1.25, true});
  c.pipelines[0].plan_index = 3;
  h.RecordState(b, c, 103);
  ControlState d = c;
  d.carbon.evaluated = true;
  d.carbon.last_eval_unix_s = 104;
  d.carbon.intensity_g_per_kwh = 420;
  d.carbon.plan_index = 2;
  d.carbon.explanation = "why";
  d.carbon.history = {1, 2, 3};
  h.RecordState(c, d, 104);
  ControlState e = d;
  e.phase = Phase::kDone;
  h.RecordState(d, e, 105);

  const Json j = h.ToJson({});
  ASSERT_EQ(j["events"].size(), 4u) << j.dump();
  EXPECT_EQ(j["events"][0]["unix_s"], 100);
  EXPECT_EQ(j["events"][0]["plan_index"], Json::array({0, 0}));
  EXPECT_EQ(j["events"][1]["unix_s"], 103);
  EXPECT_EQ(j["events"][1]["plan_index"], Json::array({3, 0}));
  EXPECT_EQ(j["events"][1]["stragglers"], Json::parse(R"([{"pipeline": 1, "slowdown": 1.25, "source": "detected"}])"));
  EXPECT_FALSE(j["events"][1].contains("carbon"));
  const Json& carbon = j["events"][2]["carbon"];
  EXPECT_EQ(carbon["decided_unix_s"], 104);
  EXPECT_EQ(carbon["intensity_g_per_kwh"], 420.0);
  EXPECT_EQ(carbon["plan_index"], 2);
  EXPECT_EQ(carbon["explanation"], "why");
  EXPECT_FALSE(carbon.contains("history"));
  EXPECT_EQ(j["events"][3]["phase"], "done");
  EXPECT_EQ(j["dropped_events"], 0);
}

TEST(JobHistoryTest, KeepsTheNewestEventsAndIterationsWithinItsBounds) {
  JobHistory h;
  ControlState s = Running({0});
  for (size_t i = 0; i < JobHistory::kMaxEvents + 10; ++i) {
    ControlState next = s;
    next.pipelines[0].plan_index = static_cast<int>(i % 2);
    h.RecordState(s, next, static_cast<int64_t>(i));
    s = next;
  }
  for (int64_t i = 0; i < static_cast<int64_t>(JobHistory::kMaxIterations) + 7; ++i) {
    h.RecordIteration({static_cast<int>(i % 2), i, i, 0, 0.5, 100.0, 0.5, 99.0});
  }
  HistoryQuery all{static_cast<int64_t>(JobHistory::kMaxEvents), static_cast<int64_t>(JobHistory::kMaxIterations),
                   std::nullopt};
  Json j = h.ToJson(all);
  EXPECT_EQ(j["events"].size(), JobHistory::kMaxEvents);
  EXPECT_EQ(j["dropped_events"], 10);
  EXPECT_EQ(j["events"].back()["unix_s"], JobHistory::kMaxEvents + 9);
  EXPECT_EQ(j["iterations"].size(), JobHistory::kMaxIterations);
  EXPECT_EQ(j["dropped_iterations"], 7);
  EXPECT_EQ(j["iterations"][0]["iteration"], 7);

  // The newest three iterations of pipeline 1, oldest first.
  j = h.ToJson({2, 3, 1});
  EXPECT_EQ(j["events"].size(), 2u);
  ASSERT_EQ(j["iterations"].size(), 3u);
  const int64_t last = static_cast<int64_t>(JobHistory::kMaxIterations) + 6;  // even: pipeline 0's
  EXPECT_EQ(j["iterations"][0]["iteration"], last - 5);
  EXPECT_EQ(j["iterations"][2]["iteration"], last - 1);
  EXPECT_EQ(j["iterations"][2]["pipeline"], 1);
}

TEST(JobHistoryTest, AnIterationWithoutEnergyHasNullEnergy) {
  JobHistory h;
  h.RecordIteration({0, 5, 10, 2, 0.5, std::nullopt, 0.5, 99.0});
  const Json p = h.ToJson({})["iterations"][0];
  EXPECT_TRUE(p["energy_j"].is_null());
  EXPECT_EQ(p["predicted_energy_j"], 99.0);
  EXPECT_EQ(p["plan_index"], 2);
}

class JobServiceHistoryTest : public ::testing::Test {
 protected:
  void SetUp() override {
    store_ = Store::Open(":memory:", false).value();
    CarbonOptions carbon;
    carbon.clock = [this] { return now_; };
    carbon.background = false;
    service_ = JobService::Create(store_.get(), nullptr, testing::UniformPlansSolver, carbon).value();
    Json body = testing::JobBody("j", 2, 2, 4);
    body["carbon"] = {{"source", "fixed"}, {"value_g_per_kwh", 400}};
    ASSERT_TRUE(HandleRegisterJob(*service_, body).ok());
    testing::RegisterAndProfile(*service_, "j", 2, 2, 4);
    service_->WaitForOptimizer();
    ASSERT_EQ((*service_->JobSummary("j"))["phase"], "running");
  }
  // Every rank reports `iteration` at its plan's time, each using `energy_j`.
  void Report(int64_t iteration, double energy_j) {
    for (int r = 0; r < 4; ++r) {
      Json plan = testing::Plan(*service_, "j", r);
      Json body = {{"iterations",
                    {{{"iteration", iteration}, {"compute_time_s", plan["predicted_time_s"]},
                      {"energy_j", energy_j}, {"plan_version", plan["version"]}}}}};
      ASSERT_TRUE(HandleReportIterations(*service_, "j", r, body).ok());
    }
  }

  int64_t now_ = 1'700'000'000;
  std::unique_ptr<Store> store_;
  std::unique_ptr<JobService> service_;
};

TEST_F(JobServiceHistoryTest, ShowsPlansStragglersCarbonAndMeasuredAgainstPredictedEnergy) {
  const Json frontier = *service_->FrontierJson("j");
  for (int64_t i = 0; i < 3; ++i) Report(i, 50);
  Report(2, 50);  // an iteration is recorded once, however often its ranks repeat it
  now_ += 10;
  ASSERT_TRUE(HandleDeclareStraggler(*service_, "j", {{"pipeline", 1}, {"slowdown", 1.2}}).ok());
  now_ += 10;
  ASSERT_TRUE(service_->EvaluateCarbon("j").ok());

  Result<Json> history = service_->HistoryJson("j", {});
  ASSERT_TRUE(history.ok()) << history.status().ToString();
  const Json& h = *history;
  EXPECT_EQ(h["id"], "j");
  EXPECT_EQ(h["phase"], "running");
  EXPECT_EQ(h["pipelines"], 2);
  // Each pipeline's 3 iterations, energy over its 2 ranks, beside the fastest plan's prediction.
  ASSERT_EQ(h["iterations"].size(), 6u) << h.dump();
  for (const Json& p : h["iterations"]) {
    EXPECT_EQ(p["plan_index"], 0);
    EXPECT_EQ(p["energy_j"], 100.0);
    EXPECT_EQ(p["predicted_energy_j"], frontier["plans"][0]["energy_j"]);
    EXPECT_EQ(p["predicted_time_s"], frontier["plans"][0]["time_s"]);
  }
  // Running on the fastest plan, then pipeline 0 slowed for the straggler, then the carbon decision.
  const Json& events = h["events"];
  ASSERT_GE(events.size(), 3u);
  const Json& straggled = events[events.size() - 2];
  EXPECT_EQ(straggled["unix_s"], 1'700'000'010);
  EXPECT_GT(straggled["plan_index"][0].get<int>(), 0);
  EXPECT_EQ(straggled["plan_index"][1], 0);
  EXPECT_EQ(straggled["stragglers"][0]["source"], "api");
  const Json& decided = events.back();
  EXPECT_EQ(decided["carbon"]["decided_unix_s"], 1'700'000'020);
  EXPECT_EQ(decided["carbon"]["intensity_g_per_kwh"], 400.0);
  EXPECT_EQ(decided["carbon"]["explanation"], (*service_->CarbonJson("j"))["explanation"]);

  // A training job restarted from a checkpoint repeats older iteration numbers.
  Report(7, 50);
  Report(5, 50);
  const Json after = (*service_->HistoryJson("j", {}))["iterations"];
  ASSERT_EQ(after.size(), 10u);
  EXPECT_EQ(after[9]["iteration"], 5);
}

TEST_F(JobServiceHistoryTest, APipelineOutsideTheJobOrAnUnknownJobIsAnError) {
  Result<Json> bad = service_->HistoryJson("j", {10, 10, 2});
  EXPECT_EQ(bad.status().code(), Status::Code::kInvalidArgument);
  EXPECT_EQ(bad.status().message(), "query 'pipeline': expected an integer in [0, 1] (the job has dp 2), got 2");
  EXPECT_EQ(service_->HistoryJson("nope", {}).status().code(), Status::Code::kNotFound);
  Report(0, 10);
  Json only1 = *service_->HistoryJson("j", {10, 10, 1});
  ASSERT_EQ(only1["iterations"].size(), 1u);
  EXPECT_EQ(only1["iterations"][0]["pipeline"], 1);
}

}  // namespace
}  // namespace perseus::server
