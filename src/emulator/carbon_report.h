// The carbon report of `perseus carbon`: report.json (schema
// "perseus.carbon/v2"), report.md and SVG plots (intensity and chosen plan
// over one week; carbon saved against time added for every policy). Pure
// functions of a CarbonReport value; the CLI writes the files atomically.
// Thread safety: pure functions.
#pragma once

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "emulator/carbon_evaluation.h"
#include "carbon/forecast_evaluation.h"
#include "carbon/intensity_trace.h"

namespace perseus::carbon {

// Chase (Xu et al., "Chasing Low-Carbon Electricity for Practical and
// Sustainable DNN Training", 2023): ResNet-50, GPU power-limit knob, SVR forecaster.
inline constexpr double kChaseCarbonSavedFrac = 0.136;
inline constexpr double kChaseTimeAddedFrac = 0.025;

// Carbon saved against time added for one policy family as the budget varies.
struct TradeoffCurve {
  std::string name;
  std::vector<std::pair<double, double>> time_added_vs_saved;  // (time added frac, carbon saved frac)
};

struct CarbonReport {
  std::string job_name;
  std::string job_description;     // e.g. "8 stages x 12 microbatches, 83.64 W blocking power"
  double all_max_time_s = 0, all_max_energy_j = 0;
  IntensityTrace trace;
  double slowdown_budget = 0.05;
  double work_h = 168;
  StartHours starts;                         // the evaluated start hours
  std::vector<ForecastScore> forecast;       // may be empty (trace too short)
  std::vector<PolicyOutcome> policies;       // PipelinePolicies order
  SavingSplit split;                         // of the carbon-aware frontier's saving
  double deadline_slack = 0;                 // > 0: deadline mode was evaluated with this slack
  std::vector<PolicyOutcome> deadline;       // DeadlinePolicies order
  std::optional<PolicyOutcome> power_limit;  // data-parallel job on a power-limit profile
  std::string power_limit_source;
  std::vector<TradeoffCurve> tradeoff;
  int shown_week_start = 0;                  // window index of the plotted week
  KnobSet shown_knobs;                       // the frontier knobs the shown week used
  ReplayResult shown_week;                   // the carbon-aware frontier policy in that week
};

std::string CarbonReportJson(const CarbonReport& r);
std::string CarbonReportMarkdown(const CarbonReport& r);
// Intensity (actual and forecast) over the shown week.
std::string WeekIntensitySvg(const CarbonReport& r);
// The chosen plan's slowdown and energy change over the shown week.
std::string WeekPlanSvg(const CarbonReport& r);
// Carbon saved (%) against time added (%) for every policy and Chase's published point.
std::string TradeoffSvg(const CarbonReport& r);

}  // namespace perseus::carbon
