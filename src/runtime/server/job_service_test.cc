#include "runtime/server/job_service.h"

#include <gtest/gtest.h>
#include <sqlite3.h>

#include <atomic>
#include <chrono>
#include <cmath>
#include <functional>
#include <map>
#include <set>
#include <thread>

#include "common/temp_dir_for_test.h"
#include "control/clock_change_limit.h"
#include "runtime/server/metrics.h"
#include "runtime/server/test_util.h"

namespace perseus::server {
namespace {

using testing::JobBody;
using testing::Plan;
using testing::RankBody;

class JobServiceTest : public ::testing::Test {
 protected:
  void Open(const std::string& path) { testing::OpenService(path, nullptr, &store_, &service_); }
  void SetUp() override { Open(":memory:"); }
  std::string Phase(const std::string& job) { return (*service_->JobSummary(job))["phase"]; }
  // The first stored job's rank rows (a copy: safe in a range-for).
  std::vector<RankInfo> StoredRanks() { return store_->LoadAll().value()[0].ranks; }
  // Profiles a one-stage job "j" that declares no blocking power, on a GPU model
  // perseus does not know, with `edit` applied to every window report
  // (testing::WindowBody's), and waits for its optimisation; returns the summary.
  Json ProfileOneStageJobWithoutBlockingPower(const std::function<void(Json& body, int window)>& edit) {
    Json job = JobBody("j", 1, 1, 4);
    job.erase("blocking_power_w");
    EXPECT_TRUE(HandleRegisterJob(*service_, job).ok());
    EXPECT_TRUE(HandleRegisterRank(*service_, "j", RankBody(0, 0, 0)).ok());
    for (int round = 0; round < 1000 && Phase("j") == "profiling"; ++round) {
      Json plan = Plan(*service_, "j", 0);
      Json body = testing::WindowBody(0, plan, 4);
      edit(body, plan["window"]["id"].get<int>());
      EXPECT_TRUE(HandleReportWindow(*service_, "j", 0, body).ok());
    }
    service_->WaitForOptimizer();
    return *service_->JobSummary("j");
  }

