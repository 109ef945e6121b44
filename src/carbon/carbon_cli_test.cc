// End-to-end tests of the real `perseus carbon` binary: outputs, the exact
// error texts, and that nothing is written on error.
#include <httplib.h>
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <thread>

#include "common/strings.h"
#include "common/temp_dir_for_test.h"
#include "emulate_test_util.h"

namespace perseus::e2e {
namespace {

TEST(CarbonCli, FixedIntensityOnTheBundledExampleWritesEveryOutput) {
  ScopedTempDir tmp;
  const std::string out = tmp.Path("out");
  CommandResult r = RunPerseus({"carbon", "--fixed", "300", "--example", "gpt3-xl-a100", "--out", out});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  for (const char* f : {"report.md", "report.json", "week_intensity.svg", "week_plan.svg", "tradeoff.svg", "decisions.log"}) {
    EXPECT_TRUE(std::filesystem::exists(out + "/" + f)) << f;
  }
  nlohmann::json j = nlohmann::json::parse(ReadWholeFile(out + "/report.json"));
  EXPECT_EQ(j["schema"], "perseus.carbon/v2");
  EXPECT_EQ(j["policies"].size(), 10u);
  EXPECT_LE(j["policies"][0]["max_time_added_frac"].get<double>(), 0.05 + 1e-9);
  EXPECT_NE(ReadWholeFile(out + "/decisions.log").find("gCO2/kWh"), std::string::npos);
  // Chase's published point is another workload: in the table with that caveat, not on the plot.
  EXPECT_EQ(ReadWholeFile(out + "/tradeoff.svg").find("Chase"), std::string::npos);
  EXPECT_NE(ReadWholeFile(out + "/report.md").find("Chase (published: ResNet-50"), std::string::npos);
  // A flat trace leaves the optimum nothing to gain over the fixed mix, so no share of it is "captured" (this
  // printed "captured -8942639624927%", a ratio of two rounding errors).
  EXPECT_LT(std::abs(j["split"]["optimum_gain_frac"].get<double>()), 1e-4);
  EXPECT_TRUE(j["split"]["captured_frac"].is_null()) << j["split"].dump();
  EXPECT_TRUE(j["split"]["captured_told_length_frac"].is_null()) << j["split"].dump();
  EXPECT_NE(r.out.find(": the trace does not vary enough for carbon awareness to gain anything\n"), std::string::npos)
      << r.out;
  EXPECT_EQ(r.out.find("captured"), std::string::npos) << r.out;
  EXPECT_NE(ReadWholeFile(out + "/report.md").find("the trace does not vary enough"), std::string::npos);
}

TEST(CarbonCli, ErrorsAreReportedAndNothingIsWritten) {
  ScopedTempDir tmp;
  const std::string& dir = tmp.path();
  CommandResult r = RunPerseus({"carbon", "--example", "gpt3-xl-a100", "--out", dir + "/out"});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_EQ(r.err, "perseus: error: give exactly one of --trace FILE, --eia CISO|NYIS, --fixed G, "
                   "--electricitymaps-zone Z\n");
  EXPECT_FALSE(std::filesystem::exists(dir + "/out"));

  const std::string trace = dir + "/trace.csv";
  std::ofstream(trace) << "timestamp,gco2_per_kwh\n2022-01-01T00:00:00Z,100\n2022-01-01T01:00:00Z,-5\n";
  r = RunPerseus({"carbon", "--trace", trace, "--example", "gpt3-xl-a100", "--out", dir + "/out"});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_EQ(r.err, "perseus: error: " + trace + ":3: column 'gco2_per_kwh': must be >= 0, got -5\n");
  EXPECT_FALSE(std::filesystem::exists(dir + "/out"));

  std::ofstream(trace) << "timestamp,gco2_per_kwh\n2022-01-01T00:00:00Z,100\n";
  r = RunPerseus({"carbon", "--trace", trace, "--example", "gpt3-xl-a100", "--out", dir + "/out"});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_EQ(r.err, "perseus: error: " + trace + ": 1 hour(s) of trace are too short for a job\n");
}

// Inputs that once crashed or hung the CLI (a review, 2026-11-28): each is
// now an error that names what is wrong, exit 1, and no output folder.
TEST(CarbonCli, InputsThatOnceCrashedOrHungAreErrors) {
  ScopedTempDir tmp;
  const std::string out = tmp.Path("out");
  const std::string trace = tmp.Path("trace.csv");
  std::string rows = "timestamp,gco2_per_kwh\n";
  for (int h = 0; h < 48; ++h) rows += Format("2022-01-%02dT%02d:00:00Z,%d\n", 1 + h / 24, h % 24, 100 + h);
  std::ofstream(trace) << rows << "2202-01-03T00:00:00Z,300\n";  // a mistyped year: a hang, then out of memory
  CommandResult r = RunPerseus({"carbon", "--trace", trace, "--example", "gpt3-xl-a100", "--out", out});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find(trace + ":50: timestamp 2202-01-03T00:00:00Z is "), std::string::npos) << r.err;
  EXPECT_FALSE(std::filesystem::exists(out));

