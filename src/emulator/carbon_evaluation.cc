// Week-by-week evaluation.
#include "emulator/carbon_evaluation.h"

#include <algorithm>

#include "control/carbon_window.h"

namespace perseus::carbon {

Result<PipelineKnobs> BuildPipelineKnobs(const Profile& profile, const ProblemSpec& spec) {
  Result<Problem> problem = BuildProblem(profile, spec);
  if (!problem.ok()) return problem.status();
  FrontierOptions options;
  options.lower_bound_samples = 0;
  Result<Frontier> frontier = SolveFrontier(*problem, options);
  if (!frontier.ok()) return frontier.status();
  PipelineKnobs job{std::move(*problem), std::move(*frontier), {}, {}};
  // The server's options (plans from the no-slowdown plan on), with all-max
  // as the reference: the baseline the evaluation reports against, and the
  // time the budget counts from (the no-slowdown plan's time, or a hair more).
  job.frontier_knobs = control::FrontierKnobsFromNoSlowdown(job.frontier);
  job.frontier_knobs.reference = {"all-max", job.frontier.all_max.time_s, job.frontier.all_max.energy_j, -1};
  job.global_clock_knobs = GlobalClockKnobs(job.problem);
  return job;
}

std::vector<PolicySpec> PipelinePolicies(const PipelineKnobs& job, double slowdown_budget) {
  ReplayConfig aware;
  aware.slowdown_budget = slowdown_budget;
  ReplayConfig perseus_alone;
  perseus_alone.policy = ReplayPolicy::kFixed;
  perseus_alone.fixed_option = job.frontier_knobs.NoSlowdownIndex();
  ReplayConfig allmax;
  allmax.policy = ReplayPolicy::kFixed;
  ReplayConfig oracle = aware;
  oracle.perfect_forecast = true;
  ReplayConfig constant;
  constant.policy = ReplayPolicy::kFixed;
  constant.fixed_option = 0;
  return {{"Perseus frontier, carbon-aware", job.frontier_knobs, aware},
          {"global SM clock, carbon-aware (Chase's knob)", job.global_clock_knobs, aware},
          {"Perseus frontier, constant slowdown (not carbon-aware)",
           ConstantSlowdownKnobs(job.frontier_knobs, slowdown_budget), constant},
          {"global SM clock, constant slowdown (not carbon-aware)",
           ConstantSlowdownKnobs(job.global_clock_knobs, slowdown_budget), constant},
          {"Perseus alone (no-slowdown plan)", job.frontier_knobs, perseus_alone},
          {"AllMax", job.frontier_knobs, allmax},
          {"Perseus frontier, carbon-aware, told the coming day's intensities (not a bound)", job.frontier_knobs, oracle}};
}

std::vector<PolicyOutcome> EvaluateWeeks(const IntensityTrace& trace, const std::vector<PolicySpec>& policies,
                                         double work_h) {
  std::vector<PolicyOutcome> out;
  for (const PolicySpec& p : policies) {
    PolicyOutcome po;
    po.name = p.name;
    ReplayConfig config = p.config;
    config.work_h = work_h;
    ReplayConfig baseline;
    baseline.policy = ReplayPolicy::kFixed;
    baseline.work_h = work_h;
    double carbon = 0, base = 0;
    for (int start = 0; start + work_h <= trace.size(); start += 168) {
      ReplayResult r = ReplayJob(trace, start, p.knobs, config, nullptr);
      ReplayResult b = ReplayJob(trace, start, p.knobs, baseline, nullptr);
      po.weeks.push_back({start, r.carbon_g, b.carbon_g, r.time_h});
      carbon += r.carbon_g;
      base += b.carbon_g;
      const double added = r.time_h / work_h - 1;
      po.mean_time_added_frac += added;
      po.max_time_added_frac = std::max(po.max_time_added_frac, added);
    }
    if (!po.weeks.empty()) po.mean_time_added_frac /= static_cast<double>(po.weeks.size());
    po.carbon_saved_frac = base > 0 ? 1 - carbon / base : 0;
    out.push_back(std::move(po));
  }
  return out;
}

}  // namespace perseus::carbon
