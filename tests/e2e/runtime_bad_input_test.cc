// End to end: the real server binary refuses bad input with a 4xx and a JSON
// error naming the field, and leaves its state unchanged.
#include <gtest/gtest.h>

#include "common/temp_dir_for_test.h"
#include "tests/e2e/runtime_server_process.h"

namespace perseus::e2e {
namespace {

constexpr char kToken[] = "t0ken";

class RuntimeBadInputTest : public ::testing::Test {
 protected:
  void SetUp() override {
    server_ = std::make_unique<ServerProcess>(
        PerseusBinary(), tmp_.Path("perseus.db"),
        std::vector<std::string>{"--token-file", TokenFile(tmp_.Path("token"), kToken), "--max-body-bytes", "65536"});
    ASSERT_TRUE(server_->Start());
    Json job = {{"id", "j"}, {"dp", 1}, {"pp", 2}, {"microbatches", 4}};
    ASSERT_EQ(Post("/jobs", job.dump()).status, 201);
    Json rank = {{"rank", 0}, {"dp_rank", 0}, {"pp_rank", 0}, {"tp_rank", 0}, {"gpu_name", "A100"},
                 {"gpu_uuid", "GPU-0"}, {"sm_clocks_mhz", {1410, 1395}}};
    ASSERT_EQ(Post("/jobs/j/ranks", rank.dump()).status, 201);
    rank["rank"] = 1;
    rank["pp_rank"] = 1;
    rank["gpu_uuid"] = "GPU-1";
    ASSERT_EQ(Post("/jobs/j/ranks", rank.dump()).status, 201);
    state_ = Get("/jobs/j").body;
  }
  HttpReply Post(const std::string& path, const std::string& body, const std::string& token = kToken) {
    return HttpSend("POST", server_->url(), path, body, token);
  }
  HttpReply Get(const std::string& path) { return HttpGet(server_->url(), path); }
  void ExpectError(const HttpReply& r, int status, const std::string& message) {
    EXPECT_EQ(r.status, status) << r.body;
    EXPECT_EQ(r.json()["error"]["message"], message) << r.body;
    EXPECT_EQ(Get("/jobs/j").body, state_);
  }

  ScopedTempDir tmp_;  // before the server: removed after it stops
  std::unique_ptr<ServerProcess> server_;
  std::string state_;
};

TEST_F(RuntimeBadInputTest, EveryKindOfBadInput) {
  ExpectError(Post("/jobs/j/ranks/0/windows", "{\"window\": 0,"), 400, "body: malformed JSON at byte 14");
  // The body is parsed first, then the job is looked up.
  ExpectError(Post("/jobs/nope/ranks/0/windows", "{}"), 400, "field 'window': missing");
  ExpectError(Post("/jobs/nope/ranks/0/iterations", R"({"iterations": []})"), 404, "job 'nope' is not registered");
  ExpectError(Post("/jobs/j/ranks/7/iterations", R"({"iterations": []})"), 404, "job 'j': rank 7 is not registered");
  Json m = {{"window", "0"}};
  ExpectError(Post("/jobs/j/ranks/0/windows", m.dump()), 400, "field 'window': expected an integer, got \"0\"");
  m = {{"window", 0}, {"forward_clock_mhz", 1200}, {"backward_clock_mhz", 1410}, {"iterations", 1},
       {"cycle_time_s", 1.0}, {"energy_j", 300},
       {"forward", {{"count", 4}, {"time_s", 0.2}, {"time_sq_s2", 0.01}}},
       {"backward", {{"count", 4}, {"time_s", 0.4}, {"time_sq_s2", 0.04}}}};
  ExpectError(Post("/jobs/j/ranks/0/windows", m.dump()), 400,
              "field 'forward_clock_mhz': window 0 runs stage 0's forwards at 1410 MHz, not 1200");
  m["forward_clock_mhz"] = 1410;
  m["backward"]["time_s"] = -1;
  ExpectError(Post("/jobs/j/ranks/0/windows", m.dump()), 400,
              "field 'backward.time_s': expected a number in [4e-07, 40000], got -1");
  m["backward"]["time_s"] = 0.4;
  m["energy_j"] = 1e10;
  ExpectError(Post("/jobs/j/ranks/0/windows", m.dump()), 400,
              "field 'energy_j': expected a number in [0, 5000], got 10000000000.0");
  m["energy_j"] = 300;
  m["window"] = 5000;
  ExpectError(Post("/jobs/j/ranks/0/windows", m.dump()), 400, "field 'window': job 'j' has no window 5000");
  Json it = {{"iterations", {{{"iteration", 1}, {"compute_time_s", 0.5}, {"plan_version", "new"}}}}};
  ExpectError(Post("/jobs/j/ranks/0/iterations", it.dump()), 400,
              "field 'iterations[0].plan_version': expected an integer, got \"new\"");
  Json dup = {{"rank", 1}, {"dp_rank", 0}, {"pp_rank", 1}, {"tp_rank", 0}, {"gpu_name", "A100"},
              {"gpu_uuid", "GPU-9"}, {"sm_clocks_mhz", {1410, 1395}}};
  ExpectError(Post("/jobs/j/ranks", dup.dump()), 409,
              "job 'j': rank 1 (GPU-1 at dp 0, pp 1, tp 0) is already registered with different details");
  ExpectError(Post("/jobs/j/stragglers", R"({"pipeline": 0, "slowdown": 1.2})"), 409,
              "job 'j' is not running (phase profiling)");
  ExpectError(Post("/jobs", std::string(70000, ' ')), 413, "body: larger than 65536 bytes");
  ExpectError(Post("/jobs/j/finish", "{}", ""), 401, "header 'Authorization': missing (expected 'Bearer <token>')");
  ExpectError(Post("/jobs/j/finish", "{}", "wrong"), 401, "header 'Authorization': wrong token");
  ExpectError(Get("/jobs/j/ranks/0/plan?version=x"), 400, "query 'version': expected a non-negative integer, got 'x'");
  EXPECT_EQ(Get("/jobs/j/ranks/0/plan").json()["window"]["forward_clock_mhz"], 1410);
  // Requests for an unknown job or rank are counted where an operator looks.
  EXPECT_EQ(Get("/jobs").json()["unknown_rank_requests"], 2);
  EXPECT_NE(Get("/metrics").body.find("perseus_unknown_rank_requests_total 2\n"), std::string::npos);
}

}  // namespace
}  // namespace perseus::e2e
