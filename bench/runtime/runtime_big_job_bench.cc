// What a big job costs the server (issue 10, "stalls around big jobs"): a job
// of 16 stages x 256 microbatches (8,192 computations per pipeline) profiled
// with synthetic windows and optimised with the real SolveFrontier, while a
// thread keeps reading the job's summary and a rank's plan, as ranks and
// operators do. Prints the solve and commit, the longest wait of those reads
// during it, the stored frontier's size, a plan reply's latency, and a
// restart: how long the next server takes to load the job, and its memory.
//
//   build/ci/bench/runtime/runtime_big_job_bench [--stages 16] [--microbatches 256] [--dp 2]
#include <sys/resource.h>
#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include "bench/runtime/runtime_bench_util.h"

using namespace perseus;
using perseus::Json;

namespace {

struct Args {
  int stages = 16, microbatches = 256, dp = 2;
};

Args ParseArgs(int argc, char** argv) {
  Args a;
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string k = argv[i];
    const int v = std::atoi(argv[i + 1]);
    if (k == "--stages") a.stages = v;
    else if (k == "--microbatches") a.microbatches = v;
    else if (k == "--dp") a.dp = v;
    else {
      std::fprintf(stderr, "runtime_big_job_bench: unknown flag %s\n", k.c_str());
      std::exit(2);
    }
  }
  return a;
}

double RssMb(const char* field) {
  std::ifstream in("/proc/self/status");
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind(field, 0) == 0) return std::atof(line.c_str() + std::strlen(field)) / 1024.0;
  }
  return 0;
}

// Reads the summary and rank 0's plan in a loop until `stop`; the longest single read.
struct Reader {
  std::atomic<bool> stop{false};
  std::atomic<double> longest_s{0};
  std::thread thread;

  Reader(server::JobService& service, const std::string& id) {
    thread = std::thread([this, &service, id] {
      while (!stop.load()) {
        const double start = bench::NowS();
        (void)service.JobSummary(id);
        (void)service.RankPlan(id, 0, -1);
        const double took = bench::NowS() - start;
        if (took > longest_s.load()) longest_s.store(took);
        std::this_thread::sleep_for(std::chrono::milliseconds(5));
      }
    });
  }
  ~Reader() {
    stop = true;
    thread.join();
  }
};

}  // namespace

int main(int argc, char** argv) {
  const Args a = ParseArgs(argc, argv);
  const std::string dir = std::filesystem::temp_directory_path() / ("perseus_big_job_" + std::to_string(getpid()));
  std::filesystem::create_directories(dir);
  const std::string db = dir + "/perseus.db";
  std::printf("job: %d pipelines x %d stages x %d microbatches (%d computations per pipeline)\n", a.dp, a.stages,
              a.microbatches, 2 * a.stages * a.microbatches);
  {
    auto store = server::Store::Open(db, false).value();
    auto service = server::JobService::Create(store.get(), nullptr).value();
    bench::RunningServer::Check(HandleRegisterJob(*service, server::testing::JobBody("big", a.dp, a.stages, a.microbatches)).status());
    server::testing::RegisterAndProfile(*service, "big", a.dp, a.stages, a.microbatches);
    const double start = bench::NowS();
    double longest_read_s = 0;
    {
      Reader reader(*service, "big");
      service->WaitForOptimizer();
      longest_read_s = reader.longest_s.load();
    }
    const double solve_s = bench::NowS() - start;
    Json summary = service->JobSummary("big").value();
    const Json frontier = service->FrontierJson("big").value();
    std::printf("optimised in %.2f s (phase %s, %zu frontier plans)\n", solve_s,
                summary["phase"].get<std::string>().c_str(), frontier["plans"].size());
    std::printf("longest summary + plan read while it ran: %.3f s\n", longest_read_s);
    std::vector<double> plan_ms;
    size_t plan_bytes = 0;
    for (int i = 0; i < 50; ++i) {
      const double t0 = bench::NowS();
      plan_bytes = service->RankPlan("big", i % (a.dp * a.stages), -1).value().size();
      plan_ms.push_back((bench::NowS() - t0) * 1e3);
    }
    std::printf("plan reply: %zu bytes, median %.3f ms, max %.3f ms\n", plan_bytes, bench::Percentile(plan_ms, 0.5),
                bench::Percentile(plan_ms, 1.0));
    std::printf("server memory after the solve: %.0f MB resident, peak %.0f MB\n", RssMb("VmRSS:"), RssMb("VmHWM:"));
  }
  std::printf("database: %.1f MB\n", static_cast<double>(std::filesystem::file_size(db)) / 1e6);
  const double rss_before_mb = RssMb("VmRSS:");
  const double start = bench::NowS();
  auto store = server::Store::Open(db, false).value();
  auto service = server::JobService::Create(store.get(), nullptr).value();
  Json summary = service->JobSummary("big").value();
  std::printf("restart: job loaded in %.2f s (phase %s), +%.0f MB resident\n", bench::NowS() - start,
              summary["phase"].get<std::string>().c_str(), RssMb("VmRSS:") - rss_before_mb);
  service.reset();
  store.reset();
  std::filesystem::remove_all(dir);
  return 0;
}