  const std::string limits = tmp.Path("pl.csv");
  std::ofstream(limits) << "start_time,window_name,elapsed_time,gpu0_energy\n"
                        << "1,__GlobalPowerLimitOptimizer_99999999999,10,100\n";  // std::stoi threw
  std::ofstream(trace) << rows;
  r = RunPerseus({"carbon", "--trace", trace, "--example", "gpt3-xl-a100", "--power-limit-profile", limits, "--out", out});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_EQ(r.err, "perseus: error: " + limits +
                       ":2: column 'window_name': power limit 99999999999 W: expected 1 to 10000 W\n");
  EXPECT_FALSE(std::filesystem::exists(out));

  // A token file with a line break inside was sent as raw header text (an
  // injected header); an empty one sent no token at all.
  { std::ofstream(tmp.Path("tok")) << "abc\r\nX-Evil: 1\r\n"; }
  { std::ofstream(tmp.Path("empty_tok")) << "\n"; }
  for (const auto& [file, message] : {std::pair{std::string("tok"), std::string(": a line break at character 4 of 14")},
                                      std::pair{std::string("empty_tok"), std::string(": empty")}}) {
    r = RunPerseus({"carbon", "--example", "gpt3-xl-a100", "--electricitymaps-zone", "Z", "--electricitymaps-url",
                    "http://127.0.0.1:9", "--electricitymaps-token-file", tmp.Path(file), "--out", out});
    EXPECT_EQ(r.exit_code, 1) << r.err;
    EXPECT_NE(r.err.find("--electricitymaps-token-file " + tmp.Path(file) + message), std::string::npos) << r.err;
  }

  // The zone went into the query string as given: "FR&zone=DE" asked for another zone.
  r = RunPerseus({"carbon", "--example", "gpt3-xl-a100", "--electricitymaps-zone", "FR&zone=DE", "--out", out});
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_EQ(r.err, "perseus: error: --electricitymaps-zone: expected a zone key such as \"US-CAL-CISO\" (1 to 64 "
                   "letters, digits, '-' or '_'), got \"FR&zone=DE\"\nRun with --help for more information.\n");
  EXPECT_FALSE(std::filesystem::exists(out));

  // Start hours past INT_MAX overflowed (a segfault): the flag is capped at a century.
  r = RunPerseus({"carbon", "--example", "gpt3-xl-a100", "--quiet", "--fixed", "400", "--start-stride-h",
                  "2147483144", "--out", out});
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_EQ(r.err.rfind("perseus: error: --start-stride-h: ", 0), 0u) << r.err;
  EXPECT_FALSE(std::filesystem::exists(out));

  r = RunPerseus({"carbon", "--example", "gpt3-xl-a100", "--electricitymaps-zone", "Z", "--electricitymaps-url",
                  "ftp://x", "--out", out});  // cpp-httplib threw on the scheme
  EXPECT_NE(r.exit_code, 0);
  EXPECT_NE(r.err.find("unsupported URL scheme 'ftp'"), std::string::npos) << r.err;
  r = RunPerseus({"status", "--server", "ftp://x"});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_EQ(r.err, "perseus: error: --server: unsupported URL scheme 'ftp' in 'ftp://x' (expected http:// or https://, in lower case)\n");

  r = RunPerseus({"status", "--ca-cert", tmp.Path("missing.pem")});  // was "Connection"
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_EQ(r.err, "perseus: error: --ca-cert " + tmp.Path("missing.pem") + ": no such file\n");
  r = RunPerseus({"optimize", "--example", "gpt3-xl-a100", "--out", ""});  // was ": Invalid argument"
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_EQ(r.err, "perseus: error: --out: expected a folder, got an empty path\n");
  // A profile whose stages do not fit the pipeline is named.
  const std::string profile = tmp.Path("p.csv");
  std::ofstream(profile) << "stage,instruction,frequency,time,energy\n0,forward,1410,0.05,20\n0,backward,1410,0.1,40\n";
  r = RunPerseus({"optimize", profile, "--stages", "1", "--microbatches", "4", "--blocking-power", "50", "--schedule", "zb-h1", "--out", out});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find(profile + ": stage 0 has no 'backward_input'"), std::string::npos) << r.err;

