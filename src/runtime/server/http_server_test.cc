#include "runtime/server/http_server.h"

#include <gtest/gtest.h>
#include <httplib.h>

#include <thread>

#include "runtime/server/test_util.h"

namespace perseus::server {
namespace {

class HttpServerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    store_ = Store::Open(":memory:", false).value();
    service_ = JobService::Create(store_.get(), nullptr, testing::UniformPlansSolver).value();
    ServerOptions options;
    options.port = 0;
    options.token = "s3cret";
    options.max_body_bytes = 4096;
    options.threads = 4;
    server_ = std::make_unique<HttpServer>(service_.get(), nullptr, options);
    Result<int> port = server_->Bind();
    ASSERT_TRUE(port.ok());
    port_ = *port;
    thread_ = std::thread([this] { server_->Serve(); });
    client_ = std::make_unique<httplib::Client>("127.0.0.1", port_);
    client_->set_bearer_token_auth("s3cret");
  }
  void TearDown() override {
    server_->Stop();
    thread_.join();
  }
  // Status and parsed body of a POST.
  std::pair<int, Json> Post(const std::string& path, const std::string& body) {
    httplib::Result r = client_->Post(path, body, "application/json");
    if (!r) return {-1, Json()};
    return {r->status, Json::parse(r->body, nullptr, false)};
  }
  std::pair<int, Json> Get(const std::string& path) {
    httplib::Result r = client_->Get(path);
    if (!r) return {-1, Json()};
    return {r->status, Json::parse(r->body, nullptr, false)};
  }

  std::unique_ptr<Store> store_;
  std::unique_ptr<JobService> service_;
  std::unique_ptr<HttpServer> server_;
  std::unique_ptr<httplib::Client> client_;
  std::thread thread_;
  int port_ = 0;
};

TEST_F(HttpServerTest, BadInputGets4xxNamingTheFieldAndChangesNothing) {
  auto [s1, b1] = Post("/jobs", "{\"id\": \"j\", ");
  EXPECT_EQ(s1, 400);
  EXPECT_EQ(b1["error"]["code"], "invalid_argument");
  EXPECT_EQ(b1["error"]["message"], "body: malformed JSON at byte 13");
  auto [s2, b2] = Post("/jobs", R"({"id": "j", "dp": 2.5, "microbatches": 4})");
  EXPECT_EQ(s2, 400);
  EXPECT_EQ(b2["error"]["field"], "dp");
  auto [s3, b3] = Post("/jobs", "[1, 2]");
  EXPECT_EQ(s3, 400);
  EXPECT_EQ(b3["error"]["message"], "body: expected a JSON object, got [1,2]");
  EXPECT_EQ(Get("/jobs").second["jobs"].size(), 0u);

  ASSERT_EQ(Post("/jobs", testing::JobBody("j", 1, 2, 4).dump()).first, 201);
  auto [s4, b4] = Post("/jobs/nope/ranks", testing::RankBody(0, 0, 0).dump());
  EXPECT_EQ(s4, 404);
  EXPECT_EQ(b4["error"]["message"], "job 'nope' is not registered");
  Json rank = testing::RankBody(0, 0, 0);
  rank["sm_clocks_mhz"] = {1410, "fast"};
  auto [s5, b5] = Post("/jobs/j/ranks", rank.dump());
  EXPECT_EQ(s5, 400);
  EXPECT_EQ(b5["error"]["field"], "sm_clocks_mhz[1]");
  auto [s6, b6] = Get("/jobs/j/ranks/0/plan");
  EXPECT_EQ(s6, 404);
  EXPECT_EQ(b6["error"]["message"], "job 'j': rank 0 is not registered");
  auto [s7, b7] = Get("/jobs/j/ranks/zero/plan");
  EXPECT_EQ(s7, 400);
  EXPECT_EQ(b7["error"]["message"], "path 'rank': expected a non-negative integer, got 'zero'");
  ASSERT_EQ(Post("/jobs/j/ranks", testing::RankBody(0, 0, 0).dump()).first, 201);
  Json dup = testing::RankBody(0, 0, 0);
  dup["gpu_uuid"] = "GPU-x";
  EXPECT_EQ(Post("/jobs/j/ranks", dup.dump()).first, 409);
  EXPECT_EQ(Get("/jobs/j").second["ranks_registered"], 1);
  auto [s8, b8] = Get("/jobs/j/profile");
  EXPECT_EQ(s8, 409);
  EXPECT_EQ(b8["error"]["code"], "conflict");
}

