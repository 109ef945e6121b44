// What an open dashboard costs the server: one refresh (GET /jobs,
// /jobs/{id}, /jobs/{id}/frontier, /jobs/{id}/history, as the page does every
// 2 s) for a job of 64 pipelines x 8 stages whose history is full (4,096
// pipeline iterations) with 2 x 25 straggler changes, and the largest
// history reply (?events=1024&iterations=4096). Prints medians and p99s.
#include <httplib.h>

#include <cstdio>

#include "bench/runtime/runtime_bench_util.h"

using namespace perseus;
using perseus::Json;

namespace {

constexpr int kDp = 64, kPp = 8, kMicrobatches = 12, kRepeats = 200;

// Every rank reports iterations [first, first + count) at its plan's time.
void ReportIterations(server::JobService& service, int64_t first, int count) {
  for (int r = 0; r < kDp * kPp; ++r) {
    Json plan = server::testing::Plan(service, "dash", r);
    Json iterations = Json::array();
    for (int64_t i = first; i < first + count; ++i) {
      iterations.push_back({{"iteration", i}, {"compute_time_s", plan["predicted_time_s"]}, {"energy_j", 100.0},
                            {"plan_version", plan["version"]}});
    }
    bench::RunningServer::Check(HandleReportIterations(service, "dash", r, {{"iterations", iterations}}).status());
  }
}

// Milliseconds of each of kRepeats runs of `fetch`, which returns the bytes it read.
std::vector<double> Time(const std::function<size_t()>& fetch, size_t* bytes) {
  std::vector<double> ms;
  for (int i = 0; i < kRepeats; ++i) {
    const double start = bench::NowS();
    *bytes = fetch();
    ms.push_back((bench::NowS() - start) * 1e3);
  }
  return ms;
}

}  // namespace

int main() {
  const double setup_start = bench::NowS();
  bench::RunningServer server("dash", kDp, kPp, 1, kMicrobatches, 8);
  int64_t next = 0;
  for (int change = 0; change < 25; ++change) {
    bench::RunningServer::Check(HandleDeclareStraggler(*server.service, "dash", {{"pipeline", change % kDp}, {"slowdown", 1.2}}).status());
    ReportIterations(*server.service, next, 2);
    next += 2;
    bench::RunningServer::Check(server.service->ClearStraggler("dash", change % kDp).status());
  }
  ReportIterations(*server.service, next, 64);
  const Json full = *server.service->HistoryJson("dash", {1024, 4096, std::nullopt});
  std::printf("runtime_dashboard_bench: dp %d x pp %d job set up in %.1f s; history holds %zu events, %zu iterations\n",
              kDp, kPp, bench::NowS() - setup_start, full["events"].size(), full["iterations"].size());

  httplib::Client client("127.0.0.1", server.port);
  client.set_keep_alive(true);
  auto get = [&](const std::string& path) {
    httplib::Result r = client.Get(path);
    if (!r || r->status != 200) {
      std::fprintf(stderr, "GET %s failed\n", path.c_str());
      std::exit(1);
    }
    return r->body.size();
  };
  size_t refresh_bytes = 0, history_bytes = 0;
  const std::vector<double> refresh = Time(
      [&] { return get("/jobs") + get("/jobs/dash") + get("/jobs/dash/frontier") + get("/jobs/dash/history"); },
      &refresh_bytes);
  const std::vector<double> largest = Time([&] { return get("/jobs/dash/history?events=1024&iterations=4096"); },
                                           &history_bytes);
  std::printf("  one dashboard refresh (4 GETs, %.0f KiB): median %.2f ms, p99 %.2f ms\n", refresh_bytes / 1024.0,
              bench::Percentile(refresh, 0.5), bench::Percentile(refresh, 0.99));
  std::printf("  largest history reply (%.0f KiB): median %.2f ms, p99 %.2f ms\n", history_bytes / 1024.0,
              bench::Percentile(largest, 0.5), bench::Percentile(largest, 0.99));
  return 0;
}
