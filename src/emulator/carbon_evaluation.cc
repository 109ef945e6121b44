// The evaluation over start hours.
#include "emulator/carbon_evaluation.h"

#include <algorithm>
#include <cmath>

#include "common/in_order.h"
#include "control/carbon_choice.h"
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

ReplayConfig FixedMixForSlowdown(const KnobSet& knobs, double slowdown) {
  const std::vector<control::RatePower> hull = control::RatePowerHull(knobs);
  const double rate = 1 / (1 + slowdown);
  ReplayConfig c;
  c.policy = ReplayPolicy::kFixed;
  c.fixed_option = hull.front().option;
  for (size_t k = 1; k < hull.size() && hull.front().rate < rate; ++k) {
    if (hull[k].rate < rate) {
      c.fixed_option = hull[k].option;
      continue;
    }
    c.mix_option = hull[k].option;
    c.mix_share = (rate - hull[k - 1].rate) / (hull[k].rate - hull[k - 1].rate);
    break;
  }
  return c;
}

std::vector<PolicySpec> PipelinePolicies(const PipelineKnobs& job, double slowdown_budget) {
  ReplayConfig aware;
  aware.slowdown_budget = slowdown_budget;
  ReplayConfig perseus_alone;
  perseus_alone.policy = ReplayPolicy::kFixed;
  perseus_alone.fixed_option = job.frontier_knobs.NoSlowdownIndex();
  ReplayConfig allmax;
  allmax.policy = ReplayPolicy::kFixed;
  ReplayConfig told = aware;
  told.perfect_forecast = true;
  ReplayConfig length = aware;
  length.told_job_length = true;
  const OptimumConfig optimum{0, slowdown_budget, false, false}, guarded{0, slowdown_budget, false, true};
  return {{"Perseus frontier, carbon-aware (the server's rule)", job.frontier_knobs, aware},
          {"global SM clock, carbon-aware (Chase's knob)", job.global_clock_knobs, aware},
          {"Perseus frontier, fixed mix spending the budget (not carbon-aware)", job.frontier_knobs,
           FixedMixForSlowdown(job.frontier_knobs, slowdown_budget)},
          {"global SM clock, fixed mix spending the budget (not carbon-aware)", job.global_clock_knobs,
           FixedMixForSlowdown(job.global_clock_knobs, slowdown_budget)},
          {"Perseus alone (no-slowdown plan)", job.frontier_knobs, perseus_alone},
          {"AllMax", job.frontier_knobs, allmax},
          {"perfect-foresight optimum, Perseus frontier (LP: the bound)", job.frontier_knobs, aware, optimum},
          {"Perseus frontier, carbon-aware, told the coming day's intensities (not a bound)", job.frontier_knobs, told},
          {"perfect-foresight optimum keeping the budget at every hour (LP)", job.frontier_knobs, aware, guarded},
          {"Perseus frontier, carbon-aware, told the job's length", job.frontier_knobs, length}};
}

std::vector<PolicySpec> DeadlinePolicies(const PipelineKnobs& job, double slack) {
  ReplayConfig runs;
  runs.slowdown_budget = slack;
  runs.told_job_length = true;
  ReplayConfig pauses = runs;
  pauses.may_pause = true;
  ReplayConfig wrong = pauses;
  wrong.reading_shift_h = -12;
  ReplayConfig restarts = pauses;  // released GPUs come back only after the job restarts
  restarts.restart_h = kDeadlineRestartH;
  const OptimumConfig optimum{0, slack, false, false}, paused{0, slack, true, false};
  // As `perseus serve` pauses: the ranks wait holding their GPUs, which draw
  // the blocking power.
  KnobSet held = job.frontier_knobs;
  held.pause_power_w = control::PausePowerW(job.problem, /*holds_gpus=*/true);
  // As `perseus serve` charges a restart by default: the GPUs idle while it lasts.
  KnobSet restarting = job.frontier_knobs;
  restarting.restart_power_w = control::RestartPowerW(job.problem, std::nullopt);
  return {{"deadline: fixed mix spending the slack (not carbon-aware)", job.frontier_knobs,
           FixedMixForSlowdown(job.frontier_knobs, slack)},
          {"deadline: carbon-aware, never pauses", job.frontier_knobs, runs},
          {"deadline: carbon-aware, may pause", job.frontier_knobs, pauses},
          {"deadline: carbon-aware, may pause, reading the grid 12 h late (wrong forecasts)", job.frontier_knobs, wrong},
          {"deadline: carbon-aware, may pause holding the GPUs (idle at blocking power)", held, pauses},
          {"deadline: perfect-foresight optimum, never pauses (LP)", job.frontier_knobs, runs, optimum},
          {"deadline: perfect-foresight optimum, may pause (LP)", job.frontier_knobs, pauses, paused},
          {"deadline: perfect-foresight optimum, may pause holding the GPUs (LP)", held, pauses, paused},
          {"deadline: carbon-aware, may pause, each resume a 10-minute restart at idle power", restarting, restarts}};
}