TEST_F(HttpServerTest, MutationsNeedTheToken) {
  httplib::Client anon("127.0.0.1", port_);
  httplib::Result r = anon.Post("/jobs", testing::JobBody("j", 1, 2, 4).dump(), "application/json");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 401);
  EXPECT_EQ(Json::parse(r->body)["error"]["message"],
            "header 'Authorization': missing (expected 'Bearer <token>')");
  anon.set_bearer_token_auth("wrong");
  r = anon.Post("/jobs", testing::JobBody("j", 1, 2, 4).dump(), "application/json");
  EXPECT_EQ(r->status, 401);
  EXPECT_EQ(Get("/jobs").second["jobs"].size(), 0u);
  r = anon.Get("/metrics");  // reads stay open
  EXPECT_EQ(r->status, 200);
}

TEST_F(HttpServerTest, OversizedBodiesAreRefused) {
  Json body = testing::JobBody("j", 1, 2, 4);
  body["padding"] = std::string(8000, 'x');
  auto [status, json] = Post("/jobs", body.dump());
  EXPECT_EQ(status, 413);
  EXPECT_EQ(json["error"]["message"], "body: larger than 4096 bytes");
  EXPECT_EQ(Get("/jobs").second["jobs"].size(), 0u);
}

TEST_F(HttpServerTest, UnknownEndpointsAndMetrics) {
  auto [status, json] = Get("/nothing");
  EXPECT_EQ(status, 404);
  EXPECT_EQ(json["error"]["message"], "no endpoint GET /nothing");
  ASSERT_EQ(Post("/jobs", testing::JobBody("j", 1, 2, 4).dump()).first, 201);
  httplib::Result r = client_->Get("/metrics");
  ASSERT_TRUE(r);
  EXPECT_NE(r->body.find("perseus_job_phase{job=\"j\",phase=\"registering\"} 1"), std::string::npos) << r->body;
  EXPECT_NE(r->body.find("# TYPE perseus_job_world_size gauge"), std::string::npos);
}

TEST_F(HttpServerTest, CarbonConfigAndEndpoints) {
  auto [s1, b1] = Post("/jobs", R"({"id": "c", "pp": 2, "microbatches": 4, "carbon": {"source": "wind"}})");
  EXPECT_EQ(s1, 400);
  EXPECT_EQ(b1["error"]["message"], "field 'carbon.source': expected 'fixed', 'trace' or 'electricitymaps', got \"wind\"");
  Json body = testing::JobBody("c", 1, 2, 4);
  body["carbon"] = {{"source", "fixed"}, {"value_g_per_kwh", 250}};
  EXPECT_EQ(Post("/jobs", body.dump()).first, 201);
  auto [s2, b2] = Get("/jobs/c/carbon");
  EXPECT_EQ(s2, 200);
  EXPECT_EQ(b2["evaluated"], false);
  EXPECT_EQ(b2["config"]["source"], "fixed");
  EXPECT_EQ(Post("/jobs/c/carbon/evaluate", "").first, 409);  // not running yet
  testing::RegisterAndProfile(*service_, "c", 1, 2, 4);
  service_->WaitForOptimizer();
  auto [s3, b3] = Post("/jobs/c/carbon/evaluate", "");
  EXPECT_EQ(s3, 200);
  EXPECT_EQ(b3["intensity_g_per_kwh"], 250.0);
  auto [s4, b4] = Get("/jobs/c/carbon");
  EXPECT_EQ(b4["evaluated"], true);
  EXPECT_EQ(b4["pipelines"].size(), 1u);
  httplib::Result m = client_->Get("/metrics");
  ASSERT_TRUE(m);
  EXPECT_NE(m->body.find("perseus_carbon_intensity_g_per_kwh{job=\"c\"} 250"), std::string::npos) << m->body;
  EXPECT_EQ(Get("/jobs/nope/carbon").first, 404);
}

}  // namespace
}  // namespace perseus::server