  ScopedTempDir tmp_;  // before the store and service: removed after they close
  std::unique_ptr<Store> store_;
  std::unique_ptr<JobService> service_;
};

TEST_F(JobServiceTest, JobSpecErrorsNameTheField) {
  Json body = JobBody("j", 1, 2, 4);
  body.erase("microbatches");
  EXPECT_EQ(HandleRegisterJob(*service_, body).status().message(), "field 'microbatches': missing");
  body = JobBody("j", 1, 2, 4);
  body["pp"] = "two";
  EXPECT_EQ(HandleRegisterJob(*service_, body).status().message(), "field 'pp': expected an integer, got \"two\"");
  body = JobBody("bad id!", 1, 2, 4);
  EXPECT_EQ(HandleRegisterJob(*service_, body).status().message(),
            "field 'id': expected 1-64 characters of [A-Za-z0-9._-], got \"bad id!\"");
  body = JobBody("j", 1, 2, 4);
  body["schedule"] = "zigzag";
  EXPECT_EQ(HandleRegisterJob(*service_, body).status().message(),
            "field 'schedule': expected '1f1b', 'gpipe' or 'interleaved-1f1b', got \"zigzag\"");
  body["schedule"] = "zb-h1";  // a real schedule, but the runtime does not run split backwards
  EXPECT_EQ(HandleRegisterJob(*service_, body).status().message(),
            "field 'schedule': expected '1f1b', 'gpipe' or 'interleaved-1f1b', got \"zb-h1\" (split-backward "
            "schedules are offline only: perseus optimize)");
  body = JobBody("j", 1, 2, 4);
  body["max_clock_changes_per_gpu"] = -2;
  EXPECT_EQ(HandleRegisterJob(*service_, body).status().message(),
            "field 'max_clock_changes_per_gpu': expected an integer in [-1, 1000000], got -2");
  EXPECT_TRUE(service_->AllSummaries().empty());
}

// Registers, profiles and optimises job "j" (`body`) on a fresh service with
// `limits`; returns what `field` read from the options the optimizer got
// (-100 when it was not called), and the job's summary.
std::pair<int, Json> SeenByTheOptimizer(const Json& body, const ServiceLimits& limits,
                                        int (*field)(const FrontierOptions&)) {
  Result<std::unique_ptr<Store>> store = Store::Open(":memory:", false);
  EXPECT_TRUE(store.ok());
  std::atomic<int> seen{-100};
  auto solver = [&seen, field](const Problem& p, const FrontierOptions& o) -> Result<Frontier> {
    seen = field(o);
    return testing::UniformPlansSolver(p, o);
  };
  Result<std::unique_ptr<JobService>> service = JobService::Create(store->get(), nullptr, solver, {}, limits);
  EXPECT_TRUE(service.ok());
  if (!service.ok()) return {-100, Json()};
  EXPECT_TRUE(HandleRegisterJob(**service, body).ok());
  testing::RegisterAndProfile(**service, "j", 1, 2, 4);
  (*service)->WaitForOptimizer();
  return {seen.load(), *(*service)->JobSummary("j")};
}

TEST_F(JobServiceTest, TheClockChangeLimitReachesTheOptimizer) {
  Json body = JobBody("j", 1, 2, 4);
  body["max_clock_changes_per_gpu"] = 3;
  auto read = [](const FrontierOptions& o) { return o.max_clock_changes_per_gpu; };
  auto [seen, summary] = SeenByTheOptimizer(body, {}, read);
  EXPECT_EQ(seen, 3);
  EXPECT_EQ(summary["spec"]["max_clock_changes_per_gpu"], 3);
}

TEST_F(JobServiceTest, TheOptimizerThreadLimitReachesTheOptimizer) {
  for (int threads : {0, 3}) {
    ServiceLimits limits;
    limits.optimizer_threads = threads;
    auto read = [](const FrontierOptions& o) { return o.threads; };
    EXPECT_EQ(SeenByTheOptimizer(JobBody("j", 1, 2, 4), limits, read).first, threads);
  }
}

TEST_F(JobServiceTest, TheFrontierPlanLimitReachesTheOptimizer) {
  // Plans are made at no fewer times than a job keeps, and at every unit
  // time when it keeps all.
  for (auto [kept, made] : {std::pair{0, 0}, {10, kDefaultMaxPlans}, {1000, 1000}, {4000, 4000}}) {
    ServiceLimits limits;
    limits.max_frontier_plans = kept;
    auto read = [](const FrontierOptions& o) { return o.max_plans; };
    EXPECT_EQ(SeenByTheOptimizer(JobBody("j", 1, 2, 4), limits, read).first, made) << kept;
  }
}

// Clock changes per GPU per iteration in a rank's plan, around the cycle.
int PlanClockChanges(const Json& plan) {
  const Json& steps = plan["instructions"];
  int changes = 0;
  for (size_t k = 0; k < steps.size(); ++k) {
    changes += steps[k]["sm_clock_mhz"] != steps[(k + steps.size() - 1) % steps.size()]["sm_clock_mhz"];
  }
  return changes;
}

// A job through profiling to running with the real optimizer, its ranks
// reporting `latency_s` clock switches; its summary and both ranks' plans.
struct SolvedJob {
  Json summary;
  Json plans[2];
  int solved_with_limit = -100;  // FrontierOptions::max_clock_changes_per_gpu of the solve
};
SolvedJob RunJobWithSwitchLatency(double latency_s, int spec_limit) {
  SolvedJob out;
  Result<std::unique_ptr<Store>> store = Store::Open(":memory:", false);
  EXPECT_TRUE(store.ok());
  std::atomic<int> solved_with{-100};
  auto solver = [&solved_with](const Problem& p, const FrontierOptions& o) {
    solved_with = o.max_clock_changes_per_gpu;
    return SolveFrontier(p, o);
  };
  Result<std::unique_ptr<JobService>> service = JobService::Create(store->get(), nullptr, solver);
  EXPECT_TRUE(service.ok());
  Json job = JobBody("j", 1, 2, 4);
  if (spec_limit >= 0) job["max_clock_changes_per_gpu"] = spec_limit;
  EXPECT_TRUE(HandleRegisterJob(**service, job).ok());
  for (int r = 0; r < 2; ++r) EXPECT_TRUE(HandleRegisterRank(**service, "j", RankBody(r, 0, r)).ok());
  for (int round = 0; round < 1000 && (*(*service)->JobSummary("j"))["phase"] == "profiling"; ++round) {
    for (int r = 0; r < 2; ++r) {
      Json plan = Plan(**service, "j", r);
      if (plan["kind"] != "profiling") continue;
      Json body = testing::WindowBody(r, plan, 4);
      body["clock_switch_latency_s"] = latency_s;
      EXPECT_TRUE(HandleReportWindow(**service, "j", r, body).ok());
    }
  }
  (*service)->WaitForOptimizer();
  out.summary = *(*service)->JobSummary("j");
  for (int r = 0; r < 2; ++r) out.plans[r] = Plan(**service, "j", r);
  out.solved_with_limit = solved_with.load();
  return out;
}

std::vector<std::string> LimitedWarnings(const Json& summary) {
  std::vector<std::string> limited;
  for (const Json& w : summary["warnings"]) {
    if (w["code"] == "clock_changes_limited") limited.push_back(w["message"]);
  }
  return limited;
}

// With the real optimizer, 100-ms switches against 10-30 ms computations slow
// the unlimited no-slowdown plan; the server limits clock changes to what the
// switch model keeps within the tolerance, and says so once.
TEST_F(JobServiceTest, SlowClockSwitchesLimitClockChanges) {
  const SolvedJob fast = RunJobWithSwitchLatency(0.002, -1);
  ASSERT_EQ(fast.summary["phase"], "running") << fast.summary.dump();
  EXPECT_TRUE(LimitedWarnings(fast.summary).empty()) << fast.summary.dump();
  EXPECT_GT(std::max(PlanClockChanges(fast.plans[0]), PlanClockChanges(fast.plans[1])), 2)
      << "the unlimited plans change clocks often";

  const SolvedJob slow = RunJobWithSwitchLatency(0.1, -1);
  ASSERT_EQ(slow.summary["phase"], "running") << slow.summary.dump();
  const std::vector<std::string> limited = LimitedWarnings(slow.summary);
  ASSERT_EQ(limited.size(), 1u) << slow.summary.dump();
  EXPECT_NE(limited[0].find("a clock switch takes 100.0 ms"), std::string::npos) << limited[0];
  const std::string prefix = "plans make at most ";
  ASSERT_EQ(limited[0].substr(0, prefix.size()), prefix) << limited[0];
  const int limit = std::stoi(limited[0].substr(prefix.size()));
  EXPECT_LE(std::max(PlanClockChanges(slow.plans[0]), PlanClockChanges(slow.plans[1])), limit) << limited[0];

  EXPECT_EQ(slow.solved_with_limit, -1);

  // A job's own limit: applied by the solve under fast switches; under slow
  // ones the frontier is solved unlimited and the limit applied afterwards,
  // the runs moved or not as the latency allows (until 2026-11-30 the solve
  // applied it, runs always moved), without the warning.
  for (double latency_s : {0.002, 0.1}) {
    const SolvedJob given = RunJobWithSwitchLatency(latency_s, 3);
    ASSERT_EQ(given.summary["phase"], "running") << given.summary.dump();
    EXPECT_EQ(given.solved_with_limit, latency_s > control::kSlowClockSwitchS ? -1 : 3) << latency_s;
    EXPECT_TRUE(LimitedWarnings(given.summary).empty()) << given.summary.dump();
    EXPECT_LE(std::max(PlanClockChanges(given.plans[0]), PlanClockChanges(given.plans[1])), 3) << latency_s;
  }
}

TEST_F(JobServiceTest, RegistrationIsIdempotentButNotConflicting) {
  ASSERT_EQ(HandleRegisterJob(*service_, JobBody("j", 1, 2, 4))->created, true);
  EXPECT_EQ(HandleRegisterJob(*service_, JobBody("j", 1, 2, 4))->created, false);
  Result<ApiReply> clash = HandleRegisterJob(*service_, JobBody("j", 2, 2, 4));
  EXPECT_EQ(clash.status().code(), Status::Code::kUnavailable);
  ASSERT_EQ(HandleRegisterRank(*service_, "j", RankBody(0, 0, 0))->created, true);
  EXPECT_EQ(HandleRegisterRank(*service_, "j", RankBody(0, 0, 0))->created, false);
  Json other = RankBody(0, 0, 0);
  other["gpu_uuid"] = "GPU-other";
  EXPECT_EQ(HandleRegisterRank(*service_, "j", other).status().message(),
            "job 'j': rank 0 (GPU-0 at dp 0, pp 0, tp 0) is already registered with different details");
  EXPECT_EQ(HandleRegisterRank(*service_, "j", RankBody(1, 0, 0)).status().message(),
            "job 'j': rank 0 (GPU-0 at dp 0, pp 0, tp 0) already holds those dp/pp/tp ranks");
  EXPECT_EQ(HandleRegisterRank(*service_, "j", RankBody(2, 0, 1)).status().message(),
            "field 'rank': expected an integer in [0, 1], got 2");
  EXPECT_EQ(HandleRegisterRank(*service_, "nope", RankBody(0, 0, 0)).status().code(), Status::Code::kNotFound);
  EXPECT_EQ((*service_->JobSummary("j"))["ranks_registered"], 1);
}

TEST_F(JobServiceTest, ProfilesInWindowsAndRecoversTheProfile) {
  ASSERT_TRUE(HandleRegisterJob(*service_, JobBody("j", 2, 2, 4)).ok());
  for (int r = 0; r < 3; ++r) ASSERT_TRUE(HandleRegisterRank(*service_, "j", RankBody(r, r / 2, r % 2)).ok());
  EXPECT_EQ(Plan(*service_, "j", 0)["kind"], "max");
  ASSERT_TRUE(HandleRegisterRank(*service_, "j", RankBody(3, 1, 1)).ok());
  EXPECT_EQ(Phase("j"), "profiling");
  Json plan = Plan(*service_, "j", 0);
  EXPECT_EQ(plan["kind"], "profiling");
  EXPECT_EQ(plan["window"]["id"], 0);
  EXPECT_EQ(plan["window"]["forward_clock_mhz"], 1410);
  EXPECT_EQ(plan["instructions"].size(), 8u);
  // A report for clocks other than the window's, or a window that does not
  // exist, is refused without changing anything.
  Json wrong = testing::WindowBody(0, plan, 4);
  wrong["forward_clock_mhz"] = 1305;
  EXPECT_EQ(HandleReportWindow(*service_, "j", 0, wrong).status().message(),
            "field 'forward_clock_mhz': window 0 runs stage 0's forwards at 1410 MHz, not 1305");
  wrong = testing::WindowBody(0, plan, 4);
  wrong["window"] = 999;
  EXPECT_EQ(HandleReportWindow(*service_, "j", 0, wrong).status().message(), "field 'window': job 'j' has no window 999");
  wrong = testing::WindowBody(0, plan, 4);
  wrong["window"] = 2;
  Result<ApiReply> early = HandleReportWindow(*service_, "j", 0, wrong);
  EXPECT_EQ(early.status().code(), Status::Code::kUnavailable);
  EXPECT_EQ(early.status().message(), "window 2 has not started (the job runs window 0)");
  wrong = testing::WindowBody(0, plan, 4);
  wrong["energy_j"] = 1e9;
  EXPECT_EQ(HandleReportWindow(*service_, "j", 0, wrong).status().code(), Status::Code::kInvalidArgument);
  // The window moves on only when every rank reported it; a repeated report is harmless.
  for (int r = 0; r < 3; ++r) ASSERT_TRUE(HandleReportWindow(*service_, "j", r, testing::WindowBody(r % 2, Plan(*service_, "j", r), 4)).ok());
  ASSERT_TRUE(HandleReportWindow(*service_, "j", 0, testing::WindowBody(0, plan, 4)).ok());
  EXPECT_EQ(Plan(*service_, "j", 0)["window"]["id"], 0);
  ASSERT_TRUE(HandleReportWindow(*service_, "j", 3, testing::WindowBody(1, Plan(*service_, "j", 3), 4)).ok());
  EXPECT_EQ(Plan(*service_, "j", 0)["window"]["id"], 1);
  Result<ApiReply> late = HandleReportWindow(*service_, "j", 1, testing::WindowBody(1, plan, 4));
  ASSERT_TRUE(late.ok());
  EXPECT_EQ(late->body["duplicate"], true);
  testing::RegisterAndProfile(*service_, "j", 2, 2, 4);
  service_->WaitForOptimizer();
  EXPECT_EQ(Phase("j"), "running");
  Result<std::string> csv = service_->ProfileCsv("j");
  ASSERT_TRUE(csv.ok());
  Result<Profile> profile = ParseProfileCsv(*csv, "profile", 2);
  ASSERT_TRUE(profile.ok()) << profile.status().ToString();
  // Every clock is profiled (no stop rule), and noise-free windows give the
  // synthetic stage's energies back.
  const std::vector<FreqPoint>& fwd = profile->stages[1].at(Instruction::kForward);
  const std::vector<FreqPoint>& bwd = profile->stages[1].at(Instruction::kBackward);
  ASSERT_EQ(fwd.size(), testing::kClocks.size());
  for (size_t i = 0; i < fwd.size(); ++i) {
    FreqPoint f = testing::SyntheticPoint(1, true, fwd[i].freq_mhz), b = testing::SyntheticPoint(1, false, bwd[i].freq_mhz);
    EXPECT_NEAR(fwd[i].time_s, f.time_s, 1e-9 * f.time_s);
    EXPECT_NEAR(fwd[i].energy_j + bwd[i].energy_j, f.energy_j + b.energy_j, 2e-3 * (f.energy_j + b.energy_j));
  }
  EXPECT_DOUBLE_EQ((*service_->JobSummary("j"))["blocking_power_w"].get<double>(), 60);
}

TEST_F(JobServiceTest, RunsTheFastestPlanAndSlowsOthersForAStraggler) {
  ASSERT_TRUE(HandleRegisterJob(*service_, JobBody("j", 3, 2, 4)).ok());
  testing::RegisterAndProfile(*service_, "j", 3, 2, 4);
  service_->WaitForOptimizer();
  ASSERT_EQ(Phase("j"), "running");
  Json p0 = Plan(*service_, "j", 0);
  EXPECT_EQ(p0["kind"], "frontier");
  EXPECT_EQ(p0["plan_index"], 0);
  const int64_t v0 = p0["version"];
  EXPECT_EQ(Plan(*service_, "j", 0, v0)["changed"], false);
  Json frontier = *service_->FrontierJson("j");
  const double t0 = frontier["plans"][0]["time_s"];

  Json bad = {{"pipeline", 3}, {"slowdown", 1.2}};
  EXPECT_EQ(HandleDeclareStraggler(*service_, "j", bad).status().message(),
            "field 'pipeline': expected an integer in [0, 2], got 3");
  ASSERT_TRUE(HandleDeclareStraggler(*service_, "j", {{"pipeline", 1}, {"slowdown", 1.2}}).ok());
  EXPECT_EQ(Plan(*service_, "j", 2, v0)["changed"], false);  // rank 2 is in the straggler pipeline 1
  Json slowed = Plan(*service_, "j", 0, v0);
  ASSERT_EQ(slowed["changed"], true);
  const int index = slowed["plan_index"];
  EXPECT_GT(index, 0);
  // The chosen plan is the frontier's largest time <= min(1.2 T0, T*).
  double t_star = frontier["plans"].back()["time_s"];
  double target = std::min(1.2 * t0, t_star);
  EXPECT_LE(frontier["plans"][index]["time_s"].get<double>(), target * (1 + 1e-9));
  if (index + 1 < static_cast<int>(frontier["plans"].size())) {
    EXPECT_GT(frontier["plans"][index + 1]["time_s"].get<double>(), target);
  }
  ASSERT_TRUE(service_->ClearStraggler("j", 1).ok());
  EXPECT_EQ(Plan(*service_, "j", 0)["plan_index"], 0);
  EXPECT_EQ(service_->ClearStraggler("j", 1).status().code(), Status::Code::kNotFound);
}

TEST_F(JobServiceTest, DetectsAndForgetsAStragglerFromIterationTimes) {
  ASSERT_TRUE(HandleRegisterJob(*service_, JobBody("j", 2, 2, 4)).ok());
  testing::RegisterAndProfile(*service_, "j", 2, 2, 4);
  service_->WaitForOptimizer();
  ASSERT_EQ(Phase("j"), "running");
  int64_t iteration = 0;
  auto report = [&](double slow_0) {
    for (int r = 0; r < 4; ++r) {
      Json plan = Plan(*service_, "j", r);
      double t = plan["predicted_time_s"].get<double>() * (r / 2 == 0 ? slow_0 : 1.0);
      Json body = {{"iterations", {{{"iteration", iteration}, {"compute_time_s", t}, {"plan_version", plan["version"]}}}}};
      ASSERT_TRUE(HandleReportIterations(*service_, "j", r, body).ok());
    }
    ++iteration;
  };
  for (int i = 0; i < 5; ++i) report(1.0);
  EXPECT_TRUE((*service_->JobSummary("j"))["stragglers"].empty());
  for (int i = 0; i < 5; ++i) report(1.25);
  Json s = (*service_->JobSummary("j"))["stragglers"];
  ASSERT_EQ(s.size(), 1u);
  EXPECT_EQ(s[0]["pipeline"], 0);
  EXPECT_NEAR(s[0]["slowdown"].get<double>(), 1.25, 1e-9);
  EXPECT_GT(Plan(*service_, "j", 2)["plan_index"].get<int>(), 0);
  for (int i = 0; i < 10; ++i) report(1.0);
  EXPECT_TRUE((*service_->JobSummary("j"))["stragglers"].empty());
  EXPECT_EQ(Plan(*service_, "j", 2)["plan_index"], 0);
}

// A client retries a report after an error it could not read the reply of:
// one rank's repeated iteration must not pass for its stage-mate's.
TEST_F(JobServiceTest, ARetriedIterationReportCountsOnce) {
  ASSERT_TRUE(HandleRegisterJob(*service_, JobBody("j", 2, 2, 4)).ok());
  testing::RegisterAndProfile(*service_, "j", 2, 2, 4);
  service_->WaitForOptimizer();
  for (int64_t iteration = 0; iteration < 10; ++iteration) {
    for (int r : {0, 0, 2, 3}) {  // rank 0 twice, rank 1 (its stage-mate) never
      Json plan = Plan(*service_, "j", r);
      double t = plan["predicted_time_s"].get<double>() * (r < 2 ? 1.25 : 1.0);
      Json body = {{"iterations", {{{"iteration", iteration}, {"compute_time_s", t}, {"plan_version", plan["version"]}}}}};
      ASSERT_TRUE(HandleReportIterations(*service_, "j", r, body).ok());
    }
  }
  // Pipeline 0 has no complete iteration, so no straggler can be inferred from it.
  EXPECT_TRUE((*service_->JobSummary("j"))["stragglers"].empty());
}

TEST_F(JobServiceTest, DeleteExpiryAndTheJobLimit) {
  int64_t now = 1'700'000'000;
  CarbonOptions clock;
  clock.clock = [&now] { return now; };
  clock.background = false;
  ServiceLimits limits;
  limits.max_jobs = 2;
  limits.job_expiry_s = 3600;
  service_.reset();
  service_ = JobService::Create(store_.get(), nullptr, testing::UniformPlansSolver, clock, limits).value();
  ASSERT_TRUE(HandleRegisterJob(*service_, JobBody("a", 1, 1, 4)).ok());
  ASSERT_TRUE(HandleRegisterJob(*service_, JobBody("b", 1, 1, 4)).ok());
  Result<ApiReply> third = HandleRegisterJob(*service_, JobBody("c", 1, 1, 4));
  ASSERT_FALSE(third.ok());
  EXPECT_NE(third.status().message().find("--max-jobs"), std::string::npos);
  // Restarted with a lower limit, the server holds more jobs than it allows:
  // the refusal says how many it holds, not the limit twice.
  service_.reset();
  ServiceLimits lower = limits;
  lower.max_jobs = 1;
  service_ = JobService::Create(store_.get(), nullptr, testing::UniformPlansSolver, clock, lower).value();
  third = HandleRegisterJob(*service_, JobBody("c", 1, 1, 4));
  ASSERT_FALSE(third.ok());
  EXPECT_NE(third.status().message().find("the server holds 2 jobs, its limit is 1 (--max-jobs)"), std::string::npos)
      << third.status().message();
  service_.reset();
  service_ = JobService::Create(store_.get(), nullptr, testing::UniformPlansSolver, clock, limits).value();
  ASSERT_TRUE(service_->DeleteJob("a").ok());
  EXPECT_EQ(service_->DeleteJob("a").code(), Status::Code::kNotFound);
  ASSERT_TRUE(HandleRegisterJob(*service_, JobBody("c", 1, 1, 4)).ok());
  now += 3000;
  ASSERT_TRUE(HandleRegisterRank(*service_, "c", RankBody(0, 0, 0)).ok());  // activity keeps c
  now += 1000;
  service_->MaintenanceTick();
  EXPECT_EQ(service_->JobSummary("b").status().code(), Status::Code::kNotFound);  // idle 4000 s > 3600 s
  EXPECT_TRUE(service_->JobSummary("c").ok());
  Open(":memory:");
  EXPECT_EQ(store_->LoadAll()->size(), 0u);
}

TEST_F(JobServiceTest, ADamagedJobIsQuarantinedAndTheOthersServed) {
  const std::string path = tmp_.Path("perseus.db");
  Open(path);
  ASSERT_TRUE(HandleRegisterJob(*service_, JobBody("good", 1, 1, 4)).ok());
  ASSERT_TRUE(HandleRegisterJob(*service_, JobBody("bad", 1, 2, 4)).ok());
  ASSERT_TRUE(HandleRegisterRank(*service_, "bad", RankBody(0, 0, 0)).ok());
  service_.reset();
  store_.reset();
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open(path.c_str(), &db), SQLITE_OK);
  // A rank outside the job (it would index out of range) and a state of the wrong JSON type.
  ASSERT_EQ(sqlite3_exec(db, "UPDATE ranks SET pp_rank = 7 WHERE job_id = 'bad'", nullptr, nullptr, nullptr), SQLITE_OK);
  sqlite3_close(db);
  Open(path);
  EXPECT_TRUE(service_->JobSummary("good").ok());
  Result<Json> bad = service_->JobSummary("bad");
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.status().code(), Status::Code::kUnavailable);
  EXPECT_NE(bad.status().message().find("quarantined"), std::string::npos) << bad.status().message();
  EXPECT_NE(bad.status().message().find("stored rank 0 does not fit"), std::string::npos);
  EXPECT_EQ(service_->QuarantinedJobs().size(), 1u);
  EXPECT_FALSE(HandleRegisterJob(*service_, JobBody("bad", 1, 2, 4)).ok());
  ASSERT_TRUE(service_->DeleteJob("bad").ok());
  EXPECT_TRUE(service_->QuarantinedJobs().empty());
  ASSERT_TRUE(HandleRegisterJob(*service_, JobBody("bad", 1, 2, 4)).ok());
  db = nullptr;
  service_.reset();
  store_.reset();
  ASSERT_EQ(sqlite3_open(path.c_str(), &db), SQLITE_OK);
  ASSERT_EQ(sqlite3_exec(db, "UPDATE jobs SET state_json = '{\"phase\": 7}' WHERE id = 'bad'", nullptr, nullptr,
                         nullptr),
            SQLITE_OK);
  sqlite3_close(db);
  Open(path);
  EXPECT_EQ(service_->QuarantinedJobs().count("bad"), 1u);
  EXPECT_TRUE(service_->JobSummary("good").ok());
}

