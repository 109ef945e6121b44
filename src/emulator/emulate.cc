// Emulate(): one job, every policy, the straggler sweep.
#include <algorithm>
#include <chrono>
#include <set>
#include <memory>
#include <optional>

#include "control/clock_change_limit.h"
#include "control/profiling_sweep.h"
#include "emulator/closed_loop.h"
#include "emulator/emulation_loop.h"
#include "emulator/policy.h"
#include "emulator/spec_validation.h"
#include "perseus/emulator.h"
#include "perseus/optimizer.h"

namespace perseus {
namespace {

using emulator::LoopSpec;
using emulator::Policy;

Profile ScaledProfile(const Profile& profile, double scale) {
  Profile p = profile;
  for (StageProfile& stage : p.stages) {
    for (auto& points : stage.points) {
      for (FreqPoint& fp : points) {
        fp.time_s *= scale;
        fp.energy_j *= scale;
      }
    }
  }
  return p;
}

std::vector<std::unique_ptr<Policy>> MakePolicies(const Problem& problem, const Frontier& frontier, double budget) {
  std::vector<std::unique_ptr<Policy>> p;
  p.push_back(emulator::MakeAllMaxPolicy(problem));
  p.push_back(emulator::MakeZeusGlobalPolicy(problem, budget));
  p.push_back(emulator::MakeZeusPerStagePolicy(problem, budget));
  p.push_back(emulator::MakeEnvPipePolicy(problem));
  p.push_back(emulator::MakePerseusIntrinsicPolicy(problem, frontier));
  p.push_back(emulator::MakePerseusPolicy(problem, frontier));
  return p;
}

bool Touched(const EmulationSpec& spec, int pipeline) {
  for (const SlowPipelineEvent& e : spec.stragglers) {
    if (pipeline >= e.first_pipeline && pipeline <= e.last_pipeline) return true;
  }
  for (const GpuCapEvent& e : spec.throttles) {
    if (pipeline == e.pipeline) return true;
  }
  return false;
}

// [0] a GPU of a pipeline no event touches; [1] the first event's GPU.
std::vector<GpuId> TrackedGpus(const EmulationSpec& spec) {
  int on_time = spec.pipelines - 1;
  for (int p = 0; p < spec.pipelines; ++p) {
    if (!Touched(spec, p)) {
      on_time = p;
      break;
    }
  }
  std::vector<GpuId> tracked{{on_time, 0, 0}};
  if (!spec.stragglers.empty())
    tracked.push_back({spec.stragglers[0].first_pipeline, 0, 0});
  else if (!spec.throttles.empty())
    tracked.push_back({spec.throttles[0].pipeline, spec.throttles[0].stage, spec.throttles[0].gpu});
  return tracked;
}

int FirstEventIteration(const EmulationSpec& spec) {
  int first = spec.iterations;
  for (const SlowPipelineEvent& e : spec.stragglers) first = std::min(first, e.start_iteration);
  for (const GpuCapEvent& e : spec.throttles) first = std::min(first, e.start_iteration);
  return first == spec.iterations ? 0 : first;
}

void FillComparisons(std::vector<PolicyResult>& policies) {
  const PolicyResult& base = policies.front();
  for (PolicyResult& p : policies) {
    p.savings_vs_allmax = base.total_energy_j > 0 ? 1 - p.total_energy_j / base.total_energy_j : 0;
    p.slowdown_vs_allmax = base.total_time_s > 0 ? p.total_time_s / base.total_time_s - 1 : 0;
  }
}

std::vector<double> SweepFactors(const std::vector<double>& given) {
  if (!given.empty()) return given;
  std::vector<double> f;
  for (int k = 0; k <= 10; ++k) f.push_back(1.0 + 0.05 * k);
  return f;
}

// One iteration with pipeline 0 slowed by each factor, every policy.
std::vector<SweepPoint> StragglerSweep(const Problem& problem, const EmulationSpec& spec,
                                       std::vector<std::unique_ptr<Policy>>& policies) {
  std::vector<SweepPoint> sweep;
  for (double factor : SweepFactors(spec.sweep_factors)) {
    LoopSpec loop;
    loop.pipelines = spec.pipelines;
    loop.iterations = 1;
    loop.per_gpu_totals = false;
    if (factor > 1) loop.stragglers.push_back(SlowPipelineEvent{factor, 0, 0, 0, -1});
    SweepPoint point;
    point.factor = factor;
    double base_j = 0, base_s = 0;
    for (auto& policy : policies) {
      emulator::LoopResult r = emulator::RunPolicyLoop(problem, *policy, loop);
      if (base_j == 0) base_j = r.result.total_energy_j, base_s = r.result.total_time_s;
      point.savings_vs_allmax.emplace_back(r.result.name, 1 - r.result.total_energy_j / base_j);
      point.slowdowns_vs_allmax.push_back(r.result.total_time_s / base_s - 1);
      if (r.result.name == "perseus" && r.lower_bound_valid)
        point.lower_bound_savings = 1 - r.result.lower_bound_energy_j / base_j;
    }
    sweep.push_back(std::move(point));
  }
  return sweep;
}

// The whole job's iterations and events, tracking the report's GPUs.
LoopSpec JobLoop(const EmulationSpec& spec, const EmulationResult& out) {
  LoopSpec loop;
  loop.pipelines = spec.pipelines;
  loop.iterations = spec.iterations;
  loop.stragglers = spec.stragglers;
  loop.throttles = spec.throttles;
  loop.tracked = out.tracked_gpus;
  return loop;
}

// The server's profiling sweep for this job (default options, the profile's
// clocks per stage): its base windows and how long they take at all-max.
double SweepProfilingS(const Problem& problem, const Frontier& frontier, const ClosedLoopOptions& o, int* windows) {
  std::vector<std::vector<int>> clocks(problem.num_stages());
  for (int s = 0; s < problem.num_stages(); ++s) {
    std::set<int> stage;
    for (int id : problem.gpu_order[s]) {
      for (const FreqPoint& p : problem.nodes[id].options) stage.insert(p.freq_mhz);
    }
    clocks[s] = control::SweepClocks({std::vector<int>(stage.rbegin(), stage.rend())}, control::ProfilingOptions{});
  }
  const control::ProfilingOptions defaults;
  *windows = static_cast<int>(control::StartSweep(std::move(clocks), defaults).windows.size());
  const int per_window = defaults.warmup_iterations + defaults.window_iterations + 1;
  return *windows * per_window * frontier.all_max.time_s * o.profiling_time_factor;
}

// Perseus as the server runs it, and what each part of the loop costs.
// `frontier` is solved with control::SolveClockChangeLimit's limit, as the
// server solves it; `spec_plans` is the frontier with the spec's limit (the
// other policies' plans), the same where no slow switch defers the limit.
void RunClosedLoopPolicy(const Problem& problem, const Frontier& frontier, const Frontier& spec_plans,
                         const EmulationSpec& spec, EmulationResult& out) {
  const LoopSpec loop = JobLoop(spec, out);
  ClosedLoopOptions o = spec.closed_loop;
  int windows = 0;
  if (o.profiling_s < 0) o.profiling_s = SweepProfilingS(problem, frontier, o, &windows);
  const double optimization_s =
      o.optimization_s >= 0 ? o.optimization_s
                            : frontier.stats.solve_s + frontier.stats.lower_bound_s + frontier.stats.clock_limit_s;
  const PolicyResult& allmax = out.policies.front();
  // The server's rank probes measure the switch latency while profiling and
  // its optimisation limits clock changes for it, as here.
  Frontier limited = frontier;
  const control::ClockChangeDecision changes = control::LimitClockChangesForLatency(
      problem, spec.max_clock_changes_per_gpu, o.clock_latency_s, &limited);
  const Frontier& run = changes.frontier_limited ? limited : frontier;
  auto figures = [&](const ClosedLoopOptions& variant, double opt_s, const Frontier& plans) {
    const PolicyResult r = RunClosedLoop(problem, plans, loop, variant, opt_s).result;
    return LoopFigures{1 - r.total_energy_j / allmax.total_energy_j, r.total_time_s / allmax.total_time_s - 1};
  };
  ClosedLoopReport report = RunClosedLoop(problem, run, loop, o, optimization_s);
  report.profiling_s = o.profiling_s;
  report.profiling_windows = windows;
  report.clock_change_limit = changes.limit;
  // A limit applied by the solve (fast switches) moves the runs.
  report.clock_runs_moved = changes.limit >= 0 && (!changes.frontier_limited || changes.runs_moved);
  ClosedLoopOptions free = o;
  free.profiling_s = 0;
  report.without_profiling = figures(free, 0, run);
  ClosedLoopOptions at_once = o;
  at_once.clock_latency_s = 0;  // nothing to limit for
  report.without_clock_latency = figures(at_once, optimization_s, spec_plans);
  ClosedLoopOptions instant = o;
  instant.iteration_jitter = 0;
  instant.plan_delivery_s = 0;
  report.instant_detection = figures(instant, optimization_s, run);
  if (changes.automatic) report.without_clock_change_limit = figures(o, optimization_s, frontier);
  out.policies.push_back(report.result);
  FillComparisons(out.policies);
  report.result = out.policies.back();
  out.closed_loop = std::move(report);
}

FrontierSummary Summarise(const Frontier& f) {
  FrontierSummary s;
  s.all_max_time_s = f.all_max.time_s;
  s.all_max_energy_j = f.all_max.energy_j;
  const FrontierPlan* fastest = f.NoSlowdownPlan();
  s.fastest_time_s = fastest->time_s;
  s.fastest_energy_j = fastest->energy_j;
  s.min_energy_time_s = f.MinEnergyPlan().time_s;
  s.min_energy_j = f.MinEnergyPlan().energy_j;
  s.plans = static_cast<int>(f.plans.size());
  s.solve_s = f.stats.solve_s + f.stats.lower_bound_s;
  return s;
}

void RunPolicies(const Problem& problem, const EmulationSpec& spec, std::vector<std::unique_ptr<Policy>>& policies,
                 EmulationResult& out) {
  LoopSpec loop = JobLoop(spec, out);
  loop.timeline_iteration = FirstEventIteration(spec);
  loop.timeline_pipeline = out.tracked_gpus[0].pipeline;
  auto t0 = std::chrono::steady_clock::now();
  for (auto& policy : policies) {
    emulator::LoopResult r = emulator::RunPolicyLoop(problem, *policy, loop);
    if (r.result.name == "allmax" || r.result.name == "perseus") out.timelines.push_back(std::move(r.timeline));
    if (!r.lower_bound_valid) r.result.lower_bound_energy_j = 0;
    out.policies.push_back(std::move(r.result));
  }
  out.emulation_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  const double gpu_iterations = static_cast<double>(out.total_gpus) * spec.iterations * policies.size();
  out.gpu_iterations_per_s = out.emulation_s > 0 ? gpu_iterations / out.emulation_s : 0;
  FillComparisons(out.policies);
}

}  // namespace

Result<EmulationResult> Emulate(const EmulationSpec& spec) {
  PERSEUS_RETURN_IF_ERROR(emulator::ValidateSpec(spec));
  Result<Problem> problem = BuildProblem(ScaledProfile(spec.profile, spec.profile_scale), spec.problem);
  if (!problem.ok()) return problem.status();
  FrontierOptions options;
  options.unit_time_s = spec.unit_time_s * spec.profile_scale;
  // Under slow clock switches the closed loop, as the server, limits the
  // unlimited frontier itself; the other policies run the spec's limit.
  const int loop_limit = spec.closed_loop.enabled ? control::SolveClockChangeLimit(spec.max_clock_changes_per_gpu,
                                                                                   spec.closed_loop.clock_latency_s)
                                                  : spec.max_clock_changes_per_gpu;
  options.max_clock_changes_per_gpu = loop_limit;
  Result<Frontier> frontier = SolveFrontier(*problem, options);
  if (!frontier.ok()) return frontier.status();
  std::optional<Frontier> loop_frontier;
  if (loop_limit != spec.max_clock_changes_per_gpu) {
    loop_frontier = *frontier;
    LimitFrontierClockChanges(*problem, spec.max_clock_changes_per_gpu, &*frontier);
  }
  if (frontier->plans.empty() || frontier->NoSlowdownPlan() == nullptr) {
    return Status::Internal("the frontier has no plan as fast as all-max");
  }
  EmulationResult out;
  out.spec = spec;
  out.stages = problem->num_stages();
  out.microbatches = spec.problem.schedule.microbatches;
  out.gpus_per_stage = problem->gpus_per_stage;
  out.total_gpus = spec.pipelines * out.stages * out.gpus_per_stage;
  out.tracked_gpus = TrackedGpus(spec);
  out.frontier = Summarise(*frontier);
  std::vector<std::unique_ptr<Policy>> policies = MakePolicies(*problem, *frontier, spec.slowdown_budget);
  RunPolicies(*problem, spec, policies, out);
  if (spec.closed_loop.enabled) {
    RunClosedLoopPolicy(*problem, loop_frontier ? *loop_frontier : *frontier, *frontier, spec, out);
  }
  out.sweep = StragglerSweep(*problem, spec, policies);
  return out;
}

}  // namespace perseus
