// Plan checks at scale: 8,192 ranks (dp 256 x pp 8 x tp 4) each check their
// plan once per training iteration over HTTP keep-alive connections (the rank
// client's request; the plan is unchanged). Prints the median latency of one
// check (target < 5 ms) when the checks are spread over a 1 s iteration, and
// the wall time of a burst of all 8,192 at once. Client and server share the
// machine's cores.
#include <httplib.h>

#include <atomic>
#include <cstdio>

#include "bench/runtime/runtime_bench_util.h"

using namespace perseus;

namespace {

constexpr int kDp = 256, kPp = 8, kTp = 4, kRanks = kDp * kPp * kTp;

// Every rank checks once; connection c sends its ranks at start + i * spacing_s.
std::vector<double> CheckAll(const std::string& url, const std::vector<int64_t>& versions, int connections,
                             double spacing_s, int* failures) {
  std::vector<double> latency_ms;
  std::mutex mu;
  std::atomic<int> failed{0};
  std::vector<std::thread> threads;
  const double start = bench::NowS();
  for (int c = 0; c < connections; ++c) {
    threads.emplace_back([&, c] {
      httplib::Client client(url);
      client.set_keep_alive(true);
      client.set_tcp_nodelay(true);
      std::vector<double> mine;
      int i = 0;
      for (int r = c; r < kRanks; r += connections, ++i) {
        double due = start + i * spacing_s;
        while (bench::NowS() < due) std::this_thread::sleep_for(std::chrono::microseconds(200));
        std::string path = "/jobs/poll/ranks/" + std::to_string(r) + "/plan?version=" + std::to_string(versions[r]);
        double a = bench::NowS();
        httplib::Result res = client.Get(path);
        mine.push_back((bench::NowS() - a) * 1e3);
        if (!res || res->status != 200 || res->body.find("\"changed\":false") == std::string::npos) ++failed;
      }
      std::lock_guard<std::mutex> lock(mu);
      latency_ms.insert(latency_ms.end(), mine.begin(), mine.end());
    });
  }
  for (std::thread& t : threads) t.join();
  *failures = failed;
  return latency_ms;
}

}  // namespace

int main() {
  const int connections = 32;
  double t0 = bench::NowS();
  bench::RunningServer server("poll", kDp, kPp, kTp, 16, 2 * connections + 8);
  std::printf("runtime_plan_poll_bench: %d ranks set up (registered, profiled, optimised) in %.1f s\n", kRanks,
              bench::NowS() - t0);
  std::vector<int64_t> versions(kRanks);
  for (int r = 0; r < kRanks; ++r) {
    versions[r] = perseus::Json::parse(*server.service->RankPlan("poll", r, -1))["version"];
  }
  const double iteration_s = 1.0;
  std::vector<double> paced;
  for (int it = 0; it < 3; ++it) {
    int failures = 0;
    double a = bench::NowS();
    std::vector<double> l = CheckAll(server.url(), versions, connections, iteration_s * connections / kRanks, &failures);
    std::printf("  paced iteration %d: %d checks spread over %.1f s took %.2f s, median %.3f ms, p99 %.3f ms (%d failed)\n",
                it, kRanks, iteration_s, bench::NowS() - a, bench::Percentile(l, 0.5), bench::Percentile(l, 0.99),
                failures);
    paced.insert(paced.end(), l.begin(), l.end());
  }
  std::vector<double> burst;
  for (int it = 0; it < 3; ++it) {
    int failures = 0;
    double a = bench::NowS();
    std::vector<double> l = CheckAll(server.url(), versions, connections, 0, &failures);
    std::printf("  burst iteration %d: all %d checks at once over %d connections: %.0f ms, median %.3f ms (%d failed)\n",
                it, kRanks, connections, (bench::NowS() - a) * 1e3, bench::Percentile(l, 0.5), failures);
    burst.insert(burst.end(), l.begin(), l.end());
  }
  std::printf("  one plan check, 8192 ranks per 1 s iteration: median %.3f ms (target < 5 ms), p99 %.3f ms\n",
              bench::Percentile(paced, 0.5), bench::Percentile(paced, 0.99));
  std::printf("  one plan check, burst of 8192: median %.3f ms, p99 %.3f ms\n", bench::Percentile(burst, 0.5),
              bench::Percentile(burst, 0.99));
  return 0;
}