TEST_F(JobServiceTest, AFailedJobCanBeProfiledAgain) {
  Result<std::unique_ptr<Store>> store = Store::Open(":memory:", false);
  ASSERT_TRUE(store.ok());
  bool fail = true;
  auto solver = [&fail](const Problem& p, const FrontierOptions& o) -> Result<Frontier> {
    if (fail) return Status::Internal("solver stopped");
    return testing::UniformPlansSolver(p, o);
  };
  Result<std::unique_ptr<JobService>> service = JobService::Create(store->get(), nullptr, solver);
  ASSERT_TRUE(service.ok());
  ASSERT_TRUE(HandleRegisterJob(**service, JobBody("j", 1, 2, 4)).ok());
  testing::RegisterAndProfile(**service, "j", 1, 2, 4);
  (*service)->WaitForOptimizer();
  ASSERT_EQ((*(*service)->JobSummary("j"))["phase"], "failed");
  fail = false;
  ASSERT_TRUE((*service)->Reprofile("j").ok());
  EXPECT_EQ((*(*service)->JobSummary("j"))["phase"], "profiling");
  EXPECT_EQ((*service)->ProfileCsv("j").status().code(), Status::Code::kUnavailable);
  for (int round = 0; round < 1000 && (*(*service)->JobSummary("j"))["phase"] == "profiling"; ++round) {
    for (int r = 0; r < 2; ++r) {
      Json plan = Plan(**service, "j", r);
      if (plan["kind"] == "profiling") {
        ASSERT_TRUE(HandleReportWindow(**service, "j", r, testing::WindowBody(r, plan, 4)).ok());
      }
    }
  }
  (*service)->WaitForOptimizer();
  EXPECT_EQ((*(*service)->JobSummary("j"))["phase"], "running");
  EXPECT_EQ((*service)->Reprofile("nope").status().code(), Status::Code::kNotFound);
}

