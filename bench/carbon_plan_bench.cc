// The carbon decision's plan (control::PlanWork) at the sizes `perseus serve`
// and `perseus carbon` run it: the rate-power hull of each bundled example's
// frontier (with a pause that releases the GPUs, and without), over a rolling
// day (24 hourly windows, 5% budget) and over a job's whole length (210
// windows: a 168 h job told its length under a 5% budget, or with 25%
// deadline slack). Prints microseconds per plan; the decision
// makes one to five of them per window, and `perseus carbon` replays about
// 200,000 windows (docs/carbon.md).
#include <chrono>
#include <cmath>
#include <cstdio>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "control/carbon_choice.h"
#include "emulator/carbon_evaluation.h"
#include "perseus/gpu_model.h"

namespace {

using perseus::control::RatePower;

// A diurnal grid with weather: 250-450 gCO2/kWh.
std::vector<double> Intensities(int windows) {
  std::mt19937 rng(7);
  std::normal_distribution<double> noise(0, 20);
  std::vector<double> ci(windows);
  for (int w = 0; w < windows; ++w) ci[w] = 350 + 100 * std::sin(2 * M_PI * w / 24) + noise(rng);
  return ci;
}

double MicrosecondsPerPlan(const std::vector<RatePower>& hull, const std::vector<double>& ci, double work) {
  const std::vector<double> share(ci.size(), 1.0);
  double mu = 0;
  int plans = 0;
  const auto start = std::chrono::steady_clock::now();
  double elapsed_s = 0;
  while (elapsed_s < 0.3) {
    for (int k = 0; k < 100; ++k, ++plans) mu += perseus::control::PlanWork(hull, ci, share, work).mu_g_per_s;
    elapsed_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  }
  if (mu < 0) std::printf("impossible\n");  // keeps the plans from being optimised away
  return 1e6 * elapsed_s / plans;
}

}  // namespace

int main() {
  std::printf("%-16s %-6s %5s %8s %8s %12s\n", "example", "pause", "hull", "windows", "work", "us per plan");
  for (const std::string& name : perseus::ExampleNames()) {
    perseus::Result<perseus::Example> ex = perseus::FindExample(name);
    if (!ex.ok()) return 1;
    perseus::Result<perseus::carbon::PipelineKnobs> knobs =
        perseus::carbon::BuildPipelineKnobs(ex->profile, ex->spec);
    if (!knobs.ok()) {
      std::fprintf(stderr, "%s\n", knobs.status().ToString().c_str());
      return 1;
    }
    for (bool pause : {false, true}) {
      const std::vector<RatePower> hull = perseus::control::RatePowerHull(knobs->frontier_knobs, pause);
      for (auto [windows, slack] : {std::pair{24, 0.05}, std::pair{210, 0.05}, std::pair{210, 0.25}}) {
        const double work = windows / (1 + slack);
        std::printf("%-16s %-6s %5zu %8d %8.1f %12.2f\n", name.c_str(), pause ? "yes" : "no", hull.size(), windows,
                    work, MicrosecondsPerPlan(hull, Intensities(windows), work));
      }
    }
  }
  return 0;
}
