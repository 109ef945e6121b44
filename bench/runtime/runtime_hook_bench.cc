// Hook overhead: the time a training thread spends in OnInstructionBegin +
// OnInstructionEnd while running a frontier plan whose clock changes between
// computations (target: median < 2 us). Prints its figures.
#include <cstdio>

#include "bench/runtime/runtime_bench_util.h"
#include "runtime/client/rank_client.h"
#include "runtime/gpu/fake_gpu.h"

using namespace perseus;

int main() {
  bench::RunningServer server("hooks", 1, 4, 1, 16, 8);
  auto gpu = std::make_shared<runtime::FakeGpu>(1, bench::Clocks());
  client::RankClientOptions o;
  o.server = {server.url(), ""};
  o.identity = {"hooks", 1, 0, 1, 0};
  o.poll_interval_ms = 50;
  o.restore_on_signal = false;
  std::unique_ptr<client::RankClient> c = client::RankClient::Create(o, gpu).value();
  for (int i = 0; i < 400 && c->Stats().plan_kind != "frontier"; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  if (c->Stats().plan_kind != "frontier") {
    std::fprintf(stderr, "no frontier plan: %s\n", c->Stats().last_error.c_str());
    return 1;
  }
  std::shared_ptr<const client::RankPlan> plan = c->current_plan();
  int changes = 0;
  for (size_t i = 1; i < plan->steps.size(); ++i) changes += plan->steps[i].sm_clock_mhz != plan->steps[i - 1].sm_clock_mhz;

  std::vector<double> begin_ns, end_ns, pair_ns;
  const int kIterations = 2000;
  for (int it = 0; it < kIterations; ++it) {
    c->OnStepBegin();
    for (const client::PlanStep& s : plan->steps) {
      double t0 = bench::NowS();
      c->OnInstructionBegin(s.instruction);
      double t1 = bench::NowS();
      c->OnInstructionEnd(s.instruction);
      double t2 = bench::NowS();
      begin_ns.push_back((t1 - t0) * 1e9);
      end_ns.push_back((t2 - t1) * 1e9);
      pair_ns.push_back((t2 - t0) * 1e9);
      // ~20 us of "compute" so the controller thread can apply clocks in between.
      double until = t2 + 20e-6;
      while (bench::NowS() < until) {
      }
    }
    c->OnStepEnd();
  }
  client::RankClientStats st = c->Stats();
  std::printf("runtime_hook_bench: %d iterations x %zu computations (plan %d, %d clock changes per iteration)\n",
              kIterations, plan->steps.size(), st.plan_index, changes);
  std::printf("  on_instruction_begin: median %.0f ns, p99 %.0f ns\n", bench::Percentile(begin_ns, 0.5),
              bench::Percentile(begin_ns, 0.99));
  std::printf("  on_instruction_end:   median %.0f ns, p99 %.0f ns\n", bench::Percentile(end_ns, 0.5),
              bench::Percentile(end_ns, 0.99));
  std::printf("  begin + end per computation: median %.0f ns (target < 2000 ns), p99 %.0f ns, max %.0f ns\n",
              bench::Percentile(pair_ns, 0.5), bench::Percentile(pair_ns, 0.99), bench::Percentile(pair_ns, 1.0));
  std::printf("  clock changes applied by the controller: %lld, GPU set calls: %d, mismatches: %lld\n",
              static_cast<long long>(st.clock_changes), gpu->SetCount(),
              static_cast<long long>(st.schedule_mismatches));
  c->Close();
  return 0;
}
