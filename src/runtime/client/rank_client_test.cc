// The rank client against an in-process server: registration, profiling,
// running the fastest plan, a straggler, and losing and regaining the server.
#include "runtime/client/rank_client.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <functional>
#include <future>
#include <thread>

#include "common/temp_dir_for_test.h"
#include "perseus/gpu_model.h"
#include "runtime/gpu/simulated_gpu.h"
#include "runtime/server/http_server.h"
#include "runtime/server/test_util.h"

namespace perseus::client {
namespace {

using perseus::Json;

// A rank that runs its stage's schedule on a SimulatedGpu in virtual time.
struct SimRank {
  std::atomic<double> now_s{0};
  std::shared_ptr<runtime::SimulatedGpu> gpu;
  std::unique_ptr<RankClient> client;
  std::vector<Computation> order;
  std::vector<int> last_clocks;  // the clock each computation of the last step ran at
  bool framework = false;        // report durations as a framework would (x0.9, to tell them apart)
  size_t durations_missing = 0;  // a framework that passes this many durations too few each step
  int64_t iteration = 0, sync_wanted = 0;

  void Settle() {
    for (int i = 0; i < 20000 && !client->ClockSettled(); ++i) std::this_thread::sleep_for(std::chrono::microseconds(50));
  }
  void Step() {
    if (client->SyncWantedAtNextStep()) ++sync_wanted;
    client->OnStepBegin();
    last_clocks.clear();
    std::vector<double> durations;
    for (const Computation& c : order) {
      Settle();
      client->OnInstructionBegin(c.instruction);
      KernelWork work{c.instruction == Instruction::kForward ? 0.01 : 0.02, 0.8, 300};
      last_clocks.push_back(gpu->CurrentSmClockMhz());
      const double time_s = gpu->Run(work).time_s;
      now_s = now_s + time_s;
      durations.push_back(0.9 * time_s);
      client->OnInstructionEnd(c.instruction);
      now_s = now_s + 0.002;
    }
    client->OnStepEnd();
    durations.resize(durations.size() - std::min(durations_missing, durations.size() - 1));
    if (framework) {
      EXPECT_TRUE(client->RecordDurations(iteration, durations).ok());
    }
    ++iteration;
  }
};

class RankClientTest : public ::testing::Test {
 protected:
  void StartServer(int port) {
    server::ServerOptions options;
    options.port = port;
    options.threads = 8;
    options.token = "tok";
    http_ = std::make_unique<server::HttpServer>(service_.get(), nullptr, options);
    Result<int> bound = http_->Bind();
    ASSERT_TRUE(bound.ok()) << bound.status().ToString();
    port_ = *bound;
    serve_ = std::thread([this] { http_->Serve(); });
  }
  void StopServer() {
    http_->Stop();
    serve_.join();
    http_.reset();
  }
  virtual bool Framework() const { return false; }
  // Rank r's client, as a new process would make it.
  std::unique_ptr<RankClient> NewClient(int r, SimRank& rank) {
    RankClientOptions o;
    o.server = {"http://127.0.0.1:" + std::to_string(port_), "tok"};
    o.identity = {"job", r, r / 2, r % 2, 0};
    o.poll_interval_ms = 20;
    o.retry_interval_ms = 50;
    o.restore_on_signal = false;
    SimRank* raw = &rank;
    o.now_s = [raw] { return raw->now_s.load(); };
    o.framework_durations = Framework();
    return RankClient::Create(o, rank.gpu).value();
  }
  std::vector<server::RankInfo> StoredRanks() { return store_->LoadAll().value()[0].ranks; }
  int64_t MeasuredIterations() {
    const Json summary = *service_->JobSummary("job");  // not a temporary in the loop's range
    int64_t n = 0;
    for (const Json& p : summary["pipelines"]) n += p["totals"]["measured_iterations"].get<int64_t>();
    return n;
  }
  // The job's spec beyond its shape (a carbon config in the pause tests).
  virtual Json Carbon() { return nullptr; }
  void SetUp() override {
    store_ = server::Store::Open(tmp_.Path("perseus.db"), false).value();
    server::CarbonOptions carbon;
    carbon.clock = [this] { return unix_now_.load(); };
    carbon.background = false;
    service_ = server::JobService::Create(store_.get(), nullptr, server::testing::UniformPlansSolver, carbon).value();
    StartServer(0);
    Json job = {{"id", "job"}, {"dp", 2}, {"pp", 2}, {"microbatches", 4}, {"blocking_power_w", 60},
                {"profiling", {{"iterations_per_clock", 1}, {"clock_stride", 8}}}};
    if (!Carbon().is_null()) job["carbon"] = Carbon();
    ASSERT_TRUE(HandleRegisterJob(*service_, job).ok());
    Result<Schedule> schedule = BuildSchedule({ScheduleKind::k1F1B, 2, 4, 1});
    for (int r = 0; r < 4; ++r) {
      auto rank = std::make_unique<SimRank>();
      SimRank* raw = rank.get();
      rank->gpu = runtime::SimulatedGpu::Create("a100", r, [raw] { return raw->now_s.load(); }).value();
      rank->framework = Framework();
      rank->client = NewClient(r, *rank);
      rank->order = schedule->per_stage[r % 2];
      ranks_.push_back(std::move(rank));
    }
  }
  void TearDown() override {
    for (auto& r : ranks_) r->client->Close();
    if (http_) StopServer();
  }
  // Runs steps on every rank until `done` holds (or ~20 s pass).
  bool RunUntil(const std::function<bool()>& done) {
    for (int i = 0; i < 2000; ++i) {
      if (done()) return true;
      for (auto& r : ranks_) r->Step();
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    return done();
  }
  std::string Phase() { return (*service_->JobSummary("job"))["phase"]; }

  std::atomic<int64_t> unix_now_{1640995200};  // the server's clock: 2022-01-01T00:00:00Z
  ScopedTempDir tmp_;  // before the store: removed after it closes
  std::unique_ptr<server::Store> store_;
  std::unique_ptr<server::JobService> service_;
  std::unique_ptr<server::HttpServer> http_;
  std::thread serve_;
  int port_ = 0;
  std::vector<std::unique_ptr<SimRank>> ranks_;
};

TEST_F(RankClientTest, ProfilesRunsThePlanAndSurvivesTheServerGoingAway) {
  ASSERT_TRUE(RunUntil([&] { return Phase() == "running"; }))
      << (*service_->JobSummary("job")).dump() << " " << ranks_[0]->client->Stats().last_error << " "
      << ranks_[0]->client->Stats().plan_kind << " " << ranks_[0]->client->Stats().windows_sent;
  // Every rank ends up running its stage's fastest frontier plan, clock by clock.
  ASSERT_TRUE(RunUntil([&] {
    for (auto& r : ranks_) {
      if (r->client->Stats().plan_kind != "frontier") return false;
    }
    return true;
  }));
  for (auto& r : ranks_) r->Step();
  for (int i = 0; i < 4; ++i) {
    SimRank& r = *ranks_[i];
    Json plan = Json::parse(*service_->RankPlan("job", i, -1));
    EXPECT_EQ(plan["plan_index"], 0);
    std::vector<int> expected;
    for (const Json& s : plan["instructions"]) expected.push_back(s["sm_clock_mhz"]);
    EXPECT_EQ(r.last_clocks, expected) << "rank " << i;
    EXPECT_EQ(r.client->Stats().schedule_mismatches, 0);
  }
  Result<Profile> profile = ParseProfileCsv(*service_->ProfileCsv("job"), "profile", 2);
  ASSERT_TRUE(profile.ok());
  EXPECT_GT(profile->stages[0].at(Instruction::kForward).size(), 2u);

  // The server goes away: training goes on with the last plan.
  StopServer();
  const int64_t version = ranks_[0]->client->Stats().plan_version;
  for (int i = 0; i < 5; ++i) {
    for (auto& r : ranks_) r->Step();
  }
  std::this_thread::sleep_for(std::chrono::milliseconds(200));
  EXPECT_FALSE(ranks_[0]->client->Stats().connected);
  EXPECT_EQ(ranks_[0]->client->Stats().plan_version, version);
  // It comes back on the same port and database; a straggler reaches the ranks.
  StartServer(port_);
  ASSERT_TRUE(HandleDeclareStraggler(*service_, "job", {{"pipeline", 1}, {"slowdown", 1.3}}).ok());
  ASSERT_TRUE(RunUntil([&] { return ranks_[0]->client->Stats().plan_index > 0; }));
  EXPECT_TRUE(ranks_[0]->client->Stats().connected);
  EXPECT_EQ(ranks_[2]->client->Stats().plan_index, 0);  // the straggler's own pipeline stays fastest
  EXPECT_GT(ranks_[0]->client->Stats().iterations_sent, 0);
}

// The training job restarts (every rank a new process, its iteration count
// back at 0): the new clients register with new sessions, the server gives
// every rank the same new iteration base, and measurement goes on.
// (JobServiceTest.ARestartedJobsIterationsCountAgain shows that without the
// base a restarted job's iterations would not count.)
TEST_F(RankClientTest, ARestartedJobIsMeasuredAgain) {
  ASSERT_TRUE(RunUntil([&] {
    for (auto& r : ranks_) {
      if (r->client->Stats().plan_kind != "frontier") return false;
    }
    return MeasuredIterations() >= 20;
  })) << MeasuredIterations() << " iterations measured";
  std::vector<std::string> sessions;
  for (const server::RankInfo& r : StoredRanks()) sessions.push_back(r.session);
  for (int r = 0; r < 4; ++r) {
    ranks_[r]->client->Close();
    ranks_[r]->client = NewClient(r, *ranks_[r]);
    ranks_[r]->iteration = 0;
  }
  const int64_t before = MeasuredIterations();
  EXPECT_TRUE(RunUntil([&] { return MeasuredIterations() >= before + 20; }))
      << "measured " << MeasuredIterations() << " after the restart, " << before << " before";
  for (const server::RankInfo& r : StoredRanks()) {
    EXPECT_EQ(r.session.size(), 32u);
    EXPECT_NE(r.session, sessions[r.rank]) << r.rank;
    EXPECT_GT(r.iteration_base, 0) << r.rank;
  }
}

// Durations measured by the framework (CUDA events on a real GPU) replace
// the hooks' timestamps in the window reports, and the client asks for a
// device synchronisation only at window boundaries.
class RankClientFrameworkTest : public RankClientTest {
 protected:
  bool Framework() const override { return true; }
};

TEST_F(RankClientFrameworkTest, WindowsReportTheFrameworksDurations) {
  ASSERT_TRUE(RunUntil([&] { return Phase() == "running"; }))
      << (*service_->JobSummary("job")).dump() << " " << ranks_[0]->client->Stats().last_error << " windows sent "
      << ranks_[0]->client->Stats().windows_sent;
  Result<Profile> profile = ParseProfileCsv(*service_->ProfileCsv("job"), "profile", 2);
  ASSERT_TRUE(profile.ok());
  const FreqPoint& fastest = profile->stages[0].at(Instruction::kForward).front();
  EXPECT_EQ(fastest.freq_mhz, 1410);
  EXPECT_NEAR(fastest.time_s, 0.9 * 0.01, 1e-6);  // the framework's durations, not the hooks' 0.01 s
  const SimRank& r = *ranks_[0];
  EXPECT_GT(r.sync_wanted, 0);
  EXPECT_LT(r.sync_wanted * 2, r.iteration);  // window boundaries only
}

// A framework that passes the wrong number of durations: each window is
// reported as soon as its durations are in, with the hooks' timestamps and a
// warning that says what differs. (Before, every window waited 30 s for
// durations that matched and then fell back silently.)
TEST_F(RankClientFrameworkTest, AWrongNumberOfDurationsIsNamedAndNotWaitedOn) {
  for (auto& r : ranks_) r->durations_missing = 1;
  RankClient& rank0 = *ranks_[0]->client;
  ASSERT_TRUE(RunUntil([&] { return rank0.Stats().plan_kind == "profiling"; }));
  const double profiling_from_s = ranks_[0]->now_s;
  ASSERT_TRUE(RunUntil([&] { return rank0.Stats().windows_sent >= 1; }));
  // In virtual time: a window that waited for matching durations would go
  // out 30 s after it ended (kGiveUpOnWindowS); here it goes at once.
  EXPECT_LT(ranks_[0]->now_s - profiling_from_s, 25.0);
  ASSERT_TRUE(RunUntil([&] { return Phase() == "running"; })) << (*service_->JobSummary("job")).dump();
  Result<Profile> profile = ParseProfileCsv(*service_->ProfileCsv("job"), "profile", 2);
  ASSERT_TRUE(profile.ok());
  EXPECT_NEAR(profile->stages[0].at(Instruction::kForward).front().time_s, 0.01, 1e-6);  // the hooks' own
  // Once (other warnings may come too: they are not this test's business).
  std::vector<std::string> about_durations;
  std::string all;
  for (const std::string& w : ranks_[0]->client->TakeWarnings()) {
    all += w + "\n";
    if (w.find("record_durations") != std::string::npos) about_durations.push_back(w);
  }
  ASSERT_EQ(about_durations.size(), 1u) << all;
  EXPECT_NE(about_durations[0].find("rank 0: record_durations gave 7 durations for iteration "), std::string::npos)
      << about_durations[0];
  EXPECT_NE(about_durations[0].find("whose hooks saw 8 computations; profiling uses the hooks' timestamps"),
            std::string::npos)
      << about_durations[0];
}

TEST_F(RankClientFrameworkTest, BadDurationsAreRefusedWhenPassed) {
  RankClient& c = *ranks_[0]->client;
  const double nan = std::nan("");
  EXPECT_EQ(c.RecordDurations(0, {0.01, nan}).message(), "seconds[1]: expected a finite duration >= 0 s, got nan");
  EXPECT_EQ(c.RecordDurations(0, {-0.01}).message(), "seconds[0]: expected a finite duration >= 0 s, got -0.01");
  EXPECT_EQ(c.RecordDurations(0, {1.0 / 0.0}).message(), "seconds[0]: expected a finite duration >= 0 s, got inf");
  EXPECT_TRUE(c.RecordDurations(0, {}).ok());  // a step that ran none of this rank's computations
  EXPECT_EQ(c.RecordDurations(-1, {0.01}).message(), "iteration: expected >= 0, got -1");
  EXPECT_EQ(c.RecordDurations(0, {0.01}).code(), Status::Code::kOk);
}

TEST_F(RankClientTest, ClosingUnlocksTheClock) {
  ASSERT_TRUE(RunUntil([&] { return ranks_[0]->client->Stats().plan_kind == "profiling"; }));
  ranks_[0]->Step();
  ranks_[0]->client->Close();
  EXPECT_EQ(ranks_[0]->gpu->CurrentSmClockMhz(), ranks_[0]->gpu->spec().max_sm_clock_mhz);
  ranks_[0]->client->OnStepBegin();  // hooks stay harmless after Close
  ranks_[0]->client->OnStepEnd();
}

}  // namespace
}  // namespace perseus::client

namespace perseus::client {
namespace {

// A job in deadline mode that may pause, on a grid 12 hours dirty (900
// g/kWh) and 12 hours clean (40) a day: the server pauses it in dirty hours.
class RankClientPauseTest : public RankClientTest {
 protected:
  Json Carbon() override {
    std::string csv = "timestamp,gco2_per_kwh\n";
    for (int h = 0; h < 10 * 24; ++h) {
      char line[64];
      std::snprintf(line, sizeof line, "2022-01-%02dT%02d:00:00Z,%d\n", 1 + h / 24, h % 24, h % 24 < 12 ? 900 : 40);
      csv += line;
    }
    return {{"source", "trace"}, {"trace_path", tmp_.Write("grid.csv", csv)}, {"slowdown_budget", 1.0},
            {"job_hours", 48}, {"pause", Pause()}};
  }
  virtual std::string Pause() const { return "hold"; }
  // Hourly decisions until one pauses (true) or resumes (false) the job.
  bool DecideUntilPaused(bool paused) {
    for (int h = 0; h < 96; ++h) {
      unix_now_ += 3600;
      Result<Json> decided = service_->EvaluateCarbon("job");
      EXPECT_TRUE(decided.ok()) << decided.status().ToString();
      if (decided.ok() && (*decided)["paused"] == paused) return true;
    }
    return false;
  }
  bool AllRanks(const std::function<bool(RankClient&)>& done) {
    for (auto& r : ranks_) {
      if (!done(*r->client)) return false;
    }
    return true;
  }
};

// A hold pause: every rank learns of it, WaitWhilePaused holds the GPU's
// lowest clock until the server resumes the job, and the rank goes on with
// the frontier plan; while it waits the other hooks stay harmless.
TEST_F(RankClientPauseTest, RanksWaitHoldingTheLowestClockUntilTheServerResumes) {
  ASSERT_TRUE(RunUntil([&] { return AllRanks([](RankClient& c) { return c.Stats().plan_kind == "frontier"; }); }));
  EXPECT_EQ(ranks_[0]->client->WaitWhilePaused(10), 0);  // not paused: returns at once
  ASSERT_TRUE(DecideUntilPaused(true));
  const Json plan = Json::parse(*service_->RankPlan("job", 0, -1));
  EXPECT_EQ(plan["kind"], "pause");
  EXPECT_EQ(plan["pause"]["hold_clock_mhz"], 210);  // the A100's lowest
  EXPECT_FALSE(plan["pause"]["release"].get<bool>());
  EXPECT_EQ(plan["pause"]["max_s"].get<double>(), 2 * 3600);
  EXPECT_FALSE(plan["instructions"].empty());  // the frontier plan it runs until the pause and resumes with
  // Every rank pauses before the same iteration, a few ahead: not yet.
  const int64_t from = plan["pause"]["from_iteration"];
  for (int r = 0; r < 4; ++r) EXPECT_EQ(Json::parse(*service_->RankPlan("job", r, -1))["pause"]["from_iteration"], from);
  for (int i = 0; i < 500 && ranks_[0]->client->Stats().plan_kind != "pause"; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  ASSERT_EQ(ranks_[0]->client->Stats().plan_kind, "pause");
  ASSERT_LT(ranks_[0]->client->Stats().iterations, from);
  EXPECT_EQ(ranks_[0]->client->PauseRequested(), RankClient::kNoPause);
  EXPECT_EQ(ranks_[0]->client->WaitWhilePaused(10), 0);
  ASSERT_TRUE(RunUntil([&] {
    return AllRanks([](RankClient& c) { return c.PauseRequested() == RankClient::kHoldPause; });
  }));
  for (auto& r : ranks_) EXPECT_EQ(r->client->Stats().iterations, from);  // all stopped before the same one
  EXPECT_TRUE(ranks_[0]->client->Stats().paused);
  SimRank& r = *ranks_[0];
  std::future<double> waited = std::async(std::launch::async, [&] { return r.client->WaitWhilePaused(1e9); });
  for (int i = 0; i < 200 && r.gpu->CurrentSmClockMhz() != 210; ++i) std::this_thread::sleep_for(std::chrono::milliseconds(10));
  EXPECT_EQ(r.gpu->CurrentSmClockMhz(), 210);
  // The pause outlasts its max_s (2 hours of the rank's clock) while the
  // server keeps answering, over more decisions that keep the job paused.
  // Steps of 240 s: the wait would end only if no poll (every 20 ms) came for 30 of them.
  for (int step = 0; step < 36; ++step) {
    r.now_s = r.now_s + 240;
    std::this_thread::sleep_for(std::chrono::milliseconds(30));
  }
  // Decisions that keep the job paused bump no plan version.
  const int64_t version = r.client->Stats().plan_version;
  int still_paused = 0;
  for (; still_paused < 3 && (*service_->CarbonJson("job"))["paused"].get<bool>(); ++still_paused) {
    unix_now_ += 1800;
    ASSERT_TRUE(service_->EvaluateCarbon("job").ok());
  }
  if ((*service_->CarbonJson("job"))["paused"].get<bool>()) {
    EXPECT_EQ(r.client->Stats().plan_version, version);
  }
  EXPECT_EQ(waited.wait_for(std::chrono::milliseconds(100)), std::future_status::timeout) << "stopped waiting";
  ASSERT_TRUE(DecideUntilPaused(false));
  ASSERT_EQ(waited.wait_for(std::chrono::seconds(20)), std::future_status::ready) << "never resumed";
  EXPECT_GE(waited.get(), 36 * 240 - 1e-6);  // sums of the rank clock's steps
  EXPECT_EQ(r.client->Stats().pauses, 1);
  EXPECT_EQ(r.client->Stats().plan_kind, "frontier");
  r.Step();  // the frontier plan's clocks again
  std::vector<int> expected;
  const Json resumed = Json::parse(*service_->RankPlan("job", 0, -1));  // not a temporary in the loop's range
  EXPECT_EQ(resumed["kind"], "frontier");
  for (const Json& step : resumed["instructions"]) expected.push_back(step["sm_clock_mhz"]);
  EXPECT_EQ(r.last_clocks, expected);
}

// A server that went away does not hold a paused job forever: the rank
// resumes on its own after the pause's max_s, with the plan's steps.
TEST_F(RankClientPauseTest, AWaitEndsAfterThePausesOwnLimit) {
  ASSERT_TRUE(RunUntil([&] { return AllRanks([](RankClient& c) { return c.Stats().plan_kind == "frontier"; }); }));
  ASSERT_TRUE(DecideUntilPaused(true));
  ASSERT_TRUE(RunUntil([&] { return ranks_[0]->client->PauseRequested() == RankClient::kHoldPause; }));
  StopServer();
  SimRank& r = *ranks_[0];
  const double max_s = r.client->current_plan()->pause.max_s;
  std::future<double> waited = std::async(std::launch::async, [&] { return r.client->WaitWhilePaused(1e9); });
  EXPECT_EQ(waited.wait_for(std::chrono::milliseconds(100)), std::future_status::timeout);
  r.now_s = r.now_s + max_s + 1;
  ASSERT_EQ(waited.wait_for(std::chrono::seconds(20)), std::future_status::ready);
  EXPECT_GE(waited.get(), max_s);
  EXPECT_EQ(r.client->WaitWhilePaused(1e9), 0);  // past the limit: no new wait
  EXPECT_EQ(r.client->Stats().pauses, 1);
  r.Step();  // it trains again
  EXPECT_EQ(r.client->Stats().plan_kind, "pause");
}

// A release pause asks the job to stop: nothing waits.
class RankClientReleaseTest : public RankClientPauseTest {
 protected:
  std::string Pause() const override { return "release"; }
};

TEST_F(RankClientReleaseTest, AReleasePauseIsRequestedAndNotWaitedOut) {
  ASSERT_TRUE(RunUntil([&] { return AllRanks([](RankClient& c) { return c.Stats().plan_kind == "frontier"; }); }));
  ASSERT_TRUE(DecideUntilPaused(true));
  ASSERT_TRUE(RunUntil([&] {
    return AllRanks([](RankClient& c) { return c.PauseRequested() == RankClient::kReleasePause; });
  }));
  EXPECT_EQ(ranks_[0]->client->WaitWhilePaused(1e9), 0);
  EXPECT_EQ(ranks_[0]->client->Stats().pauses, 0);
  const Json carbon = *service_->CarbonJson("job");
  EXPECT_TRUE(carbon["paused"].get<bool>());
  EXPECT_EQ(carbon["pause"], "release");
  EXPECT_NE(carbon["explanation"].get<std::string>().find("paused (GPUs released)"), std::string::npos);
}

}  // namespace
}  // namespace perseus::client
