// Tests the ElectricityMaps source against a local cpp-httplib server that
// serves the recorded API response (shared data) or a small inline one.
#include "carbon/electricitymaps_source.h"

#include <httplib.h>
#include <gtest/gtest.h>

#include <atomic>
#include <fstream>
#include <sstream>
#include <thread>

namespace perseus::carbon {
namespace {

constexpr const char kHistory[] =
    R"({"zone":"Z","history":[{"zone":"Z","carbonIntensity":501,"datetime":"2024-11-30T06:00:00.000Z"},)"
    R"({"zone":"Z","carbonIntensity":null,"datetime":"2024-11-30T07:00:00.000Z"},)"
    R"({"zone":"Z","carbonIntensity":401,"datetime":"2024-11-30T08:00:00.000Z"}]})";

std::string FixtureHistory() {
  std::ifstream in(std::string(PERSEUS_SHARED_DATA) + "/carbon/zeus_electricitymaps_US-MIDW-MISO_carbon_history_file1.json");
  if (!in) return "";
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

class FakeElectricityMaps : public testing::Test {
 protected:
  void SetUp() override {
    server_.Get("/v3/carbon-intensity/latest", [this](const httplib::Request& req, httplib::Response& res) {
      seen_token_ = req.get_header_value("auth-token");
      seen_zone_ = req.get_param_value("zone");
      if (fail_) { res.status = 503; res.set_content("down", "text/plain"); return; }
      res.set_content(R"({"zone":"Z","carbonIntensity":321,"datetime":"2024-11-30T06:00:00.000Z"})", "application/json");
    });
    server_.Get("/v3/carbon-intensity/history", [this](const httplib::Request&, httplib::Response& res) {
      if (trickle_) {  // one byte every 100 ms, for ever: every read succeeds, the reply never ends
        res.set_chunked_content_provider("application/json", [this](size_t, httplib::DataSink& sink) {
          std::this_thread::sleep_for(std::chrono::milliseconds(100));
          return !stopping_ && sink.write("[", 1);
        });
        return;
      }
      res.set_content(history_, "application/json");
    });
    port_ = server_.bind_to_any_port("127.0.0.1");
    thread_ = std::thread([this] { server_.listen_after_bind(); });
    while (!server_.is_running()) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  void TearDown() override {
    stopping_ = true;
    server_.stop();
    thread_.join();
  }
  ElectricityMapsConfig Config() {
    ElectricityMapsConfig c;
    c.base_url = "http://127.0.0.1:" + std::to_string(port_);
    c.zone = "US-MIDW-MISO";
    c.token = "secret";
    c.timeout_s = 2;
    return c;
  }
  httplib::Server server_;
  std::thread thread_;
  int port_ = 0;
  bool fail_ = false;
  std::atomic<bool> trickle_{false}, stopping_{false};
  std::string history_ = kHistory;
  std::string seen_token_, seen_zone_;
};

TEST_F(FakeElectricityMaps, LatestSendsTokenAndZone) {
  std::vector<std::string> logs;
  ElectricityMapsSource src(Config(), [&](const std::string& l) { logs.push_back(l); });
  IntensityReading r = src.Current(0);
  EXPECT_DOUBLE_EQ(r.carbon_g_per_kwh, 321);
  EXPECT_FALSE(r.stale);
  EXPECT_EQ(r.unix_s, 1732946400);
  EXPECT_EQ(seen_token_, "secret");
  EXPECT_EQ(seen_zone_, "US-MIDW-MISO");
  EXPECT_TRUE(logs.empty());
}

TEST_F(FakeElectricityMaps, FailuresFallBackToTheLastKnownValueAndLog) {
  std::vector<std::string> logs;
  ElectricityMapsSource src(Config(), [&](const std::string& l) { logs.push_back(l); });
  ASSERT_DOUBLE_EQ(src.Current(0).carbon_g_per_kwh, 321);
  fail_ = true;
  IntensityReading r = src.Current(100);
  EXPECT_DOUBLE_EQ(r.carbon_g_per_kwh, 321);
  EXPECT_TRUE(r.stale);
  ASSERT_EQ(logs.size(), 1u);
  EXPECT_NE(logs[0].find("HTTP 503"), std::string::npos) << logs[0];
  EXPECT_NE(logs[0].find("using the last known value 321.0 gCO2/kWh"), std::string::npos) << logs[0];
}

TEST_F(FakeElectricityMaps, UnreachableServerUsesTheFallbackValue) {
  ElectricityMapsConfig c = Config();
  c.base_url = "http://127.0.0.1:1";  // nothing listens there
  c.fallback_carbon_g_per_kwh = 123;
  std::vector<std::string> logs;
  ElectricityMapsSource src(c, [&](const std::string& l) { logs.push_back(l); });
  IntensityReading r = src.Current(7);
  EXPECT_DOUBLE_EQ(r.carbon_g_per_kwh, 123);
  EXPECT_TRUE(r.stale);
  ASSERT_EQ(logs.size(), 1u);
  EXPECT_NE(logs[0].find("configured fallback"), std::string::npos);
  // In words, not cpp-httplib's enumerator ("Connection").
  EXPECT_EQ(logs[0].find("GET http://127.0.0.1:1/v3/carbon-intensity/latest?zone=" + c.zone +
                         ": cannot connect (is the server running and reachable at that address?)"),
            std::string("carbon: ").size())
      << logs[0];
  EXPECT_FALSE(src.FetchHistory().ok());
}

TEST_F(FakeElectricityMaps, HistoryOfTheRecordedResponse) {
  std::string fixture = FixtureHistory();
  if (fixture.empty()) GTEST_SKIP() << "shared data absent: zeus_electricitymaps_*_file1.json";
  history_ = fixture;
  ElectricityMapsSource src(Config(), nullptr);
  Result<IntensityTrace> t = src.FetchHistory();
  ASSERT_TRUE(t.ok()) << t.status().ToString();
  EXPECT_EQ(t->size(), 24);
  EXPECT_EQ(t->start_unix_s, 1732946400);  // 2024-11-30T06:00Z
  EXPECT_DOUBLE_EQ(t->carbon_g_per_kwh[0], 501);
  EXPECT_DOUBLE_EQ(t->carbon_g_per_kwh[1], 419);
}

TEST_F(FakeElectricityMaps, HistoryNullsAreInterpolated) {
  ElectricityMapsSource src(Config(), nullptr);
  Result<IntensityTrace> t = src.FetchHistory();
  ASSERT_TRUE(t.ok()) << t.status().ToString();
  ASSERT_EQ(t->size(), 3);
  EXPECT_DOUBLE_EQ(t->carbon_g_per_kwh[1], 451);
  EXPECT_EQ(t->notes.size(), 1u);
}

// A job's first decision starts from the history endpoint's hours before the
// hour now (which `latest` gives live); a failed request gives nothing, logged.
TEST_F(FakeElectricityMaps, HistoryBeforeTheHourNowOrNothingLogged) {
  std::vector<std::string> logs;
  ElectricityMapsSource src(Config(), [&](const std::string& l) { logs.push_back(l); });
  const int64_t at_0830 = 1732946400 + 2 * 3600 + 1800;  // 2024-11-30T08:30Z
  std::vector<IntensityReading> h = src.History(at_0830, 24);
  ASSERT_EQ(h.size(), 2u);  // 06:00 and 07:00 (interpolated); 08:00 is the live hour
  EXPECT_DOUBLE_EQ(h[0].carbon_g_per_kwh, 501);
  EXPECT_DOUBLE_EQ(h[1].carbon_g_per_kwh, 451);
  EXPECT_EQ(h[1].unix_s, 1732946400 + 3600);
  EXPECT_EQ(src.History(at_0830 + 86400, 48).size(), 3u);  // a day later: all three
  EXPECT_EQ(src.History(at_0830 + 86400, 24).size(), 1u);  // only 08:00 is within the last 24 hours
  EXPECT_TRUE(logs.empty());
  history_ = "not json";
  EXPECT_TRUE(src.History(at_0830, 24).empty());
  ASSERT_EQ(logs.size(), 1u);
  EXPECT_NE(logs[0].find("carbon: no history to start from: "), std::string::npos) << logs[0];
}

// A server that trickles its reply passes every read timeout; the whole
// reply has one deadline, so a carbon decision cannot be held for ever.
TEST_F(FakeElectricityMaps, ATricklingServerIsCutOffAtTheTimeout) {
  trickle_ = true;
  ElectricityMapsConfig c = Config();
  c.timeout_s = 0.5;
  ElectricityMapsSource src(c, nullptr);
  const auto start = std::chrono::steady_clock::now();
  Result<IntensityTrace> history = src.FetchHistory();
  const double took_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  ASSERT_FALSE(history.ok());
  EXPECT_NE(history.status().message().find("not complete within the timeout"), std::string::npos)
      << history.status().message();
  EXPECT_LT(took_s, 5.0);  // bounded (0.5 s and one more read), not waiting for an end that never comes
}

TEST(ElectricityMapsJson, ErrorsSayWhere) {
  EXPECT_EQ(ParseElectricityMapsHistory("{", "h").status().message(), "h: not valid JSON");
  EXPECT_EQ(ParseElectricityMapsHistory("{}", "h").status().message(), "h: missing array field 'history'");
  EXPECT_EQ(ParseElectricityMapsHistory(R"({"history":[{"carbonIntensity":1}]})", "h").status().message(),
            "h: history[0]: missing string field 'datetime'");
  EXPECT_EQ(ParseElectricityMapsLatest(R"({"carbonIntensity":"x","datetime":"2024-11-30T06:00:00Z"})", "l")
                .status().message(),
            "l: field 'carbonIntensity': expected a number");
  // A negative reading is refused as a CSV's is, not decided on.
  EXPECT_EQ(ParseElectricityMapsHistory(
                R"({"history":[{"carbonIntensity":-5,"datetime":"2024-11-30T06:00:00Z"}]})", "h").status().message(),
            "h: history[0]: field 'carbonIntensity': carbon intensity -5 gCO2/kWh: expected 0 to 10000");
  EXPECT_FALSE(ParseElectricityMapsLatest(R"({"carbonIntensity":1e300,"datetime":"2024-11-30T06:00:00Z"})", "l").ok());
  // A reply dated far ahead is refused, not filled hour by hour.
  EXPECT_NE(ParseElectricityMapsHistory(R"({"history":[{"carbonIntensity":5,"datetime":"2024-11-30T06:00:00Z"},)"
                                        R"({"carbonIntensity":5,"datetime":"9999-11-30T06:00:00Z"}]})",
                                        "h")
                .status()
                .message()
                .find("h: history[1]: timestamp 9999-11-30T06:00:00Z is"),
            std::string::npos);
}

TEST(ElectricityMapsSource, AnUnsupportedUrlSchemeIsAnErrorNotACrash) {
  ElectricityMapsConfig c;
  c.zone = "Z";
  c.base_url = "ftp://x";
  ElectricityMapsSource src(c, [](const std::string&) {});
  EXPECT_EQ(src.FetchHistory().status().message(),
            "ElectricityMaps base URL: unsupported URL scheme 'ftp' in 'ftp://x' (expected http:// or https://, in lower case)");
}

// A zone key goes into the query string as it is: one that would change the request is refused.
TEST(ElectricityMapsSource, AZoneThatWouldChangeTheRequestIsRefused) {
  for (const std::string zone : {"US-CAL-CISO", "DE", "DK-DK1", "a_b"}) EXPECT_TRUE(CheckElectricityMapsZone(zone).ok()) << zone;
  for (const std::string& zone : std::vector<std::string>{"", "FR&zone=DE", "FR#", "US CAL", "../x", "Z\n", std::string(65, 'A')}) {
    EXPECT_FALSE(CheckElectricityMapsZone(zone).ok()) << zone;
  }
  ElectricityMapsConfig c;
  c.zone = "FR&zone=DE";
  c.base_url = "http://127.0.0.1:1";
  ElectricityMapsSource src(c, [](const std::string&) {});
  EXPECT_EQ(src.FetchHistory().status().message(),
            "ElectricityMaps zone: expected a zone key such as \"US-CAL-CISO\" (1 to 64 letters, digits, '-' or '_'), "
            "got \"FR&zone=DE\"");
}

}  // namespace
}  // namespace perseus::carbon
