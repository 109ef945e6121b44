// soak_bench: 64 emulated ranks (4 pipelines x 4 stages x 4-way tensor
// parallel, the real rank client) train against the real `perseus serve`
// for --minutes while the server is SIGKILLed and restarted every
// --kill-every-s, the disk under its database (a small tmpfs, where the
// machine allows mounting one) fills for --fill-hold-s every --fill-every-s,
// and, next to them, a client drives four GPUs through the real perseusd
// (fake libnvidia-ml) that is SIGKILLed every --daemon-kill-every-s.
//
// Prints: reports acknowledged by the server, stored in its database at the
// end, lost (acknowledged but not stored: must be 0) and dropped by the
// clients; the hooks' wall time per call (p50/p99/max, calls over 1 ms); the
// longest pause between training iterations; restarts; perseusd's calls,
// failures and longest outage. Not a test: it prints figures (bench/README).
//
//   build/ci/bench/soak_bench [--minutes 10] [--kill-every-s 60] [--fill-every-s 90] [--fill-hold-s 5]
//                             [--daemon-kill-every-s 45] [--pace-ms 100]
#include <signal.h>
#include <sqlite3.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "runtime/gpu/daemon_gpu.h"
#include "tests/e2e/child_process.h"
#include "tests/e2e/runtime_emulation.h"
#include "tests/e2e/runtime_server_process.h"