// An optimisation that failed (here the solver refused; in production a
// solve past --max-solve-s, before a restart with a higher limit) is retried
// from the stored profile, without measuring it again. Only a failed job
// with a profile is optimised again.
TEST_F(JobServiceTest, AFailedOptimisationIsRetriedFromTheStoredProfile) {
  Result<std::unique_ptr<Store>> store = Store::Open(":memory:", false);
  ASSERT_TRUE(store.ok());
  std::atomic<int> solves{0};
  std::atomic<bool> fail{true};
  auto solver = [&](const Problem& p, const FrontierOptions& o) -> Result<Frontier> {
    ++solves;
    if (fail) return Status::Internal("solver stopped");
    return testing::UniformPlansSolver(p, o);
  };
  Result<std::unique_ptr<JobService>> service = JobService::Create(store->get(), nullptr, solver);
  ASSERT_TRUE(service.ok());
  ASSERT_TRUE(HandleRegisterJob(**service, JobBody("j", 1, 2, 4)).ok());
  EXPECT_EQ((*service)->Reoptimize("j").status().message(),
            "job 'j' cannot be optimised again while registering (only failed jobs; POST /jobs/j/reprofile measures "
            "a running or done one again)");
  testing::RegisterAndProfile(**service, "j", 1, 2, 4);
  (*service)->WaitForOptimizer();
  ASSERT_EQ((*(*service)->JobSummary("j"))["phase"], "failed");
  const std::string profile = (*service)->ProfileCsv("j").value();
  fail = false;
  Result<ApiReply> reply = HandleReoptimize(**service, "j");
  ASSERT_TRUE(reply.ok()) << reply.status().ToString();
  EXPECT_EQ(reply->body["phase"], "optimizing");
  (*service)->WaitForOptimizer();
  const Json summary = *(*service)->JobSummary("j");
  EXPECT_EQ(summary["phase"], "running");
  EXPECT_TRUE(summary["error"].is_null() || summary["error"] == "") << summary.dump();
  EXPECT_EQ(solves.load(), 2);
  EXPECT_EQ((*service)->ProfileCsv("j").value(), profile);  // the same measurements, not new ones
  EXPECT_NE(Plan(**service, "j", 0)["kind"], "max");
  // Running now: nothing to retry.
  EXPECT_EQ((*service)->Reoptimize("j").status().code(), Status::Code::kUnavailable);
  EXPECT_EQ((*service)->Reoptimize("nope").status().code(), Status::Code::kNotFound);
}

