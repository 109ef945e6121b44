// The year-long evaluation: a job of `work_h` reference hours started at many
// hours of a trace (every day by default), under several policies, each
// compared with the same job at its reference setting (AllMax / maximum
// power limit) over the same hours, with the perfect-foresight optimum as
// the bound. Also builds a pipeline job's knob sets.
// Thread safety: pure functions.
#pragma once

#include <algorithm>
#include <atomic>
#include <optional>
#include <string>
#include <vector>

#include "carbon/knob_options.h"
#include "control/carbon_window.h"
#include "emulator/carbon_optimum.h"
#include "emulator/carbon_replay.h"
#include "perseus/optimizer.h"
#include "perseus/problem.h"
#include "perseus/profile.h"

namespace perseus::carbon {

// A pipeline job's settings: the frontier and Chase's one-clock-for-all knob.
struct PipelineKnobs {
  Problem problem;
  Frontier frontier;
  KnobSet frontier_knobs;
  KnobSet global_clock_knobs;
};
Result<PipelineKnobs> BuildPipelineKnobs(const Profile& profile, const ProblemSpec& spec);

struct PolicySpec {
  std::string name;     // "Perseus frontier (carbon-aware)", "AllMax", ...
  KnobSet knobs;
  ReplayConfig config;  // work_h is set by EvaluateStarts
  // Set: the perfect-foresight optimum over knobs (carbon_optimum.h: by the
  // exact greedy, or GLPK with budget_at_every_hour) instead of a replay; its
  // work_h is set by EvaluateStarts.
  std::optional<OptimumConfig> optimum = std::nullopt;
};

// A job started at `start_window`.
struct RunOutcome {
  int start_window = 0;
  double carbon_g = 0, baseline_carbon_g = 0;
  double time_h = 0;
  double carbon_saved_frac() const { return baseline_carbon_g > 0 ? 1 - carbon_g / baseline_carbon_g : 0; }
};

struct PolicyOutcome {
  std::string name;
  std::vector<RunOutcome> runs;
  double carbon_saved_frac = 0;     // over all runs: 1 - sum carbon / sum baseline
  double saved_std_frac = 0;        // spread over runs of carbon_saved_frac() (standard deviation)
  double saved_min_frac = 0, saved_max_frac = 0;
  double mean_time_added_frac = 0;  // mean over runs of time / work - 1
  double max_time_added_frac = 0;   // worst run
  // Carbon saved per unit of time added (fractions); time added below 0.1%
  // counts as 0.1% so a no-slowdown policy gets a large finite ratio.
  double SavedPerAdded() const { return carbon_saved_frac / std::max(mean_time_added_frac, 1e-3); }
};

// Which start hours are evaluated: every `start_stride_h`-th hour from
// `first_start` (three weeks in: the history a server's first decision
// starts with, control::kSeededHistoryHours) while
// start + work_h <= trace.size() (hours a slowed job runs past the trace use
// its last value). Traces too short for the first start begin at hour 0.
struct StartHours {
  double work_h = 168;
  int first_start = control::kSeededHistoryHours;
  int start_stride_h = 24;
  // Runs (a policy from a start hour) replayed at once, each on its own
  // thread (0: the CPUs this process may run on; common/in_order.h). The
  // outcomes do not depend on it, but for GLPK's time limits: an LP that
  // reaches one (10 s, primal simplex) switches method, so a machine slow
  // enough to reach it can differ in the last digits.
  int threads = 0;
  // When set, EvaluateStarts adds one for every run it has replayed (for
  // progress lines; read from any thread).
  std::atomic<size_t>* runs_done = nullptr;
  std::vector<int> Of(const IntensityTrace& trace) const;
};

// Every policy from every start hour. The first run that fails (the optimum
// of a start the fastest option cannot finish) fails the whole, naming the
// policy; runs not yet started are then skipped.
Result<std::vector<PolicyOutcome>> EvaluateStarts(const IntensityTrace& trace, const std::vector<PolicySpec>& policies,
                                                  const StartHours& starts);

// The same slowdown spent evenly without carbon awareness: the mix of two
// adjacent points of the rate–power hull (control::RatePowerHull) run in
// every window that slows the job by exactly `slowdown` (the slowest point
// when even it is faster), as a kFixed replay config.
ReplayConfig FixedMixForSlowdown(const KnobSet& knobs, double slowdown);

// The pipeline policies of the evaluation, in this order (kPolicy* below):
// the carbon-aware frontier (the server's rule: a rolling day, the job's
// length unknown), the carbon-aware global clock (Chase's knob), each knob's
// fixed mix spending the budget (not carbon-aware), Perseus alone
// (no-slowdown plan), AllMax, the perfect-foresight optimum over the
// frontier (the bound), the carbon-aware frontier told the coming day's
// actual intensities (the same rule given the future: not a bound), the
// optimum that keeps the budget at every hour as the rolling rule's guard
// does, and the carbon-aware frontier told the job's length (the budget a
// deadline; it plans the rest of the job).
std::vector<PolicySpec> PipelinePolicies(const PipelineKnobs& job, double slowdown_budget);
enum PipelinePolicy {
  kPolicyFrontierAware, kPolicyClockAware, kPolicyFrontierMix, kPolicyClockMix,
  kPolicyPerseusAlone, kPolicyAllMax, kPolicyOptimum, kPolicyToldTheDay, kPolicyGuardedOptimum,
  kPolicyToldTheLength
};

// Deadline mode on the frontier (docs/carbon.md, "Deadline mode"): the job
// must finish within its all-max length times (1 + slack). In this order:
// the fixed mix spending the slack (not carbon-aware), carbon-aware never
// pausing, carbon-aware and may pause, the same reading a wrong picture of
// the grid (the trace 12 hours late: its forecasts are wrong by half a day),
// the same holding the GPUs, the optimum never pausing, pausing and pausing
// holding the GPUs, and carbon-aware may pause with every resume costing
// kDeadlineRestartH hours without progress, the GPUs idle at their blocking
// power (a released job's restart, as `perseus serve` charges it by default).
inline constexpr double kDeadlineRestartH = 10.0 / 60;
std::vector<PolicySpec> DeadlinePolicies(const PipelineKnobs& job, double slack);

// The carbon-aware frontier's saving split into its parts, in points of
// carbon saved vs AllMax: the no-slowdown plan, slowing down (the fixed mix
// at the budget minus the no-slowdown plan) and carbon awareness (the policy
// minus the fixed mix); and the share of the optimum's gain over the fixed
// mix that the policy captures.
struct SavingSplit {
  double no_slowdown_frac = 0, slowing_down_frac = 0, carbon_awareness_frac = 0;
  double optimum_gain_frac = 0;  // optimum minus the fixed mix
  // Carbon awareness / optimum_gain; none when the optimum gains less than
  // kMinOptimumGainFrac (a flat trace: a share of nothing means nothing).
  std::optional<double> captured_frac;
  std::optional<double> captured_told_length_frac;  // the same for the policy told the job's length
};
inline constexpr double kMinOptimumGainFrac = 1e-4;  // 0.01 points
SavingSplit SplitSaving(const std::vector<PolicyOutcome>& pipeline_outcomes);

}  // namespace perseus::carbon
