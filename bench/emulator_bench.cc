// Emulation rate of `perseus emulate` at the paper's largest scale: 8,192 GPUs
// (128 pipelines x 8 stages x 8 tensor-parallel GPUs, the bundled
// gpt3-175b-a100 example) under all six policies, with stragglers and throttled
// GPUs coming and going. Prints, per scenario, the frontier solve time, the
// iteration loop's wall time and GPU-iterations per second (GPUs x iterations x
// policies / loop time), and the whole Emulate() call.
#include <chrono>
#include <cstdio>

#include "perseus/emulator.h"
#include "perseus/gpu_model.h"

namespace {

struct Scenario {
  const char* name;
  int iterations;
  int events;        // stragglers (and as many throttles) over the run
  int event_length;  // iterations each lasts
};

perseus::EmulationSpec BaseSpec(const perseus::Example& ex, const Scenario& s) {
  perseus::EmulationSpec spec;
  spec.job_name = ex.name;
  spec.profile = ex.profile;
  spec.problem = ex.spec;
  spec.pipelines = 128;
  spec.iterations = s.iterations;
  spec.sweep_factors = {1.0};
  const int spacing = s.events > 0 ? s.iterations / s.events : 0;
  for (int k = 0; k < s.events; ++k) {
    const int start = k * spacing;
    spec.stragglers.push_back({1.05 + 0.01 * (k % 40), k % 128, k % 128, start, start + s.event_length});
    spec.throttles.push_back(
        {(k * 7) % 128, k % 8, k % 8, 1200 - 15 * (k % 10), start + 1, start + 1 + s.event_length});
  }
  return spec;
}

}  // namespace

int main() {
  perseus::Result<perseus::Example> ex = perseus::FindExample("gpt3-175b-a100");
  if (!ex.ok()) {
    std::fprintf(stderr, "%s\n", ex.status().ToString().c_str());
    return 1;
  }
  const Scenario scenarios[] = {
      {"steady, no stragglers", 1000, 0, 0},
      {"20 stragglers + 20 throttled GPUs, 25 iterations each", 1000, 20, 25},
      {"500 events, new conditions every 2 iterations", 10000, 500, 1},
  };
  std::printf("%-56s %7s %11s %10s %10s %14s\n", "scenario (8,192 GPUs, 6 policies)", "iters", "frontier s", "loop s",
              "total s", "GPU-iter/s");
  for (const Scenario& s : scenarios) {
    auto t0 = std::chrono::steady_clock::now();
    perseus::Result<perseus::EmulationResult> r = perseus::Emulate(BaseSpec(*ex, s));
    const double total_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    if (!r.ok()) {
      std::fprintf(stderr, "%s: %s\n", s.name, r.status().ToString().c_str());
      return 1;
    }
    std::printf("%-56s %7d %11.3f %10.3f %10.3f %14.3g\n", s.name, s.iterations, r->frontier.solve_s, r->emulation_s,
                total_s, r->gpu_iterations_per_s);
  }
  return 0;
}