// The optimiser's result cannot be committed (a full disk; here a trigger
// that refuses the write): the job stays optimizing, and the maintenance
// tick solves and commits it again once the database takes writes.
TEST_F(JobServiceTest, AnOptimisationThatCouldNotBeStoredIsRetried) {
  const std::string path = tmp_.Path("perseus.db");
  service_.reset();
  store_.reset();
  store_ = Store::Open(path, false).value();
  CarbonOptions manual;
  manual.background = false;
  service_ = JobService::Create(store_.get(), nullptr, testing::UniformPlansSolver, manual).value();
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open(path.c_str(), &db), SQLITE_OK);
  ASSERT_EQ(sqlite3_exec(db,
                         "CREATE TRIGGER refuse_running BEFORE UPDATE OF state_json ON jobs "
                         "WHEN NEW.state_json LIKE '%\"running\"%' BEGIN SELECT RAISE(ABORT, 'database or disk is full'); END",
                         nullptr, nullptr, nullptr),
            SQLITE_OK);
  ASSERT_TRUE(HandleRegisterJob(*service_, JobBody("j", 1, 2, 4)).ok());
  testing::RegisterAndProfile(*service_, "j", 1, 2, 4);
  service_->WaitForOptimizer();
  EXPECT_EQ(Phase("j"), "optimizing");
  service_->MaintenanceTick();  // still refused
  service_->WaitForOptimizer();
  EXPECT_EQ(Phase("j"), "optimizing");
  ASSERT_EQ(sqlite3_exec(db, "DROP TRIGGER refuse_running", nullptr, nullptr, nullptr), SQLITE_OK);
  sqlite3_close(db);
  service_->MaintenanceTick();
  service_->WaitForOptimizer();
  EXPECT_EQ(Phase("j"), "running");
}

// SIGTERM during a long solve: the service stops without waiting for it,
// the job stays optimizing, and the next start solves it.
TEST_F(JobServiceTest, StoppingDoesNotWaitForASolve) {
  const std::string path = tmp_.Path("perseus.db");
  service_.reset();
  store_.reset();
  store_ = Store::Open(path, false).value();
  std::atomic<bool> solving{false};
  auto slow = [&solving](const Problem& p, const FrontierOptions& o) -> Result<Frontier> {
    solving = true;
    for (int i = 0; i < 20000 && !(o.cancel && o.cancel->load()); ++i) {
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
    if (o.cancel && o.cancel->load()) return Status::Unavailable("cancelled");
    return testing::UniformPlansSolver(p, o);
  };
  service_ = JobService::Create(store_.get(), nullptr, slow).value();
  ASSERT_TRUE(HandleRegisterJob(*service_, JobBody("j", 1, 2, 4)).ok());
  testing::RegisterAndProfile(*service_, "j", 1, 2, 4);
  for (int i = 0; i < 5000 && !solving; ++i) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  ASSERT_TRUE(solving);
  const auto start = std::chrono::steady_clock::now();
  service_.reset();  // what SIGTERM does
  EXPECT_LT(std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count(), 10.0);
  Open(path);
  service_->WaitForOptimizer();
  EXPECT_EQ(Phase("j"), "running");  // not "failed": the cancelled solve was not stored
}

// A solver that runs until cancelled on problems of `slow_nodes` computations
// and solves the others at once; counts the solves it is in.
struct SlowSolver {
  int slow_nodes;
  std::atomic<int> solving{0}, cancelled{0};
  Result<Frontier> operator()(const Problem& p, const FrontierOptions& o) {
    if (p.num_nodes() != slow_nodes) return testing::UniformPlansSolver(p, o);
    ++solving;
    while (!(o.cancel && o.cancel->load())) std::this_thread::sleep_for(std::chrono::milliseconds(1));
    --solving;
    ++cancelled;
    return Status::Unavailable("cancelled");
  }
  void AwaitSolving(int n) {
    for (int i = 0; i < 10000 && solving < n; ++i) std::this_thread::sleep_for(std::chrono::milliseconds(1));
    ASSERT_EQ(solving.load(), n);
  }
};

// Stops a service (and its solves) before the solver it was given goes,
// however the test ends: declared after the solver.
struct ResetOnExit {
  std::unique_ptr<JobService>& service;
  ~ResetOnExit() { service.reset(); }
};

// Two optimizer workers (the default): a job whose solve runs on and on
// does not hold up a job that finishes profiling after it.
TEST_F(JobServiceTest, ALongSolveDoesNotHoldUpAnotherJob) {
  SlowSolver slow{2 * 2 * 8};  // "big": 2 stages x 8 microbatches x 2
  const ResetOnExit stop{service_};
  service_ = JobService::Create(store_.get(), nullptr, std::ref(slow)).value();
  ASSERT_TRUE(HandleRegisterJob(*service_, JobBody("big", 1, 2, 8)).ok());
  testing::RegisterAndProfile(*service_, "big", 1, 2, 8);
  slow.AwaitSolving(1);
  ASSERT_TRUE(HandleRegisterJob(*service_, JobBody("small", 1, 2, 4)).ok());
  testing::RegisterAndProfile(*service_, "small", 1, 2, 4);
  for (int i = 0; i < 10000 && Phase("small") != "running"; ++i) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  EXPECT_EQ(Phase("small"), "running");
  EXPECT_EQ(Phase("big"), "optimizing");
  EXPECT_EQ(slow.solving.load(), 1);
  service_.reset();  // stops the solve
  EXPECT_EQ(slow.cancelled.load(), 1);
}

// DELETE /jobs/{id} during its solve ends the solve at its next step, and
// the worker is free for the next job.
TEST_F(JobServiceTest, DeletingAJobStopsItsSolve) {
  ServiceLimits one_worker;
  one_worker.optimizer_workers = 1;
  SlowSolver slow{2 * 2 * 8};
  const ResetOnExit stop{service_};
  service_ = JobService::Create(store_.get(), nullptr, std::ref(slow), {}, one_worker).value();
  ASSERT_TRUE(HandleRegisterJob(*service_, JobBody("big", 1, 2, 8)).ok());
  testing::RegisterAndProfile(*service_, "big", 1, 2, 8);
  slow.AwaitSolving(1);
  ASSERT_TRUE(service_->DeleteJob("big").ok());
  for (int i = 0; i < 10000 && slow.cancelled < 1; ++i) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  EXPECT_EQ(slow.cancelled.load(), 1);
  ASSERT_TRUE(HandleRegisterJob(*service_, JobBody("small", 1, 2, 4)).ok());
  testing::RegisterAndProfile(*service_, "small", 1, 2, 4);
  service_->WaitForOptimizer();
  EXPECT_EQ(Phase("small"), "running");
  EXPECT_EQ(service_->JobSummary("big").status().code(), Status::Code::kNotFound);
  EXPECT_TRUE(store_->LoadAll().value().size() == 1);  // nothing of "big" written back
}

// A solve past --max-solve-s is stopped by the maintenance tick and its job
// fails with a message that names the limit, the job's size and the way out;
// its ranks run at maximum clocks, and a reprofile may try again.
TEST_F(JobServiceTest, ASolvePastTheTimeLimitFailsTheJobNamingIt) {
  ServiceLimits limits;
  limits.max_solve_s = 0.5;
  CarbonOptions manual;
  manual.background = false;
  SlowSolver slow{2 * 2 * 8};
  const ResetOnExit stop{service_};
  service_ = JobService::Create(store_.get(), nullptr, std::ref(slow), manual, limits).value();
  ASSERT_TRUE(HandleRegisterJob(*service_, JobBody("big", 1, 2, 8)).ok());
  const auto registered = std::chrono::steady_clock::now();
  testing::RegisterAndProfile(*service_, "big", 1, 2, 8);
  slow.AwaitSolving(1);
  service_->MaintenanceTick();
  if (std::chrono::steady_clock::now() - registered < std::chrono::milliseconds(400)) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    EXPECT_EQ(slow.solving.load(), 1);  // too early: it runs on
  }
  const Json solving = (*service_->JobSummary("big"))["solving_s"];
  ASSERT_TRUE(solving.is_number()) << solving.dump();
  EXPECT_GT(solving.get<double>(), 0.0);
  EXPECT_NE(RenderMetrics(service_->AllSummaries(), 0).find("perseus_job_solving_seconds{job_id=\"big\"} "),
            std::string::npos);
  std::this_thread::sleep_for(std::chrono::milliseconds(600));
  service_->MaintenanceTick();
  service_->WaitForOptimizer();
  EXPECT_EQ(slow.cancelled.load(), 1);
  const Json summary = *service_->JobSummary("big");
  EXPECT_EQ(summary["phase"], "failed");
  EXPECT_EQ(summary["error"],
            "optimization: stopped after 0.5 s, the server's limit (--max-solve-s): this job's 32 computations per "
            "iteration (2 stages x 8 microbatches, 1f1b) take the optimizer longer. Its profile stays readable (GET "
            "/jobs/big/profile) for perseus optimize offline; to optimise it here, restart the server with a higher "
            "--max-solve-s and POST /jobs/big/optimize");
  EXPECT_EQ(Plan(*service_, "big", 0)["kind"], "max");
  EXPECT_TRUE(summary["solving_s"].is_null());
  EXPECT_EQ(RenderMetrics(service_->AllSummaries(), 0).find("perseus_job_solving_seconds"), std::string::npos);
  EXPECT_TRUE(service_->ProfileCsv("big").ok());  // what the message says to solve offline
}

