// One power cap for several jobs (docs/power.md, "One cap for several jobs"):
// the throughput the server's split (control::ShareCap) keeps against the
// obvious alternative, a split in proportion to each job's uncapped power,
// on three bundled example jobs of different sizes and shapes sharing a cap
// from 100% down to 60% of their combined uncapped power.
//
//   power_share_bench [--pipelines A,B,C]   (default 16,16,64)
//
// Prints, per cap, the GPU-weighted throughput lost (1 - sum w rate / sum w,
// rate relative to each job's fastest setting) by both splits and each job's
// slowdown under the server's split. Every job runs PlanUnderPowerCap under
// its share, exactly as the server runs it.
#include <cstdio>
#include <cstdlib>
#include <sstream>
#include <string>
#include <vector>

#include "control/power_cap.h"
#include "perseus/gpu_model.h"
#include "perseus/optimizer.h"

namespace {

using namespace perseus;

struct BenchJob {
  std::string name;
  int gpus = 0;
  std::vector<control::JobSetting> settings;
  control::CappedPlan free;  // no cap
};

BenchJob MakeJob(const std::string& example, int pipelines) {
  Result<Example> ex = FindExample(example);
  if (!ex.ok()) {
    std::fprintf(stderr, "%s\n", ex.status().ToString().c_str());
    std::exit(1);
  }
  Result<Problem> problem = BuildProblem(ex->profile, ex->spec);
  Result<Frontier> frontier = problem.ok() ? SolveFrontier(*problem, FrontierOptions{}) : problem.status();
  if (!frontier.ok()) {
    std::fprintf(stderr, "%s: %s\n", example.c_str(), frontier.status().ToString().c_str());
    std::exit(1);
  }
  BenchJob job;
  job.name = example + " x" + std::to_string(pipelines);
  job.gpus = pipelines * problem->num_stages() * problem->gpus_per_stage;
  job.settings = control::CapSettings(*frontier, problem->pipeline_blocking_power_w(),
                                      std::vector<double>(pipelines, 1.0), control::CeilingPlans(*problem, *frontier));
  job.free = control::PlanUnderPowerCap(job.settings, {});
  return job;
}

// The job's rate (relative to its fastest setting) under an average cap,
// and the power it then draws (above the cap when even its slowest setting is).
double RateUnder(const BenchJob& job, double cap_w, double* power_w) {
  const control::CappedPlan p = control::PlanUnderPowerCap(job.settings, {cap_w, 0});
  *power_w = p.PowerW();
  return p.mix.Rate(p.hull);
}

std::vector<int> ParsePipelines(int argc, char** argv) {
  std::vector<int> out = {16, 16, 64};
  for (int i = 1; i + 1 < argc; i += 2) {
    if (std::string(argv[i]) != "--pipelines") continue;
    out.clear();
    std::stringstream in(argv[i + 1]);
    for (std::string item; std::getline(in, item, ',');) out.push_back(std::atoi(item.c_str()));
  }
  if (out.size() != 3 || out[0] < 1 || out[1] < 1 || out[2] < 1) {
    std::fprintf(stderr, "--pipelines: expected three positive integers, e.g. 16,16,64\n");
    std::exit(2);
  }
  return out;
}

}  // namespace

int main(int argc, char** argv) {
  const std::vector<int> pipelines = ParsePipelines(argc, argv);
  std::vector<BenchJob> jobs = {MakeJob("gpt3-175b-a100", pipelines[0]), MakeJob("bloom-a100", pipelines[1]),
                                MakeJob("gpt3-xl-a100", pipelines[2])};
  double free_w = 0, gpus = 0;
  std::printf("jobs sharing one cap:\n");
  for (const BenchJob& j : jobs) {
    const double top_w = j.free.hull.back().power_w, low_w = j.free.hull.front().power_w;
    std::printf("  %-20s %5d GPUs, uncapped %9.0f W, slowest setting %9.0f W (%.1f%%, rate %.3f)\n", j.name.c_str(),
                j.gpus, top_w, low_w, 100 * low_w / top_w, j.free.hull.front().rate);
    free_w += top_w;
    gpus += j.gpus;
  }
  std::printf("\n%-8s %-26s %-34s %s\n", "cap", "throughput lost: ShareCap", "split by uncapped power",
              "slowdown per job under ShareCap");
  for (double fraction : {1.0, 0.95, 0.9, 0.85, 0.8, 0.75, 0.7, 0.65, 0.6, 0.55}) {
    const double cap_w = fraction * free_w;
    std::vector<control::SharedCapJob> parts;
    for (const BenchJob& j : jobs) parts.push_back({j.free.hull, 1, static_cast<double>(j.gpus), 0});
    const control::CapShares shares = control::ShareCap(parts, cap_w);
    double shared = 0, proportional = 0, shared_w = 0, proportional_w = 0, w = 0;
    std::string slowdowns;
    for (size_t k = 0; k < jobs.size(); ++k) {
      const double rate = RateUnder(jobs[k], shares.power_w[k], &w);
      shared += jobs[k].gpus * rate;
      shared_w += w;
      proportional += jobs[k].gpus * RateUnder(jobs[k], cap_w * jobs[k].free.hull.back().power_w / free_w, &w);
      proportional_w += w;
      char buf[32];
      std::snprintf(buf, sizeof buf, "%s%+.2f%%", k ? ", " : "", 100 * (1 / rate - 1));
      slowdowns += buf;
    }
    char over[64] = "";
    if (proportional_w > cap_w * (1 + 1e-9)) std::snprintf(over, sizeof over, " (%.1f%% over the cap)", 100 * (proportional_w / cap_w - 1));
    std::printf("%5.0f%%   %8.3f%%%-16s %8.3f%%%-24s %s\n", 100 * fraction, 100 * (1 - shared / gpus),
                shares.feasible ? (shared_w > cap_w * (1 + 1e-9) ? " (over!)" : "") : " (infeasible)",
                100 * (1 - proportional / gpus), over, slowdowns.c_str());
  }
  return 0;
}
