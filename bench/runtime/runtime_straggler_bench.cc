// Straggler response: from POST /jobs/{id}/stragglers until every rank of the
// other pipelines holds its new plan (target < 1 s), and back after DELETE.
// 256 rank clients (dp 16 x pp 4 x tp 4) polling every 200 ms (the default).
#include <httplib.h>

#include <cstdio>

#include "bench/runtime/runtime_bench_util.h"
#include "runtime/client/rank_client.h"
#include "runtime/gpu/fake_gpu.h"

using namespace perseus;

int main() {
  const int dp = 16, pp = 4, tp = 4, ranks = dp * pp * tp;
  bench::RunningServer server("straggle", dp, pp, tp, 16, ranks + 16);
  std::vector<std::unique_ptr<client::RankClient>> clients;
  for (int r = 0; r < ranks; ++r) {
    client::RankClientOptions o;
    o.server = {server.url(), ""};
    int d = r / (pp * tp), s = (r / tp) % pp, t = r % tp;
    o.identity = {"straggle", r, d, s, t};
    o.restore_on_signal = false;
    clients.push_back(client::RankClient::Create(o, std::make_shared<runtime::FakeGpu>(r, bench::Clocks())).value());
  }
  auto all_hold = [&](int straggler, bool slowed) {
    for (int r = 0; r < ranks; ++r) {
      int d = r / (pp * tp);
      int index = clients[r]->Stats().plan_index;
      bool want_slow = slowed && d != straggler;
      if (want_slow ? index <= 0 : index != 0) return false;
    }
    return true;
  };
  auto wait = [&](int straggler, bool slowed) {
    double start = bench::NowS();
    while (!all_hold(straggler, slowed) && bench::NowS() - start < 10) std::this_thread::sleep_for(std::chrono::milliseconds(2));
    return (bench::NowS() - start) * 1e3;
  };
  std::printf("runtime_straggler_bench: %d rank clients, poll interval 200 ms\n", ranks);
  std::printf("  all ranks on the fastest plan after %.0f ms\n", wait(-1, false));
  httplib::Client admin(server.url());
  std::vector<double> declare_ms, clear_ms;
  for (int trial = 0; trial < 5; ++trial) {
    int straggler = trial % dp;
    std::string body = "{\"pipeline\": " + std::to_string(straggler) + ", \"slowdown\": 1.2}";
    double a = bench::NowS();
    admin.Post("/jobs/straggle/stragglers", body, "application/json");
    wait(straggler, true);
    declare_ms.push_back((bench::NowS() - a) * 1e3);
    a = bench::NowS();
    admin.Delete("/jobs/straggle/stragglers/" + std::to_string(straggler));
    wait(straggler, false);
    clear_ms.push_back((bench::NowS() - a) * 1e3);
  }
  std::printf("  straggler declared -> %d other ranks hold the slower plan: median %.0f ms, max %.0f ms (target < 1000 ms)\n",
              ranks - pp * tp, bench::Percentile(declare_ms, 0.5), bench::Percentile(declare_ms, 1.0));
  std::printf("  straggler cleared  -> all ranks back on the fastest plan: median %.0f ms, max %.0f ms\n",
              bench::Percentile(clear_ms, 0.5), bench::Percentile(clear_ms, 1.0));
  for (auto& c : clients) c->Close();
  return 0;
}
