// `perseus optimize`.
#include "cli/optimize_command.h"

#include <CLI/CLI.hpp>
#include <chrono>
#include <cstdio>
#include <memory>

#include "cli/cli_util.h"
#include "cli/job_flags.h"
#include "perseus/frontier_io.h"
#include "perseus/gpu_model.h"
#include "perseus/optimizer.h"
#include "report/frontier_plots.h"

namespace perseus::cli {
namespace {

struct OptimizeArgs {
  JobFlags job;
  std::string out;
  double unit_time_ms = 1.0;
  int lower_bound_samples = -1;
  double timeline_slowdown = 0;
  bool zeus_plans = false;
};

std::vector<std::pair<std::string, std::string>> Outputs(const OptimizeArgs& a, const ResolvedJob& job, const Problem& problem,
                                                         const Frontier& f) {
  std::vector<std::pair<std::string, std::string>> files;
  files.emplace_back("plans.json", FrontierToJson(problem, f));
  files.emplace_back("frontier.csv", FrontierToCsv(f));
  files.emplace_back("frontier.svg", report::RenderFrontierSvg(f, "Time-energy frontier: " + JobTitle(job)));
  const FrontierPlan* shown = f.PlanForTime(f.all_max.time_s * (1 + a.timeline_slowdown));
  if (!shown) shown = &f.plans.front();
  char title[160];
  std::snprintf(title, sizeof title, "Plan at %.4f s (%.1f%% less energy than all-max)", shown->time_s,
                100 * (1 - shown->energy_j / f.all_max.energy_j));
  files.emplace_back("timeline.svg", report::RenderTimelineSvg(problem, *shown, title));
  if (a.zeus_plans) {
    for (size_t i = 0; i < f.plans.size(); ++i) {
      char name[64];
      std::snprintf(name, sizeof name, "zeus/freqs_pipeline_%05zu.py", i);
      files.emplace_back(name, PlanToZeusPython(problem, f.plans[i], static_cast<int>(i)));
    }
  }
  return files;
}

void PrintSummary(const Problem& problem, const Frontier& f, double seconds) {
  const FrontierPlan* ns = f.NoSlowdownPlan();
  std::printf("computations:       %d (%d stages x %d microbatches, %s)\n", problem.num_nodes(), problem.num_stages(),
              problem.schedule.spec.microbatches, ScheduleName(problem.schedule.spec.kind));
  std::printf("frontier:           %zu plans, iteration time %.6f .. %.6f s\n", f.plans.size(), f.plans.front().time_s,
              f.plans.back().time_s);
  std::printf("all-max:            %.6f s, %.3f J\n", f.all_max.time_s, f.all_max.energy_j);
  if (ns) {
    std::printf("no-slowdown plan:   %.6f s, %.3f J, %.2f%% less energy", ns->time_s, ns->energy_j,
                100 * (1 - ns->energy_j / f.all_max.energy_j));
    if (ns->lower_bound_j > 0) std::printf(" (within %.2f%% of the lower bound)", 100 * (ns->energy_j / ns->lower_bound_j - 1));
    std::printf("\n");
  }
  const FrontierPlan& m = f.MinEnergyPlan();
  std::printf("min-energy plan:    %.6f s (+%.2f%%), %.2f%% less energy\n", m.time_s,
              100 * (m.time_s / f.all_max.time_s - 1), 100 * (1 - m.energy_j / f.all_max.energy_j));
  std::printf("run time:           %.3f s (sweep %.3f s, %d steps; lower bound %.3f s)\n", seconds, f.stats.solve_s,
              f.stats.sweep_steps, f.stats.lower_bound_s);
  if (!f.stats.sweep_complete) {
    std::fprintf(stderr, "perseus: warning: the sweep stopped before the fastest possible iteration time; plans "
                         "between all-max and %.6f s may be missing (please report this profile)\n", f.plans.front().time_s);
  }
}

int RunOptimize(const OptimizeArgs& a) {
  auto t0 = std::chrono::steady_clock::now();
  Result<ResolvedJob> job = ResolveJob(a.job);
  if (!job.ok()) return ReportError(job.status());
  Result<Problem> problem = BuildProblem(job->profile, job->spec);
  if (!problem.ok()) return ReportError(problem.status());
  FrontierOptions options;
  options.unit_time_s = a.unit_time_ms / 1000.0;
  options.lower_bound_samples = a.lower_bound_samples;
  Result<Frontier> f = SolveFrontier(*problem, options);
  if (!f.ok()) return ReportError(f.status());
  Status st = WriteOutputs(a.out, Outputs(a, *job, *problem, *f));
  if (!st.ok()) return ReportError(st);
  PrintSummary(*problem, *f, std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
  std::printf("wrote:              %s/{plans.json,frontier.csv,frontier.svg,timeline.svg%s}\n", a.out.c_str(),
              a.zeus_plans ? ",zeus/" : "");
  return 0;
}

}  // namespace

void RegisterOptimizeCommand(CLI::App& app) {
  auto args = std::make_shared<OptimizeArgs>();
  CLI::App* cmd = app.add_subcommand("optimize", "Compute the iteration time-energy frontier of a pipeline");
  AddJobFlags(cmd, args->job);
  cmd->add_option("--out", args->out, "Output directory")->required();
  cmd->add_option("--unit-time-ms", args->unit_time_ms, "Step of the iteration-time sweep, ms")
      ->check(CLI::PositiveNumber)->capture_default_str();
  cmd->add_option("--lower-bound-samples", args->lower_bound_samples, "Independent min-cost-flow checks of the lower bound (0: off, -1: one if <= 4096 computations)")
      ->check(CLI::Range(-1, 10000))->capture_default_str();
  cmd->add_option("--timeline-slowdown", args->timeline_slowdown,
                  "timeline.svg shows the plan for all-max time x (1 + this)")->check(CLI::Range(0.0, 10.0));
  cmd->add_flag("--zeus-plans", args->zeus_plans, "Also write every plan as a Zeus frequency-plan file");
  cmd->callback([args] {
    int rc = RunOptimize(*args);
    if (rc != 0) throw CLI::RuntimeError(rc);
  });
}

}  // namespace perseus::cli