// POST /jobs/{id}/finish during the solve: its result would be thrown away,
// so the solve stops, and the job is done with no solve shown running.
TEST_F(JobServiceTest, FinishingAJobStopsItsSolve) {
  SlowSolver slow{2 * 2 * 8};
  const ResetOnExit stop{service_};
  service_ = JobService::Create(store_.get(), nullptr, std::ref(slow)).value();
  ASSERT_TRUE(HandleRegisterJob(*service_, JobBody("big", 1, 2, 8)).ok());
  testing::RegisterAndProfile(*service_, "big", 1, 2, 8);
  slow.AwaitSolving(1);
  ASSERT_TRUE(service_->FinishJob("big").ok());
  service_->WaitForOptimizer();
  EXPECT_EQ(slow.cancelled.load(), 1);
  const Json summary = *service_->JobSummary("big");
  EXPECT_EQ(summary["phase"], "done");
  EXPECT_TRUE(summary["solving_s"].is_null());
}

TEST(FindNonFinite, NamesThePathOfTheFirstNaNOrInfinity) {
  Json state = {{"phase", "running"}, {"carbon", {{"powers", {1.0, 2.0, std::nan("")}}}}};
  EXPECT_EQ(FindNonFinite(state, "state"), "state.carbon.powers[2]");
  state["carbon"]["powers"][2] = 3.0;
  EXPECT_EQ(FindNonFinite(state, "state"), std::nullopt);
  EXPECT_EQ(FindNonFinite(Json(INFINITY), "x"), "x");
}

TEST_F(JobServiceTest, AJobTooLargeToHoldIsRefusedNamingTheField) {
  Json big = JobBody("big", 1, 64, 4096);
  Result<ApiReply> r = HandleRegisterJob(*service_, big);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), Status::Code::kInvalidArgument);
  EXPECT_NE(r.status().message().find("field 'microbatches': pp x microbatches x chunks x 2 = 524288"),
            std::string::npos)
      << r.status().message();
  EXPECT_EQ(service_->JobSummary("big").status().code(), Status::Code::kNotFound);
}

// A restarted training job (every rank a new process, e.g. from a
// checkpoint) counts its iterations from 0 again. They must count: the
// server numbers them past everything it has seen, the same for every rank
// of the restart, and keeps that across its own restart. (Before, a full
// window of higher numbers dropped them all, so no straggler could be
// detected and no iteration measured until the plan changed.)
TEST_F(JobServiceTest, ARestartedJobsIterationsCountAgain) {
  const std::string path = tmp_.Path("perseus.db");
  Open(path);
  ASSERT_TRUE(HandleRegisterJob(*service_, JobBody("j", 2, 2, 4)).ok());
  testing::RegisterAndProfile(*service_, "j", 2, 2, 4);
  service_->WaitForOptimizer();
  ASSERT_EQ(Phase("j"), "running");
  auto report = [&](int64_t iteration, double slow_0) {
    for (int r = 0; r < 4; ++r) {
      Json plan = Plan(*service_, "j", r);
      double t = plan["predicted_time_s"].get<double>() * (r / 2 == 0 ? slow_0 : 1.0);
      Json body = {{"iterations", {{{"iteration", iteration}, {"compute_time_s", t}, {"plan_version", plan["version"]}}}}};
      ASSERT_TRUE(HandleReportIterations(*service_, "j", r, body).ok());
    }
  };
  for (int64_t i = 0; i < 30; ++i) report(i, 1.0);
  auto restart = [&](const std::string& session) {
    for (int r = 0; r < 4; ++r) {
      Json body = RankBody(r, r / 2, r % 2);
      body["session"] = session;
      Result<ApiReply> reply = HandleRegisterRank(*service_, "j", body);
      ASSERT_TRUE(reply.ok()) << reply.status().ToString();
      EXPECT_FALSE(reply->created);
    }
  };
  restart("second-run");
  Result<std::vector<StoredJob>> stored = store_->LoadAll();
  ASSERT_TRUE(stored.ok());
  for (const RankInfo& r : (*stored)[0].ranks) {
    EXPECT_EQ(r.iteration_base, 29 + 1 + 10000) << r.rank;  // one base for the whole restart
    EXPECT_EQ(r.session, "second-run");
  }
  restart("second-run");  // a retried registration changes nothing
  for (const RankInfo& r : StoredRanks()) EXPECT_EQ(r.iteration_base, 10030) << r.rank;
  for (int64_t i = 0; i < 5; ++i) report(i, 1.25);  // the new processes' numbers, from 0
  Json s = (*service_->JobSummary("j"))["stragglers"];
  ASSERT_EQ(s.size(), 1u) << "the restarted ranks' iterations were not counted";
  EXPECT_NEAR(s[0]["slowdown"].get<double>(), 1.25, 1e-9);
  Open(path);  // the server restarts too: the bases are kept
  for (int64_t i = 5; i < 15; ++i) report(i, 1.0);
  EXPECT_TRUE((*service_->JobSummary("j"))["stragglers"].empty());
  restart("third-run");  // a second restart starts past the first one's iterations
  for (const RankInfo& r : StoredRanks()) EXPECT_EQ(r.iteration_base, 10030 + 14 + 1 + 10000);
}