std::vector<int> StartHours::Of(const IntensityTrace& trace) const {
  std::vector<int> out;
  const int first = first_start + work_h <= trace.size() ? first_start : 0;
  for (int s = first; s + work_h <= trace.size(); s += std::max(1, start_stride_h)) out.push_back(s);
  return out;
}

namespace {

Result<RunOutcome> RunOne(const IntensityTrace& trace, int start, const PolicySpec& p, double work_h) {
  ReplayConfig config = p.config, baseline;
  config.work_h = work_h;
  baseline.policy = ReplayPolicy::kFixed;
  baseline.work_h = work_h;
  const double base_g = ReplayJob(trace, start, p.knobs, baseline, nullptr).carbon_g;
  if (p.optimum) {
    OptimumConfig optimum = *p.optimum;
    optimum.work_h = work_h;
    // The greedy is exact (carbon_optimum_test.cc checks it against GLPK) and ~100x faster.
    Result<OptimumResult> o = SolveOptimumGreedy(trace, start, p.knobs, optimum);
    if (!o.ok()) return o.status().WithContext(p.name);
    return RunOutcome{start, o->carbon_g, base_g, o->time_h};
  }
  const ReplayResult r = ReplayJob(trace, start, p.knobs, config, nullptr);
  return RunOutcome{start, r.carbon_g, base_g, r.time_h};
}

void Summarise(PolicyOutcome& po, double work_h) {
  double carbon = 0, base = 0, sum = 0, sum2 = 0;
  po.saved_min_frac = po.runs.empty() ? 0 : 1;
  po.saved_max_frac = po.runs.empty() ? 0 : -1;
  for (const RunOutcome& r : po.runs) {
    carbon += r.carbon_g;
    base += r.baseline_carbon_g;
    const double saved = r.carbon_saved_frac(), added = r.time_h / work_h - 1;
    sum += saved;
    sum2 += saved * saved;
    po.saved_min_frac = std::min(po.saved_min_frac, saved);
    po.saved_max_frac = std::max(po.saved_max_frac, saved);
    po.mean_time_added_frac += added;
    po.max_time_added_frac = std::max(po.max_time_added_frac, added);
  }
  const double n = static_cast<double>(po.runs.size());
  if (n > 0) {
    po.mean_time_added_frac /= n;
    po.saved_std_frac = std::sqrt(std::max(0.0, sum2 / n - (sum / n) * (sum / n)));
  }
  po.carbon_saved_frac = base > 0 ? 1 - carbon / base : 0;
}

}  // namespace

Result<std::vector<PolicyOutcome>> EvaluateStarts(const IntensityTrace& trace, const std::vector<PolicySpec>& policies,
                                                  const StartHours& starts) {
  const std::vector<int> hours = starts.Of(trace);
  const size_t runs = policies.size() * hours.size();
  InOrder<Result<RunOutcome>> replayed(runs, WorkerCount(starts.threads, runs), [&](size_t run, int) {
    Result<RunOutcome> r = RunOne(trace, hours[run % hours.size()], policies[run / hours.size()], starts.work_h);
    if (starts.runs_done != nullptr) ++*starts.runs_done;
    return r;
  });
  std::vector<PolicyOutcome> out;
  for (size_t p = 0; p < policies.size(); ++p) {
    PolicyOutcome po;
    po.name = policies[p].name;
    for (size_t k = 0; k < hours.size(); ++k) {
      std::optional<Result<RunOutcome>> r = replayed.Take(p * hours.size() + k);
      if (!r->ok()) return r->status();  // the runner stops the rest as it goes
      po.runs.push_back(**r);
    }
    Summarise(po, starts.work_h);
    out.push_back(std::move(po));
  }
  return out;
}

SavingSplit SplitSaving(const std::vector<PolicyOutcome>& o) {
  SavingSplit s;
  const double aware = o[kPolicyFrontierAware].carbon_saved_frac, mix = o[kPolicyFrontierMix].carbon_saved_frac;
  s.no_slowdown_frac = o[kPolicyPerseusAlone].carbon_saved_frac;
  s.slowing_down_frac = mix - s.no_slowdown_frac;
  s.carbon_awareness_frac = aware - mix;
  s.optimum_gain_frac = o[kPolicyOptimum].carbon_saved_frac - mix;
  if (s.optimum_gain_frac >= kMinOptimumGainFrac) {
    s.captured_frac = s.carbon_awareness_frac / s.optimum_gain_frac;
    s.captured_told_length_frac = (o[kPolicyToldTheLength].carbon_saved_frac - mix) / s.optimum_gain_frac;
  }
  return s;
}

}  // namespace perseus::carbon
