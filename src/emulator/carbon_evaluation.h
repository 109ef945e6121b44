// The year-long evaluation: a job of `work_h` reference hours started at the
// beginning of every week of a trace, under several policies, each compared
// with the same job at its reference setting (AllMax / maximum power limit)
// over the same hours. Also builds a pipeline job's knob sets.
// Thread safety: pure functions.
#pragma once

#include <algorithm>
#include <string>
#include <vector>

#include "emulator/carbon_replay.h"
#include "carbon/knob_options.h"
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
  ReplayConfig config;  // work_h is set by EvaluateWeeks
};

struct WeekOutcome {
  int start_window = 0;
  double carbon_g = 0, baseline_carbon_g = 0;
  double time_h = 0;
  double carbon_saved_frac() const { return baseline_carbon_g > 0 ? 1 - carbon_g / baseline_carbon_g : 0; }
};

struct PolicyOutcome {
  std::string name;
  std::vector<WeekOutcome> weeks;
  double carbon_saved_frac = 0;     // over all weeks: 1 - sum carbon / sum baseline
  double mean_time_added_frac = 0;  // mean over weeks of time / work - 1
  double max_time_added_frac = 0;   // worst week
  // Carbon saved per unit of time added (fractions); time added below 0.1%
  // counts as 0.1% so a no-slowdown policy gets a large finite ratio.
  double SavedPerAdded() const { return carbon_saved_frac / std::max(mean_time_added_frac, 1e-3); }
};

// Every week w with w * 168 + work_h <= trace.size() (hours a slowed job runs
// past the trace use its last value).
std::vector<PolicyOutcome> EvaluateWeeks(const IntensityTrace& trace, const std::vector<PolicySpec>& policies,
                                         double work_h = 168);

// The pipeline policies of the evaluation: the carbon-aware frontier, the
// carbon-aware global clock (Chase's knob), each knob's best setting within
// the budget held constant (the same slowdown without carbon awareness),
// Perseus alone (no-slowdown plan), AllMax and the carbon-aware frontier
// told the coming day's actual intensities (the same rule given the
// future: neither implementable nor a bound), in that order.
std::vector<PolicySpec> PipelinePolicies(const PipelineKnobs& job, double slowdown_budget);

}  // namespace perseus::carbon