// One base for every rank of a launch: a launch that failed before its first
// iteration restarts with the same base for the ranks that had registered
// and those that had not; after a rank restarted alone, the job's next full
// restart aligns every rank again; a requeue on another GPU of the same
// model is a restart, another model is refused.
TEST_F(JobServiceTest, EveryRankOfALaunchGetsOneIterationBase) {
  ASSERT_TRUE(HandleRegisterJob(*service_, JobBody("j", 2, 2, 4)).ok());
  auto register_rank = [&](int r, const std::string& session, const std::string& uuid = "") {
    Json body = RankBody(r, r / 2, r % 2);
    body["session"] = session;
    if (!uuid.empty()) body["gpu_uuid"] = uuid;
    return HandleRegisterRank(*service_, "j", body);
  };
  ASSERT_TRUE(register_rank(0, "a").ok());
  ASSERT_TRUE(register_rank(1, "a").ok());
  ASSERT_TRUE(register_rank(0, "b").ok());  // the launch failed before any iteration; ranks 2, 3 never came
  for (int r : {1, 2, 3}) ASSERT_TRUE(register_rank(r, "b").ok());
  for (const RankInfo& r : StoredRanks()) EXPECT_EQ(r.iteration_base, 0) << r.rank;
  ASSERT_EQ(Phase("j"), "profiling");
  testing::RegisterAndProfile(*service_, "j", 2, 2, 4);
  service_->WaitForOptimizer();
  auto report = [&](int r, int64_t iteration) {
    Json plan = Plan(*service_, "j", r);
    Json body = {{"iterations", {{{"iteration", iteration}, {"compute_time_s", plan["predicted_time_s"]},
                                  {"plan_version", plan["version"]}}}}};
    ASSERT_TRUE(HandleReportIterations(*service_, "j", r, body).ok());
  };
  for (int r = 0; r < 4; ++r) report(r, 99);
  ASSERT_TRUE(register_rank(0, "c").ok());  // rank 0 alone: misaligned until the next full restart
  report(0, 4);
  EXPECT_EQ(StoredRanks()[0].iteration_base, 99 + 1 + 10000);
  for (int r : {1, 2, 3, 0}) ASSERT_TRUE(register_rank(r, "d").ok());  // the full restart, rank 1 first
  const std::vector<RankInfo> ranks = StoredRanks();
  for (const RankInfo& r : ranks) EXPECT_EQ(r.iteration_base, 10100 + 4 + 1 + 10000) << r.rank;
  // A report the replaced process (session "c") still sends is dropped as stale.
  Json old_plan = Plan(*service_, "j", 0);
  Json late = {{"iterations", {{{"iteration", 5}, {"compute_time_s", 1.0}, {"plan_version", old_plan["version"]}}}},
               {"session", "c"}};
  Result<ApiReply> dropped = HandleReportIterations(*service_, "j", 0, late);
  ASSERT_TRUE(dropped.ok()) << dropped.status().ToString();
  EXPECT_EQ(dropped->body["accepted"], 0);
  EXPECT_EQ(dropped->body["stale"], 1);
  late["session"] = "d";
  EXPECT_EQ((*HandleReportIterations(*service_, "j", 0, late)).body["accepted"], 1);
  // A requeue on another GPU of the same model restarts; another model is refused.
  ASSERT_TRUE(register_rank(2, "e", "GPU-elsewhere").ok());
  EXPECT_EQ(StoredRanks()[2].gpu_uuid, "GPU-elsewhere");
  Json other_model = RankBody(3, 1, 1);
  other_model["session"] = "e";
  other_model["gpu_name"] = "Another";
  EXPECT_EQ(HandleRegisterRank(*service_, "j", other_model).status().code(), Status::Code::kUnavailable);
  // An iteration number past what the base leaves is refused, naming the field.
  Json plan = Plan(*service_, "j", 3);
  Json huge = {{"iterations", {{{"iteration", protocol::kMaxIteration}, {"compute_time_s", 1.0},
                                {"plan_version", plan["version"]}}}}};
  EXPECT_EQ(HandleReportIterations(*service_, "j", 3, huge).status().message().rfind(
                "field 'iterations[0].iteration': expected at most ", 0),
            0u);
  // A plan version the server never issued was accepted (a review, 2026-11-28).
  Json unknown = {{"iterations", {{{"iteration", 7}, {"compute_time_s", 1.0},
                                   {"plan_version", plan["version"].get<int64_t>() + 1000}}}}};
  const std::string said = HandleReportIterations(*service_, "j", 3, unknown).status().message();
  EXPECT_EQ(said.rfind("field 'iterations[0].plan_version': job 'j' has issued plan versions up to ", 0), 0u) << said;
}

TEST_F(JobServiceTest, RestartRestoresEverything) {
  const std::string path = tmp_.Path("perseus.db");
  Open(path);
  ASSERT_TRUE(HandleRegisterJob(*service_, JobBody("j", 2, 2, 4)).ok());
  for (int r = 0; r < 4; ++r) ASSERT_TRUE(HandleRegisterRank(*service_, "j", RankBody(r, r / 2, r % 2)).ok());
  ASSERT_TRUE(HandleReportWindow(*service_, "j", 0, testing::WindowBody(0, Plan(*service_, "j", 0), 4)).ok());
  ASSERT_TRUE(HandleReportWindow(*service_, "j", 2, testing::WindowBody(0, Plan(*service_, "j", 2), 4)).ok());
  Json before = *service_->JobSummary("j");
  Json plan_before = Plan(*service_, "j", 0);
  Open(path);  // mid-profiling
  EXPECT_EQ(testing::WithoutTotals(*service_->JobSummary("j")), testing::WithoutTotals(before));
  EXPECT_EQ(Plan(*service_, "j", 0), plan_before);
  testing::RegisterAndProfile(*service_, "j", 2, 2, 4);
  service_->WaitForOptimizer();
  ASSERT_TRUE(HandleDeclareStraggler(*service_, "j", {{"pipeline", 0}, {"slowdown", 1.1}}).ok());
  before = *service_->JobSummary("j");
  plan_before = Plan(*service_, "j", 3);
  Open(path);  // running
  EXPECT_EQ(testing::WithoutTotals(*service_->JobSummary("j")), testing::WithoutTotals(before));
  EXPECT_EQ(Plan(*service_, "j", 3), plan_before);
  EXPECT_EQ(*service_->ProfileCsv("j"), *service_->ProfileCsv("j"));
}