namespace perseus::e2e {
namespace {

using Clock = std::chrono::steady_clock;

struct Args {
  double minutes = 10;
  double kill_every_s = 60, fill_every_s = 90, fill_hold_s = 5, daemon_kill_every_s = 45;
  int pace_ms = 100;
};

bool ParseArgs(int argc, char** argv, Args* a) {
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string k = argv[i];
    const double v = std::atof(argv[i + 1]);
    if (k == "--minutes") a->minutes = v;
    else if (k == "--kill-every-s") a->kill_every_s = v;
    else if (k == "--fill-every-s") a->fill_every_s = v;
    else if (k == "--fill-hold-s") a->fill_hold_s = v;
    else if (k == "--daemon-kill-every-s") a->daemon_kill_every_s = v;
    else if (k == "--pace-ms") a->pace_ms = static_cast<int>(v);
    else {
      std::fprintf(stderr, "soak_bench: unknown flag %s\n", k.c_str());
      return false;
    }
  }
  return argc % 2 == 1;
}

double Since(Clock::time_point t) { return std::chrono::duration<double>(Clock::now() - t).count(); }

double Percentile(std::vector<float> v, double q) {
  if (v.empty()) return 0;
  const size_t k = std::min(v.size() - 1, static_cast<size_t>(q * static_cast<double>(v.size())));
  std::nth_element(v.begin(), v.begin() + static_cast<long>(k), v.end());
  return v[k];
}

// Fills `dir` with a file until the disk is full; returns its path.
std::string FillDisk(const std::string& dir) {
  const std::string path = dir + "/filler";
  std::FILE* f = std::fopen(path.c_str(), "w");
  if (f == nullptr) return path;
  const std::string block(64 << 10, 'x');
  while (std::fwrite(block.data(), 1, block.size(), f) == block.size() && std::fflush(f) == 0) {
  }
  std::fclose(f);
  return path;
}

// Iteration rows stored per rank.
std::map<int, int64_t> StoredPerRank(const std::string& db) {
  std::map<int, int64_t> out;
  sqlite3* h = nullptr;
  if (sqlite3_open_v2(db.c_str(), &h, SQLITE_OPEN_READONLY, nullptr) != SQLITE_OK) return out;
  sqlite3_stmt* s = nullptr;
  sqlite3_prepare_v2(h, "SELECT rank, COUNT(*) FROM iterations GROUP BY rank", -1, &s, nullptr);
  while (s != nullptr && sqlite3_step(s) == SQLITE_ROW) out[sqlite3_column_int(s, 0)] = sqlite3_column_int64(s, 1);
  sqlite3_finalize(s);
  sqlite3_close(h);
  return out;
}

// perseusd with four fake GPUs, SIGKILLed and restarted on demand, and a
// client thread that locks clocks and reads energy on every GPU every 10 ms.
class DaemonSoak {
 public:
  explicit DaemonSoak(const std::string& dir)
      : socket_(dir + "/perseusd.sock"), state_(dir + "/fake_nvml_state"), log_(dir + "/perseusd.log") {}
  ~DaemonSoak() {
    stop_ = true;
    if (thread_.joinable()) thread_.join();
    Kill();
  }
  bool Start() {
    pid_ = SpawnChild(PERSEUSD_PATH, {"perseusd", "--socket", socket_, "--nvml-library", FAKE_NVML_PATH},
                      {"FAKE_NVML_STATE=" + state_, "FAKE_NVML_GPUS=4"}, log_);
    for (int i = 0; i < 500 && !std::filesystem::exists(socket_); ++i) {
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    return std::filesystem::exists(socket_);
  }
  void Kill() {
    if (pid_ <= 0) return;
    kill(pid_, SIGKILL);
    waitpid(pid_, nullptr, 0);
    pid_ = -1;
    std::filesystem::remove(socket_);
  }
  void Run() {
    thread_ = std::thread([this] {
      std::vector<std::unique_ptr<runtime::GpuControl>> gpus(4);
      Clock::time_point down_since{};
      bool down = false;
      for (int64_t n = 0; !stop_; ++n) {
        bool ok = true;
        for (int g = 0; g < 4; ++g) {
          const auto start = Clock::now();
          if (!gpus[g]) {
            Result<std::unique_ptr<runtime::GpuControl>> opened = runtime::OpenDaemonGpu(socket_, g, 1000);
            if (opened.ok()) gpus[g] = std::move(*opened);
          }
          ok = ok && gpus[g] && gpus[g]->SetSmClockMhz(n % 2 ? 1410 : 1200).ok() && gpus[g]->TotalEnergyJ().ok();
          max_call_s_ = std::max(max_call_s_.load(), Since(start));
          ++calls_;
        }
        if (!ok) {
          ++failures_;
          if (!down) down_since = Clock::now();
          down = true;
        } else if (down) {
          longest_outage_s_ = std::max(longest_outage_s_.load(), Since(down_since));
          down = false;
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(10));
      }
    });
  }
  int64_t calls() const { return calls_; }
  int64_t failures() const { return failures_; }
  double longest_outage_s() const { return longest_outage_s_; }
  double max_call_s() const { return max_call_s_; }

 private:
  std::string socket_, state_, log_;
  pid_t pid_ = -1;
  std::thread thread_;
  std::atomic<bool> stop_{false};
  std::atomic<int64_t> calls_{0}, failures_{0};
  std::atomic<double> longest_outage_s_{0}, max_call_s_{0};
};

int Run(const Args& args) {
  const std::string dir = TempPath("soak");
  std::filesystem::create_directories(dir);
  const bool tmpfs = ::mount("tmpfs", dir.c_str(), "tmpfs", 0, "size=64m") == 0;
  const std::string db = dir + "/soak.db";
  ServerProcess server(PerseusBinary(), db, {"--threads", "256"});
  if (!server.Start()) {
    std::fprintf(stderr, "soak_bench: the server did not start (log %s)\n", server.log_path().c_str());
    return 1;
  }
  const ClusterShape shape{4, 4, 4, 4, "a100", std::nullopt, runtime::IdealRealism()};
  const Json job = {{"id", "soak"}, {"dp", shape.dp}, {"pp", shape.pp}, {"tp", shape.tp},
                    {"microbatches", shape.microbatches}, {"straggler", {{"window", 1000}}},
                    {"profiling", {{"window_iterations", 2}, {"clock_stride", 10}}}};
  if (HttpSend("POST", server.url(), "/jobs", job.dump(), "").status != 201) {
    std::fprintf(stderr, "soak_bench: job registration failed\n");
    return 1;
  }
  ClusterOptions options;
  options.server_url = server.url();
  options.job = "soak";
  options.pace_ms = args.pace_ms;
  options.record_hook_latency = true;
  Cluster cluster(shape, options);
  DaemonSoak daemon(dir);
  const bool daemon_up = daemon.Start();
  if (daemon_up) daemon.Run();
  cluster.Start();

  const auto start = Clock::now();
  double next_kill = args.kill_every_s, next_fill = args.fill_every_s, next_daemon_kill = args.daemon_kill_every_s;
  int kills = 0, fills = 0, daemon_kills = 0;
  double max_restart_s = 0;
  // Training progress, watched on its own thread (the fault loop sleeps through outages).
  std::atomic<bool> watching{true};
  std::atomic<double> max_gap_s{0};
  std::thread watcher([&] {
    int64_t last_iterations = 0;
    auto last_progress = Clock::now();
    while (watching) {
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
      if (cluster.iterations() == last_iterations) continue;
      max_gap_s = std::max(max_gap_s.load(), Since(last_progress));
      last_iterations = cluster.iterations();
      last_progress = Clock::now();
    }
  });
  while (Since(start) < args.minutes * 60) {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    const double t = Since(start);
    if (t >= next_kill) {
      server.Kill();
      std::this_thread::sleep_for(std::chrono::seconds(2));
      const auto restart = Clock::now();
      if (!server.Start()) {
        std::fprintf(stderr, "soak_bench: the server did not restart (log %s)\n", server.log_path().c_str());
        return 1;
      }
      max_restart_s = std::max(max_restart_s, Since(restart));
      ++kills;
      next_kill += args.kill_every_s;
    }
    if (tmpfs && t >= next_fill) {
      const std::string filler = FillDisk(dir);
      std::this_thread::sleep_for(std::chrono::duration<double>(args.fill_hold_s));
      std::filesystem::remove(filler);
      ++fills;
      next_fill += args.fill_every_s;
    }
    if (daemon_up && t >= next_daemon_kill) {
      daemon.Kill();
      std::this_thread::sleep_for(std::chrono::seconds(1));
      daemon.Start();
      ++daemon_kills;
      next_daemon_kill += args.daemon_kill_every_s;
    }
  }
  // Let the clients deliver what they hold, then stop training.
  std::this_thread::sleep_for(std::chrono::seconds(3));
  watching = false;
  watcher.join();
  cluster.Stop();
  int64_t acknowledged = 0, dropped = 0;
  std::map<int, int64_t> acked_per_rank;
  for (int r = 0; r < shape.world_size(); ++r) {
    const client::RankClientStats s = cluster.client(r)->Stats();
    acked_per_rank[r] = s.iterations_sent;
    acknowledged += s.iterations_sent;
    dropped += s.iterations_dropped;
  }
  server.Stop();
  const std::map<int, int64_t> stored = StoredPerRank(db);
  int64_t stored_total = 0, lost = 0, unacknowledged = 0;
  for (const auto& [rank, n] : acked_per_rank) {
    auto it = stored.find(rank);
    const int64_t s = it == stored.end() ? 0 : it->second;
    stored_total += s;
    lost += std::max<int64_t>(0, n - s);
    unacknowledged += std::max<int64_t>(0, s - n);
  }
  int64_t http_500 = 0;
  {
    std::ifstream log(server.log_path());
    for (std::string line; std::getline(log, line);) http_500 += line.find("\"status\":500") != std::string::npos;
  }
  const std::vector<float> hooks = cluster.HookLatenciesUs();
  const int64_t over_1ms = std::count_if(hooks.begin(), hooks.end(), [](float us) { return us > 1000; });

  std::printf("soak_bench: %d ranks (dp %d x pp %d x tp %d, %d microbatches), %.1f min, pace %d ms/iteration\n",
              shape.world_size(), shape.dp, shape.pp, shape.tp, shape.microbatches, args.minutes, args.pace_ms);
  std::printf("  faults: %d server SIGKILLs (longest restart %.2f s), %s, %d perseusd SIGKILLs\n", kills,
              max_restart_s,
              tmpfs ? (std::to_string(fills) + " disk fills of " + std::to_string(args.fill_hold_s).substr(0, 4) +
                       " s (" + std::to_string(http_500) + " writes refused with 500)")
                          .c_str()
                    : "disk fills skipped (cannot mount a tmpfs here)",
              daemon_kills);
  std::printf("  training: %lld iterations; longest pause between iterations %.3f s (pace %.3f s)\n",
              static_cast<long long>(cluster.iterations()), max_gap_s.load(), args.pace_ms / 1e3);
  std::printf("  iteration reports: %lld acknowledged, %lld stored, %lld lost (acknowledged, not stored), "
              "%lld stored without an acknowledgement (reply lost), %lld dropped by clients\n",
              static_cast<long long>(acknowledged), static_cast<long long>(stored_total), static_cast<long long>(lost),
              static_cast<long long>(unacknowledged), static_cast<long long>(dropped));
  const Cluster::HookSwitches switches = cluster.HookContextSwitches();
  std::printf("  hook wall time (%zu calls): p50 %.1f us, p99 %.1f us, p99.9 %.1f us, max %.1f us; %lld calls over 1 ms\n",
              hooks.size(), Percentile(hooks, 0.5), Percentile(hooks, 0.99), Percentile(hooks, 0.999),
              hooks.empty() ? 0.0 : *std::max_element(hooks.begin(), hooks.end()), static_cast<long long>(over_1ms));
  std::printf("  hooks that waited for something (voluntary context switch): %lld (step begin %lld, instruction "
              "begin %lld, instruction end %lld, step end %lld); preempted by the scheduler: %lld; longest hook not "
              "switched out: %.1f us\n",
              static_cast<long long>(switches.blocked), static_cast<long long>(switches.blocked_by_hook[0]),
              static_cast<long long>(switches.blocked_by_hook[1]), static_cast<long long>(switches.blocked_by_hook[2]),
              static_cast<long long>(switches.blocked_by_hook[3]), static_cast<long long>(switches.preempted),
              switches.longest_unswitched_us);
  if (daemon_up) {
    std::printf("  perseusd client: %lld calls, %lld rounds failed, longest outage %.2f s, longest call %.1f ms\n",
                static_cast<long long>(daemon.calls()), static_cast<long long>(daemon.failures()),
                daemon.longest_outage_s(), daemon.max_call_s() * 1e3);
  } else {
    std::printf("  perseusd: did not start (see %s/perseusd.log)\n", dir.c_str());
  }
  if (tmpfs) ::umount2(dir.c_str(), MNT_DETACH);
  return lost == 0 ? 0 : 2;
}

}  // namespace
}  // namespace perseus::e2e

int main(int argc, char** argv) {
  perseus::e2e::Args args;
  if (!perseus::e2e::ParseArgs(argc, argv, &args)) {
    std::fprintf(stderr,
                 "usage: soak_bench [--minutes 10] [--kill-every-s 60] [--fill-every-s 90] [--fill-hold-s 5] "
                 "[--daemon-kill-every-s 45] [--pace-ms 100]\n");
    return 1;
  }
  return perseus::e2e::Run(args);
}
