// The replay loop.
#include "emulator/carbon_replay.h"

#include <algorithm>
#include <vector>

#include "carbon/iso_time.h"
#include "control/carbon_window.h"

namespace perseus::carbon {
namespace {

constexpr int kWarmupWindows = 21 * 24;

double ValueAt(const IntensityTrace& trace, int w) {
  return trace.carbon_g_per_kwh[std::clamp(w, 0, trace.size() - 1)];
}

// The history a server would hold at `start_window` after reading the trace
// every hour of the preceding three weeks.
control::CarbonState WarmedState(const IntensityTrace& trace, int start_window) {
  control::CarbonState state;
  const int warm_from = std::max(0, start_window - kWarmupWindows);
  if (warm_from == start_window) return state;
  state.history.assign(trace.carbon_g_per_kwh.begin() + warm_from, trace.carbon_g_per_kwh.begin() + start_window);
  state.history_first_hour = HourOfDayUtc(trace.WindowStart(warm_from));
  state.history_last_hour = trace.WindowStart(start_window - 1) / 3600;
  return state;
}

}  // namespace

ReplayResult ReplayJob(const IntensityTrace& trace, int start_window, const KnobSet& knobs, const ReplayConfig& config,
                       const LogFn& log) {
  ReplayResult result;
  const bool aware = config.policy == ReplayPolicy::kCarbonAware;
  const control::CarbonWindowConfig window{config.slowdown_budget, kWindowS};
  control::CarbonState state = WarmedState(trace, start_window);
  control::CarbonForecastCache forecast;
  double remaining_h = config.work_h;
  for (int w = start_window; remaining_h > 1e-12; ++w) {
    WindowDecision d;
    d.window = w;
    d.actual_g_per_kwh = ValueAt(trace, w);
    d.option = config.fixed_option;
    if (aware) {
      std::vector<double> known;
      for (int k = 0; config.perfect_forecast && k < 24; ++k) known.push_back(ValueAt(trace, w + k));
      d.option = control::DecideCarbonWindow(knobs, window, trace.WindowStart(w), {d.actual_g_per_kwh, false},
                                             &state, &forecast, known);
      d.forecast_g_per_kwh = state.forecast_g_per_kwh;
      d.lambda_g_per_s = state.lambda_g_per_s;
      if (log) log(state.explanation);
    }
    const KnobOption& o = d.option < 0 ? knobs.reference : knobs.options[d.option];
    const double speed = knobs.reference.time_s / o.time_s;  // reference hours per hour
    d.work_h = std::min(speed, remaining_h);
    const double busy_h = d.work_h / speed;
    d.energy_j = busy_h * 3600 / o.time_s * o.energy_j;
    d.carbon_g = d.energy_j / 3.6e6 * d.actual_g_per_kwh;
    remaining_h -= d.work_h;
    result.time_h += busy_h;
    result.energy_j += d.energy_j;
    result.carbon_g += d.carbon_g;
    result.windows.push_back(d);
  }
  return result;
}

}  // namespace perseus::carbon
