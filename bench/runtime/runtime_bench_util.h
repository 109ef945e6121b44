// Helpers for the runtime benchmarks: an in-process server with a job that
// is already running (profiled with synthetic windows, optimised with
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
#include "runtime/server/api_handlers.h"
#include "runtime/server/store.h"
#include "runtime/server/synthetic_job.h"

namespace perseus::bench {

using perseus::Json;

inline double Percentile(std::vector<double> v, double q) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  size_t i = std::min(v.size() - 1, static_cast<size_t>(q * static_cast<double>(v.size() - 1) + 0.5));
  return v[i];
}

inline double NowS() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

inline const std::vector<int>& Clocks() { return server::testing::kClocks; }

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
    Check(HandleRegisterJob(*service, job).status());
    for (int d = 0; d < dp; ++d) {
      for (int s = 0; s < pp; ++s) {
        for (int t = 0; t < tp; ++t) {
          int r = (d * pp + s) * tp + t;
          runtime::FakeGpu gpu(r, Clocks());  // what a client with this FakeGpu registers
          Json body = {{"rank", r}, {"dp_rank", d}, {"pp_rank", s}, {"tp_rank", t}, {"gpu_name", gpu.Name()},
                       {"gpu_uuid", gpu.Uuid()}, {"sm_clocks_mhz", Clocks()}};
          Check(HandleRegisterRank(*service, id, body).status());
        }
      }
    }
    server::testing::RegisterAndProfile(*service, id, dp, pp, microbatches, tp);
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
