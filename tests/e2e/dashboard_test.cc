// End to end: the web dashboard in headless Chromium (Debian's `chromium`)
// against the real `perseus serve` (with a token, which the read-only page
// does not need) and 4 emulated ranks (2 pipelines x 2 stages) run to the
// running phase, with a declared straggler and a carbon decision. The test
// asserts on the DOM Chromium rendered (job, phase, frontier points, the
// plans in use, pipeline rows, plans over time, measured energy, carbon
// decisions, an escaped job-supplied string) and keeps a screenshot, checked
// to be a PNG of the window's size that is not blank, in
// build/ci/test-output/dashboard/.
//
// Chromium is optional: without it the tests skip, unless $CI is set, when
// they fail (apt-get install chromium; scripts/install_deps.sh does).
#include <gtest/gtest.h>
#include <png.h>
#include <strings.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <map>
#include <regex>
#include <set>
#include <sstream>
#include <thread>

#include "common/temp_dir_for_test.h"
#include "tests/e2e/runtime_emulation.h"
#include "tests/e2e/runtime_server_process.h"

namespace perseus::e2e {
namespace {

constexpr char kToken[] = "dashboard-token";
constexpr char kJob[] = "dash-e2e";
constexpr int kWidth = 1400, kHeight = 2400;

bool InCi() {
  const char* ci = std::getenv("CI");
  return ci != nullptr && (strcasecmp(ci, "1") == 0 || strcasecmp(ci, "true") == 0 || strcasecmp(ci, "yes") == 0);
}

std::string FindChromium() {
  if (const char* env = std::getenv("PERSEUS_CHROMIUM")) return env;
  for (const char* path : {"/usr/bin/chromium", "/usr/bin/chromium-browser"}) {
    if (access(path, X_OK) == 0) return path;
  }
  return "";
}

#define REQUIRE_CHROMIUM(chromium)                                                                   \
  const std::string chromium = FindChromium();                                                       \
  if (chromium.empty()) {                                                                            \
    if (InCi()) FAIL() << "CI: Debian's chromium is needed for the dashboard test (apt-get install chromium)"; \
    GTEST_SKIP() << "chromium not found (apt-get install chromium, or set PERSEUS_CHROMIUM); skipping";        \
  }

std::string OutputDir() {
  const std::string dir = std::string(PERSEUS_BINARY_DIR) + "/test-output/dashboard";
  std::filesystem::create_directories(dir);
  return dir;
}

std::string Quoted(const std::string& arg) {
  std::string out = "'";
  for (char c : arg) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

std::string ReadAll(const std::string& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

// Runs headless Chromium on `url` with `args`; returns its stdout ("" when it
// failed). Its profile, output and temporary files go in a directory of
// their own, removed when it is done.
std::string RunChromium(const std::string& chromium, const std::string& url, const std::vector<std::string>& args) {
  ScopedTempDir tmp;
  const std::string out = tmp.Path("out"), err = tmp.Path("err");
  std::string cmd = "TMPDIR=" + Quoted(tmp.path()) + " timeout 120 " + Quoted(chromium) +
                    " --headless --no-sandbox --disable-gpu --no-first-run --user-data-dir=" +
                    Quoted(tmp.Path("profile")) + " --virtual-time-budget=6000";
  for (const std::string& a : args) cmd += " " + Quoted(a);
  cmd += " " + Quoted(url) + " >" + Quoted(out) + " 2>" + Quoted(err);
  const int rc = std::system(cmd.c_str());
  EXPECT_EQ(rc, 0) << cmd << "\nstderr:\n" << ReadAll(err);
  return rc == 0 ? ReadAll(out) : "";
}

// Every start tag <tag ...> in `dom`, as attribute -> value.
std::vector<std::map<std::string, std::string>> Elements(const std::string& dom, const std::string& tag) {
  std::vector<std::map<std::string, std::string>> out;
  const std::regex start("<" + tag + R"(\b([^>]*)>)"), attr(R"re(([\w:-]+)="([^"]*)")re");
  for (auto it = std::sregex_iterator(dom.begin(), dom.end(), start); it != std::sregex_iterator(); ++it) {
    std::map<std::string, std::string> attrs;
    const std::string inner = (*it)[1];
    for (auto a = std::sregex_iterator(inner.begin(), inner.end(), attr); a != std::sregex_iterator(); ++a) {
      attrs[(*a)[1]] = (*a)[2];
    }
    out.push_back(std::move(attrs));
  }
  return out;
}

std::string Attr(const std::map<std::string, std::string>& e, const std::string& name) {
  auto it = e.find(name);
  return it == e.end() ? "" : it->second;
}

bool HasClass(const std::map<std::string, std::string>& e, const std::string& name) {
  auto it = e.find("class");
  if (it == e.end()) return false;
  std::istringstream classes(it->second);
  std::string c;
  while (classes >> c) {
    if (c == name) return true;
  }
  return false;
}

std::vector<std::map<std::string, std::string>> WithClass(const std::string& dom, const std::string& tag,
                                                          const std::string& name) {
  std::vector<std::map<std::string, std::string>> out;
  for (auto& e : Elements(dom, tag)) {
    if (HasClass(e, name)) out.push_back(e);
  }
  return out;
}

// The text of the element with id `id` (tags stripped), or "" when absent.
std::string TextOf(const std::string& dom, const std::string& id) {
  const size_t at = dom.find("id=\"" + id + "\"");
  if (at == std::string::npos) return "";
  const size_t open_end = dom.find('>', at), close = dom.find("</", open_end);
  return std::regex_replace(dom.substr(open_end + 1, close - open_end - 1), std::regex("<[^>]*>"), "");
}

// An hourly trace from 2 hours ago to 2 days ahead, at a path holding markup
// (a job-supplied string the page must show as text).
std::string WriteTrace(const ScopedTempDir& dir) {
  const std::string path = dir.Path("trace<img src=x onerror=document.title=1>.csv");
  std::ofstream out(path);
  out << "timestamp,gco2_per_kwh\n";
  const std::time_t start = std::time(nullptr) / 3600 * 3600 - 2 * 3600;
  for (int h = 0; h < 50; ++h) {
    const std::time_t t = start + h * 3600;
    std::tm tm{};
    gmtime_r(&t, &tm);
    char ts[32];
    std::strftime(ts, sizeof ts, "%Y-%m-%dT%H:%M:%SZ", &tm);
    out << ts << "," << (h % 24 < 12 ? 150 : 550) << "\n";
  }
  return path;
}

Json Get(const ServerProcess& server, const std::string& path) { return HttpGet(server.url(), path).json(); }

// The pipelines' iterations in the history, per pipeline, under plans > 0 when `slowed`.
size_t Iterations(const ServerProcess& server, int pipeline, bool slowed) {
  size_t n = 0;
  const Json history = Get(server, std::string("/jobs/") + kJob + "/history");
  for (const Json& p : history["iterations"]) {
    if (p["pipeline"] == pipeline && (!slowed || p["plan_index"].get<int>() > 0)) ++n;
  }
  return n;
}

struct PngStats {
  bool read = false;
  std::string error;
  unsigned width = 0, height = 0;
  size_t colors = 0;             // distinct colours
  double not_background = 0;     // fraction of pixels unlike the most common colour
  size_t marker_pixels = 0;      // pixels of the plan-in-use marker's colour (#d81b60)
};

PngStats ReadPng(const std::string& path) {
  PngStats s;
  png_image image{};
  image.version = PNG_IMAGE_VERSION;
  if (!png_image_begin_read_from_file(&image, path.c_str())) {
    s.error = image.message;
    return s;
  }
  image.format = PNG_FORMAT_RGB;
  std::vector<unsigned char> pixels(PNG_IMAGE_SIZE(image));
  if (!png_image_finish_read(&image, nullptr, pixels.data(), 0, nullptr)) {
    s.error = image.message;
    return s;
  }
  s.read = true;
  s.width = image.width;
  s.height = image.height;
  std::map<uint32_t, size_t> counts;
  for (size_t i = 0; i + 2 < pixels.size(); i += 3) {
    const uint32_t rgb = (pixels[i] << 16) | (pixels[i + 1] << 8) | pixels[i + 2];
    ++counts[rgb];
  }
  size_t most = 0;
  for (const auto& [rgb, n] : counts) most = std::max(most, n);
  s.colors = counts.size();
  s.not_background = 1.0 - static_cast<double>(most) / (pixels.size() / 3);
  s.marker_pixels = counts.count(0xd81b60) ? counts[0xd81b60] : 0;
  return s;
}

TEST(DashboardTest, ShowsTheRunningJobsFrontierPlansStragglersEnergyAndCarbon) {
  REQUIRE_CHROMIUM(chromium);
  ScopedTempDir tmp;  // before the server: removed after it stops
  const std::string trace = WriteTrace(tmp);
  ServerProcess server(PerseusBinary(), tmp.Path("perseus.db"), {"--token-file", TokenFile(tmp.Path("token"), kToken)});
  ASSERT_TRUE(server.Start()) << server.Log();
  const ClusterShape shape{2, 2, 1, 4, "a100", std::nullopt, runtime::IdealRealism()};
  const Json body = {{"id", kJob}, {"dp", shape.dp}, {"pp", shape.pp}, {"tp", shape.tp},
                     {"microbatches", shape.microbatches},
                     {"profiling", {{"window_iterations", 2}, {"clock_stride", 10}}},
                     {"carbon", {{"source", "trace"}, {"trace_path", trace}, {"slowdown_budget", 0.1}}}};
  const HttpReply registered = HttpSend("POST", server.url(), "/jobs", body.dump(), kToken);
  ASSERT_EQ(registered.status, 201) << registered.body;

  Cluster cluster(shape, ServerClusterOptions(server.url(), kToken, kJob));
  cluster.Start();
  const std::string job_path = std::string("/jobs/") + kJob;
  ASSERT_TRUE(WaitUntil([&] { return Get(server, job_path)["phase"] == "running"; }, 400))
      << Get(server, job_path).dump();
  ASSERT_TRUE(WaitUntil([&] { return Iterations(server, 0, false) >= 3 && Iterations(server, 1, false) >= 3; }, 120))
      << Get(server, job_path).dump() << "\n" << Get(server, job_path + "/history").dump();
  // Pipeline 1 declared 20% slower: pipeline 0 slows down to its time.
  ASSERT_EQ(HttpSend("POST", server.url(), job_path + "/stragglers", Json{{"pipeline", 1}, {"slowdown", 1.2}}.dump(),
                     kToken).status, 200);
  ASSERT_TRUE(WaitUntil([&] { return Iterations(server, 0, true) >= 3; }, 120));
  const HttpReply decided = HttpSend("POST", server.url(), job_path + "/carbon/evaluate", "{}", kToken);
  ASSERT_EQ(decided.status, 200) << decided.body;
  // A cap above the job's power: shown, changes no plan.
  const HttpReply capped = HttpSend("PUT", server.url(), job_path + "/power-cap", Json{{"average_w", 1e9}}.dump(), kToken);
  ASSERT_EQ(capped.status, 200) << capped.body;
  // And a server cap above it too: the job's share is shown.
  const HttpReply shared = HttpSend("PUT", server.url(), "/power-cap", Json{{"average_w", 1e9}}.dump(), kToken);
  ASSERT_EQ(shared.status, 200) << shared.body;
  cluster.Pause();  // the page and the snapshot below see the same state
  std::this_thread::sleep_for(std::chrono::milliseconds(500));  // reports in flight arrive
  // The server's own ticks (its first carbon decision after the job runs, a
  // straggler response to a late report) can still change a plan: the page is
  // checked against a state that was the same before and after it rendered.
  Json job, history;
  std::string dom;
  const std::string url = server.url() + "/#job=" + kJob;
  for (int attempt = 0; attempt < 3; ++attempt) {
    job = Get(server, job_path);
    history = Get(server, job_path + "/history");
    dom = RunChromium(chromium, url, {"--dump-dom"});
    if (Get(server, job_path)["pipelines"] == job["pipelines"] &&
        Get(server, job_path + "/history")["events"].size() == history["events"].size()) {
      break;
    }
  }
  const Json frontier = Get(server, job_path + "/frontier");
  // The server's own decision on its first tick after the job runs and the
  // one asked for above are one event or two, depending on timing.
  size_t carbon_events = 0;
  for (const Json& e : history["events"]) carbon_events += e.contains("carbon");
  ASSERT_EQ(job["pipelines"].size(), 2u) << job.dump();
  std::ofstream(OutputDir() + "/dashboard.html") << dom;
  ASSERT_EQ(Elements(dom, "body").at(0)["data-state"], "ready") << TextOf(dom, "error");

  // The job, its phase.
  const auto rows = Elements(dom, "tr");
  EXPECT_TRUE(std::any_of(rows.begin(), rows.end(), [](auto& r) {
    return Attr(r, "data-job") == kJob && Attr(r, "data-phase") == "running";
  })) << dom;
  EXPECT_EQ(TextOf(dom, "job-id"), kJob);
  EXPECT_EQ(TextOf(dom, "job-phase"), "running");
  // Every frontier plan, the plans in use marked with their pipelines.
  const auto plans = WithClass(dom, "circle", "plan");
  EXPECT_EQ(plans.size(), frontier["plans"].size());
  std::map<std::string, std::set<std::string>> marked;  // plan index -> pipelines
  for (auto& p : WithClass(dom, "circle", "in-use")) {
    std::istringstream pipelines(p["data-pipelines"]);
    for (std::string q; pipelines >> q;) marked[p["data-index"]].insert(q);
  }
  std::map<std::string, std::set<std::string>> expected;
  for (const Json& p : job["pipelines"]) {
    expected[std::to_string(p["plan_index"].get<int>())].insert(std::to_string(p["pipeline"].get<int>()));
  }
  EXPECT_EQ(marked, expected) << job["pipelines"].dump();
  EXPECT_GT(job["pipelines"][0]["plan_index"].get<int>(), 0);  // the straggler made pipeline 0 slower
  EXPECT_EQ(WithClass(dom, "rect", "all-max").size(), 1u);
  // One row per pipeline with its plan; pipeline 1 shown as the straggler.
  const auto pipeline_rows = WithClass(dom, "tr", "pipeline-row");
  ASSERT_EQ(pipeline_rows.size(), 2u);
  for (int p = 0; p < 2; ++p) {
    auto row = pipeline_rows[p];
    EXPECT_EQ(row["data-pipeline"], std::to_string(p));
    EXPECT_EQ(row["data-plan-index"], std::to_string(job["pipelines"][p]["plan_index"].get<int>()));
    EXPECT_EQ(HasClass(row, "straggler"), p == 1);
  }
  // Plans over time: a line per pipeline, the straggler marked; measured energy points.
  const auto lines = WithClass(dom, "path", "pipeline-line");
  ASSERT_EQ(lines.size(), 2u);
  const auto marks = WithClass(dom, "path", "straggler-mark");
  ASSERT_FALSE(marks.empty());
  EXPECT_EQ(marks[0].at("data-pipeline"), "1");
  EXPECT_GE(WithClass(dom, "circle", "measured").size(), 6u);
  EXPECT_NE(TextOf(dom, "energy-summary").find("% of the prediction"), std::string::npos);
  // The carbon decisions, newest first, and the trace's path shown as text, not markup.
  const auto decisions = WithClass(dom, "tr", "carbon-decision");
  ASSERT_GE(carbon_events, 1u) << history.dump();
  ASSERT_EQ(decisions.size(), carbon_events);
  EXPECT_EQ(decisions[0].at("data-plan-index"), std::to_string(job["carbon"]["plan_index"].get<int>()));
  EXPECT_NE(dom.find("trace&lt;img src=x onerror=document.title=1&gt;.csv"), std::string::npos);
  EXPECT_TRUE(Elements(dom, "img").empty());
  // The cap in force is the lower of the job's own (1 GW) and its share (its uncapped power).
  EXPECT_NE(TextOf(dom, "power-summary").find(" (api), its share of the server's cap "), std::string::npos)
      << TextOf(dom, "power-summary");
  EXPECT_NE(dom.find("<title>perseus</title>"), std::string::npos);

  const std::string png = OutputDir() + "/dashboard.png";
  std::remove(png.c_str());
  RunChromium(chromium, url,
              {"--screenshot=" + png, "--window-size=" + std::to_string(kWidth) + "," + std::to_string(kHeight),
               "--hide-scrollbars"});
  const PngStats stats = ReadPng(png);
  ASSERT_TRUE(stats.read) << png << ": " << stats.error;
  EXPECT_EQ(stats.width, static_cast<unsigned>(kWidth));
  EXPECT_EQ(stats.height, static_cast<unsigned>(kHeight));
  EXPECT_GT(stats.colors, 50u);
  EXPECT_GT(stats.not_background, 0.05);
  EXPECT_GT(stats.marker_pixels, 20u);  // the plan-in-use markers are drawn
  std::printf("[figures] screenshot %s: %ux%u, %zu colours, %.1f%% not background, %zu marker pixels\n", png.c_str(),
              stats.width, stats.height, stats.colors, 100 * stats.not_background, stats.marker_pixels);
  cluster.Resume();
  cluster.Stop();
}

TEST(DashboardTest, NoJobsAndAnUnknownJobGetClearMessages) {
  REQUIRE_CHROMIUM(chromium);
  ScopedTempDir tmp;
  ServerProcess server(PerseusBinary(), tmp.Path("perseus.db"), {});
  ASSERT_TRUE(server.Start()) << server.Log();
  std::string dom = RunChromium(chromium, server.url() + "/", {"--dump-dom"});
  ASSERT_EQ(Elements(dom, "body").at(0)["data-state"], "ready") << dom;
  EXPECT_NE(TextOf(dom, "no-jobs").find("No jobs are registered"), std::string::npos) << dom;
  for (auto& p : Elements(dom, "p")) {
    if (p["id"] == "no-jobs") {
      EXPECT_EQ(p.count("hidden"), 0u);
    }
  }

  const Json body = {{"id", "other"}, {"microbatches", 4}};
  ASSERT_EQ(HttpSend("POST", server.url(), "/jobs", body.dump(), "").status, 201);
  dom = RunChromium(chromium, server.url() + "/#job=nope", {"--dump-dom"});
  ASSERT_EQ(Elements(dom, "body").at(0)["data-state"], "error") << dom;
  EXPECT_EQ(TextOf(dom, "error"), "GET /jobs/nope: HTTP 404: job 'nope' is not registered");
  const auto rows = Elements(dom, "tr");
  EXPECT_TRUE(std::any_of(rows.begin(), rows.end(), [](auto& r) { return Attr(r, "data-job") == "other"; }));
  EXPECT_TRUE(WithClass(dom, "tr", "pipeline-row").empty());  // no job's data shown for the unknown one
}

// Reads need the token (serve --token-for-reads): the page says so, names a
// wrong token, and with the token from the URL shows the jobs without
// keeping it in the page; `perseus status` reads with --token-file.
TEST(DashboardTest, WithTokenForReadsThePageAsksForTheTokenAndUsesIt) {
  REQUIRE_CHROMIUM(chromium);
  ScopedTempDir tmp;
  const std::string token_file = TokenFile(tmp.Path("token"), kToken);
  ServerProcess server(PerseusBinary(), tmp.Path("perseus.db"), {"--token-file", token_file, "--token-for-reads"});
  ASSERT_TRUE(server.Start()) << server.Log();
  ASSERT_EQ(HttpSend("POST", server.url(), "/jobs", Json{{"id", "secret-job"}, {"microbatches", 4}}.dump(), kToken).status,
            201);

  std::string dom = RunChromium(chromium, server.url() + "/", {"--dump-dom"});
  ASSERT_EQ(Attr(Elements(dom, "body").at(0), "data-state"), "auth") << dom;
  EXPECT_EQ(TextOf(dom, "auth-message"),
            "This server needs its token to show its jobs (it runs with --token-for-reads): GET /jobs: HTTP 401: "
            "header 'Authorization': missing (expected 'Bearer &lt;token&gt;')");
  EXPECT_EQ(dom.find("secret-job"), std::string::npos);

  dom = RunChromium(chromium, server.url() + "/#token=guess", {"--dump-dom"});
  ASSERT_EQ(Attr(Elements(dom, "body").at(0), "data-state"), "auth") << dom;
  EXPECT_EQ(TextOf(dom, "auth-message"),
            "The server refused the token: GET /jobs: HTTP 401: header 'Authorization': wrong token");

  dom = RunChromium(chromium, server.url() + "/#token=" + kToken + "&job=secret-job", {"--dump-dom"});
  ASSERT_EQ(Attr(Elements(dom, "body").at(0), "data-state"), "ready") << TextOf(dom, "error") << TextOf(dom, "auth-message");
  EXPECT_EQ(TextOf(dom, "job-id"), "secret-job");
  EXPECT_EQ(TextOf(dom, "job-phase"), "registering");
  EXPECT_EQ(dom.find(kToken), std::string::npos);  // the token is in sessionStorage, not in the page

  const std::string status = PerseusBinary() + " status --server " + server.url();
  EXPECT_NE(std::system(("env -u PERSEUS_TOKEN " + status + " >/dev/null 2>&1").c_str()), 0);
  EXPECT_EQ(std::system(("env -u PERSEUS_TOKEN " + status + " --token-file " + token_file + " >/dev/null").c_str()), 0);

  // --token-for-reads without a token is refused at start.
  const std::string err = tmp.Path("serve_no_token.err");
  const std::string serve = "env -u PERSEUS_TOKEN " + PerseusBinary() + " serve --db " + tmp.Path("no_token.db") +
                            " --port 0 --token-for-reads 2>" + err;
  EXPECT_NE(std::system(serve.c_str()), 0);
  EXPECT_EQ(ReadAll(err), "perseus: error: --token-for-reads: needs a token (--token-file FILE or $PERSEUS_TOKEN)\n");
}

}  // namespace
}  // namespace perseus::e2e