  // NaN passed CLI11's ranges (every comparison with it is false).
  r = RunPerseus({"carbon", "--fixed", "300", "--example", "gpt3-xl-a100", "--slowdown-budget", "nan", "--out", out});
  EXPECT_NE(r.exit_code, 0);
  EXPECT_NE(r.err.find("--slowdown-budget: expected a number in [0, 1], got nan"), std::string::npos) << r.err;
  r = RunPerseus({"carbon", "--fixed", "1e300", "--example", "gpt3-xl-a100", "--out", out});
  EXPECT_NE(r.exit_code, 0);
  EXPECT_NE(r.err.find("--fixed: expected a number in [0, 10000], got 1e300"), std::string::npos) << r.err;
  EXPECT_FALSE(std::filesystem::exists(out));
}

// An EIA file given as --trace is read as one (its fuel mix feeds the
// forecasts); a run of several seconds prints progress on stderr (the runs
// replayed so far), unless --quiet.
TEST(CarbonCli, AnEiaFileAsTheTraceWithProgressLinesUnlessQuiet) {
  const std::string eia = std::string(PERSEUS_SHARED_DATA) + "/carbon/eia2022_CISO_hourly_ci.csv";
  if (!std::ifstream(eia)) GTEST_SKIP() << "shared data absent: " << eia;
  ScopedTempDir tmp;
  const std::vector<std::string> args = {"carbon", "--trace", eia, "--example", "gpt3-175b-a100", "--start-stride-h",
                                         "240", "--threads", "1"};
  std::vector<std::string> loud = args, quiet = args;
  loud.insert(loud.end(), {"--out", tmp.Path("loud")});
  quiet.insert(quiet.end(), {"--quiet", "--out", tmp.Path("quiet")});
  CommandResult r = RunPerseus(loud);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  // About 7 s on one thread of the CI machine; lines start after 2 s.
  EXPECT_NE(r.err.find(" runs ("), std::string::npos) << r.err;  // "...: 286 of 340 runs (2 s)"
  EXPECT_NE(r.err.find("\nperseus: done in "), std::string::npos) << r.err;
  nlohmann::json j = nlohmann::json::parse(ReadWholeFile(tmp.Path("loud") + "/report.json"));
  EXPECT_EQ(j["forecast_1h"].back()["name"], "ours (ensemble, fuel mix)");
  r = RunPerseus(quiet);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.err, "");
  EXPECT_EQ(ReadWholeFile(tmp.Path("quiet") + "/report.json"), ReadWholeFile(tmp.Path("loud") + "/report.json"));
}

TEST(CarbonCli, ElectricityMapsHistoryFromALocalServer) {
  const std::string fixture = std::string(PERSEUS_SHARED_DATA) +
                              "/carbon/zeus_electricitymaps_US-MIDW-MISO_carbon_history_file1.json";
  const std::string body = ReadWholeFile(fixture);
  if (body.empty()) GTEST_SKIP() << "shared data absent: " << fixture;
  httplib::Server server;
  std::string token;
  server.Get("/v3/carbon-intensity/history", [&](const httplib::Request& req, httplib::Response& res) {
    token = req.get_header_value("auth-token");
    res.set_content(body, "application/json");
  });
  const int port = server.bind_to_any_port("127.0.0.1");
  std::thread t([&] { server.listen_after_bind(); });
  while (!server.is_running()) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  ScopedTempDir tmp;
  const std::string& dir = tmp.path();
  std::ofstream(dir + "/token") << "abc\n";
  CommandResult r = RunPerseus({"carbon", "--electricitymaps-zone", "US-MIDW-MISO", "--electricitymaps-url",
                                "http://127.0.0.1:" + std::to_string(port), "--electricitymaps-token-file",
                                dir + "/token", "--example", "gpt3-xl-a100", "--out", dir + "/out"});
  server.stop();
  t.join();
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(token, "abc");
  nlohmann::json j = nlohmann::json::parse(ReadWholeFile(dir + "/out/report.json"));
  EXPECT_EQ(j["trace"]["hours"], 24);
  EXPECT_EQ(j["job_work_h"], 22);  // 24 hours / 1.05, whole hours

  r = RunPerseus({"carbon", "--electricitymaps-zone", "Z", "--electricitymaps-url", "http://127.0.0.1:1", "--example",
                  "gpt3-xl-a100", "--out", dir + "/out2"});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_EQ(r.err.rfind("perseus: error: GET http://127.0.0.1:1/v3/carbon-intensity/history?zone=Z: ", 0), 0u) << r.err;
  EXPECT_FALSE(std::filesystem::exists(dir + "/out2"));
}

}  // namespace
}  // namespace perseus::e2e
