// Helpers for the runtime benchmarks: an in-process server with a job that
// is already running (profiled with synthetic measurements, optimised with
// the real SolveFrontier), and percentile arithmetic.
#pragma once

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "runtime/gpu/fake_gpu.h"
#include "runtime/server/http_server.h"
#include "runtime/server/job_service.h"
#include "runtime/server/store.h"

namespace perseus::bench {

using server::Json;

inline double Percentile(std::vector<double> v, double q) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  size_t i = std::min(v.size() - 1, static_cast<size_t>(q * static_cast<double>(v.size() - 1) + 0.5));
  return v[i];
}

inline double NowS() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

inline const std::vector<int>& Clocks() {
  static const std::vector<int> clocks = {1410, 1305, 1200, 1095, 990, 885, 780};
  return clocks;
}

// Per-microbatch energy falls with the clock down to ~900 MHz, then rises.
inline Json Measurement(int stage, int freq_mhz, int microbatches) {
  auto point = [&](double t_max) {
    double time_s = t_max * (0.8 * 1410.0 / freq_mhz + 0.2);
    double power_w = 80 + 220 * std::pow(freq_mhz / 1410.0, 3);
    return Json{{"count", microbatches}, {"time_s", time_s * microbatches},
                {"energy_j", power_w * time_s * microbatches}};
  };
  double fwd = 0.010 * (1 + 0.1 * stage);
  return {{"sm_clock_mhz", freq_mhz}, {"iterations", 1}, {"forward", point(fwd)}, {"backward", point(2 * fwd)},
          {"blocking", {{"time_s", 0.01}, {"energy_j", 0.6}}}};
}

// An in-memory server whose job `id` (rank = (d * pp + s) * tp + t) is running.
// Rank r is registered as a FakeGpu(r, Clocks()), so a client with that GPU
// finds itself already registered.
struct RunningServer {
  std::unique_ptr<server::Store> store;
  std::unique_ptr<server::JobService> service;
  std::unique_ptr<server::HttpServer> http;
  std::thread serve;
  int port = 0;

  RunningServer(const std::string& id, int dp, int pp, int tp, int microbatches, int threads) {
    store = server::Store::Open(":memory:", false).value();
    service = server::JobService::Create(store.get(), nullptr).value();
    Json job = {{"id", id}, {"dp", dp}, {"pp", pp}, {"tp", tp}, {"microbatches", microbatches},
                {"blocking_power_w", 60}, {"profiling", {{"iterations_per_clock", 1}}}};
    Check(service->RegisterJob(job).status());
    for (int d = 0; d < dp; ++d) {
      for (int s = 0; s < pp; ++s) {
        for (int t = 0; t < tp; ++t) {
          int r = (d * pp + s) * tp + t;
          runtime::FakeGpu gpu(r, Clocks());  // what a client with this FakeGpu registers
          Json body = {{"rank", r}, {"dp_rank", d}, {"pp_rank", s}, {"tp_rank", t}, {"gpu_name", gpu.Name()},
                       {"gpu_uuid", gpu.Uuid()}, {"sm_clocks_mhz", Clocks()}};
          Check(service->RegisterRank(id, body).status());
        }
      }
    }
    for (int round = 0; round < 64; ++round) {
      Json summary = *service->JobSummary(id);
      if (summary["phase"] != "profiling") break;
      for (int s = 0; s < pp; ++s) {
        if (summary["profiling"][s]["done"].get<bool>()) continue;
        int clock = summary["profiling"][s]["sm_clock_mhz"];
        for (int d = 0; d < dp; ++d) {
          for (int t = 0; t < tp; ++t) {
            (void)service->ReportMeasurement(id, (d * pp + s) * tp + t, Measurement(s, clock, microbatches));
          }
        }
      }
    }
    service->WaitForOptimizer();
    if ((*service->JobSummary(id))["phase"] != "running") {
      std::fprintf(stderr, "job did not reach running: %s\n", service->JobSummary(id)->dump().c_str());
      std::exit(1);
    }
    server::ServerOptions options;
    options.port = 0;
    options.threads = threads;
    http = std::make_unique<server::HttpServer>(service.get(), nullptr, options);
    port = http->Bind().value();
    serve = std::thread([this] { http->Serve(); });
  }
  ~RunningServer() {
    http->Stop();
    serve.join();
  }
  static void Check(const Status& st) {
    if (!st.ok()) {
      std::fprintf(stderr, "%s\n", st.ToString().c_str());
      std::exit(1);
    }
  }
  std::string url() const { return "http://127.0.0.1:" + std::to_string(port); }
};

}  // namespace perseus::bench