// A profile whose time does not depend on the clock (a CPU-bound job, or a
// rank bound to another GPU than it names) is flagged, and so are clocks
// that do not stick and ranks that run another schedule than declared; each
// warning once, in the summary and in the running plans.
TEST_F(JobServiceTest, WarnsLoudlyAboutWhatMakesAProfileOrAPlanWrong) {
  ASSERT_TRUE(HandleRegisterJob(*service_, JobBody("j", 1, 2, 4)).ok());
  for (int r = 0; r < 2; ++r) ASSERT_TRUE(HandleRegisterRank(*service_, "j", RankBody(r, 0, r)).ok());
  for (int round = 0; round < 1000 && Phase("j") == "profiling"; ++round) {
    for (int r = 0; r < 2; ++r) {
      Json plan = Plan(*service_, "j", r);
      if (plan["kind"] != "profiling") continue;
      Json body = testing::WindowBody(r, plan, 4);
      if (r == 1) {  // stage 1: every computation takes as long at any clock
        FreqPoint f = testing::SyntheticPoint(1, true, 1410), b = testing::SyntheticPoint(1, false, 1410);
        body["forward"]["time_s"] = 4 * f.time_s;
        body["forward"]["time_sq_s2"] = 4 * f.time_s * f.time_s;
        body["backward"]["time_s"] = 4 * b.time_s;
        body["backward"]["time_sq_s2"] = 4 * b.time_s * b.time_s;
        body["cycle_time_s"] = 4 * (f.time_s + b.time_s) + 0.01;
      }
      if (r == 0 && body["forward_clock_mhz"] == body["backward_clock_mhz"]) {
        body["achieved_clock_mhz"] = 780;  // capped
        body["late_clocks"] = 5;           // of 8 computations: more than half
      }
      body["clock_switch_latency_s"] = r == 0 ? 0.1 : 0.002;  // rank 0: a slow switch (NVML showed 100 ms on an H200)
      ASSERT_TRUE(HandleReportWindow(*service_, "j", r, body).ok());
    }
  }
  service_->WaitForOptimizer();
  Json iterations = {{"iterations", {{{"iteration", 1}, {"compute_time_s", 0.5}, {"plan_version", 1},
                                      {"schedule_mismatches", 3}}}}};
  ASSERT_TRUE(HandleReportIterations(*service_, "j", 1, iterations).ok());
  iterations["iterations"][0]["iteration"] = 2;
  ASSERT_TRUE(HandleReportIterations(*service_, "j", 1, iterations).ok());
  std::map<std::string, int> codes;
  const Json summary = *service_->JobSummary("j");
  for (const Json& w : summary["warnings"]) {
    ++codes[w["code"].get<std::string>() + "/" + std::to_string(w["stage"].get<int>()) + "/" +
            std::to_string(w["rank"].get<int>())];
  }
  EXPECT_EQ(codes["clock_has_no_effect/1/-1"], 1) << summary.dump();
  EXPECT_EQ(codes["clock_has_no_effect/0/-1"], 0);
  EXPECT_EQ(codes["achieved_clock/0/0"], 1);
  EXPECT_EQ(codes["clock_late/0/0"], 1);
  EXPECT_EQ(codes["slow_clock_switch/0/0"], 1);
  EXPECT_EQ(codes["slow_clock_switch/1/1"], 0);
  // This solver's plans run one clock per GPU, which no switch delays: not limited.
  EXPECT_EQ(codes["clock_changes_limited/-1/-1"], 0) << summary.dump();
  EXPECT_EQ(codes["schedule_mismatch/1/1"], 1);
  Json plan = Plan(*service_, "j", 0);
  EXPECT_EQ(plan["kind"], "frontier");
  EXPECT_EQ(plan["warnings"].size(), summary["warnings"].size());
}

// What an NVIDIA H200 showed (docs/real_gpu.md, "Online profiling"): a
// one-stage job is never idle, so its windows cannot tell the blocking power;
// with no declared power and a GPU model perseus does not know, the fit took
// -53 kW to absorb noise, and the optimisation failed on the negative power.
// Here: the same shape, 0.1-0.3 ms of waiting at 100 W per window and +-0.5%
// of energy noise (the free fit gave -102 W).
TEST_F(JobServiceTest, AStageThatIsNeverIdleGetsAnAssumedBlockingPowerNotANegativeOne) {
  const Json summary = ProfileOneStageJobWithoutBlockingPower([](Json& body, int window) {
    const double busy_s = body["forward"]["time_s"].get<double>() + body["backward"]["time_s"].get<double>();
    const double wait_s = 1e-4 * (1 + window % 3);
    const double busy_j = body["energy_j"].get<double>() - 60 * (body["cycle_time_s"].get<double>() - busy_s);
    body["cycle_time_s"] = busy_s + wait_s;
    body["energy_j"] = busy_j * (1 + 0.005 * std::sin(7.0 * window)) + 100 * wait_s;
  });
  ASSERT_EQ(summary["phase"], "running") << summary.dump();
  // The assumption, a fifth of the busiest window's power (300 W at 1410 MHz): the windows cannot tell
  // the true 100 W.
  EXPECT_NEAR(summary["blocking_power_w"].get<double>(), 60, 3);
  std::vector<std::string> assumed;
  for (const Json& w : summary["warnings"]) {
    if (w["code"] == "blocking_power_assumed") assumed.push_back(w["message"]);
  }
  ASSERT_EQ(assumed.size(), 1u) << summary.dump();
  EXPECT_NE(assumed[0].find("stage 0's windows cannot tell its blocking power (its GPUs waited 0.1"), std::string::npos)
      << assumed[0];
  EXPECT_NE(assumed[0].find("declare blocking_power_w in the job spec"), std::string::npos) << assumed[0];
  Result<Profile> profile = ParseProfileCsv(*service_->ProfileCsv("j"), "profile", 1);
  ASSERT_TRUE(profile.ok());
  const std::vector<FreqPoint>& fwd = profile->stages[0].at(Instruction::kForward);
  const std::vector<FreqPoint>& bwd = profile->stages[0].at(Instruction::kBackward);
  for (size_t i = 0; i < fwd.size(); ++i) {
    const double truth_j = testing::SyntheticPoint(0, true, fwd[i].freq_mhz).energy_j +
                           testing::SyntheticPoint(0, false, bwd[i].freq_mhz).energy_j;
    EXPECT_NEAR(fwd[i].energy_j + bwd[i].energy_j, truth_j, 0.01 * truth_j) << fwd[i].freq_mhz << " MHz";
  }
}

// Windows that do pin a blocking power outside the plausible limits (here
// -50 W over 5-15 ms of waiting per window): warned about, and held at the
// limits' 20 W (the stage fitted again) so that the job is optimised and runs.
TEST_F(JobServiceTest, AnImplausibleBlockingPowerIsWarnedAboutAndClampedSoTheJobRuns) {
  const Json summary = ProfileOneStageJobWithoutBlockingPower([](Json& body, int) {
    const double busy_s = body["forward"]["time_s"].get<double>() + body["backward"]["time_s"].get<double>();
    const double wait_s = body["cycle_time_s"].get<double>() - busy_s;
    body["energy_j"] = body["energy_j"].get<double>() - 110 * wait_s;  // 60 W - 110 W
  });
  ASSERT_EQ(summary["phase"], "running") << summary.dump();
  EXPECT_DOUBLE_EQ(summary["blocking_power_w"].get<double>(), 20);
  std::set<std::string> codes;
  for (const Json& w : summary["warnings"]) codes.insert(w["code"]);
  EXPECT_TRUE(codes.count("blocking_power_implausible")) << summary.dump();
  EXPECT_FALSE(codes.count("blocking_power_assumed")) << "the windows pin it: nothing was assumed";
}

TEST_F(JobServiceTest, SolverFailureFailsTheJobAndRanksRunAtMax) {
  Result<std::unique_ptr<Store>> store = Store::Open(":memory:", false);
  ASSERT_TRUE(store.ok());
  auto failing = [](const Problem&, const FrontierOptions&) -> Result<Frontier> {
    return Status::Internal("solver stopped");
  };
  Result<std::unique_ptr<JobService>> service = JobService::Create(store->get(), nullptr, failing);
  ASSERT_TRUE(service.ok());
  ASSERT_TRUE(HandleRegisterJob(**service, JobBody("j", 1, 2, 4)).ok());
  testing::RegisterAndProfile(**service, "j", 1, 2, 4);
  (*service)->WaitForOptimizer();
  EXPECT_EQ((*(*service)->JobSummary("j"))["phase"], "failed");
  EXPECT_EQ((*(*service)->JobSummary("j"))["error"], "optimization: solver stopped");
  Json plan = Plan(**service, "j", 1);
  EXPECT_EQ(plan["kind"], "max");
  EXPECT_EQ(plan["sm_clock_mhz"], 1410);
}

}  // namespace
}  // namespace perseus::server
