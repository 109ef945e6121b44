// The replay loop.
#include "emulator/carbon_replay.h"

#include <algorithm>
#include <vector>

#include "carbon/intensity_source.h"
#include "carbon/iso_time.h"
#include "control/carbon_window.h"

namespace perseus::carbon {
namespace {

double ValueAt(const IntensityTrace& trace, int w) {
  return trace.carbon_g_per_kwh[std::clamp(w, 0, trace.size() - 1)];
}

// The history a server's first decision at `start_window` starts with: what
// its trace source knew of the hours before (control::kSeededHistoryHours).
control::CarbonState WarmedState(const IntensityTrace& trace, int start_window) {
  control::CarbonState state;
  control::SeedCarbonHistory(
      HistoryWithoutLookAhead(trace, trace.WindowStart(start_window), control::kSeededHistoryHours), &state);
  return state;
}

// What a server reading the trace knows at the start of window w: what its
// trace source reads (the hour before, ReadWithoutLookAhead), or with
// `live` the value and mix of hour w itself.
control::CarbonReading Reading(const IntensityTrace& trace, int w, bool live) {
  if (live) return {ValueAt(trace, w), false, -1, EiaMixAt(trace, std::clamp(w, 0, trace.size() - 1))};
  return control::FromIntensityReading(ReadWithoutLookAhead(trace, trace.WindowStart(w)));
}

// The trace as a decision with `shift_h` reads it (the value and mix of
// w + shift_h at w).
IntensityTrace Shifted(const IntensityTrace& trace, int shift_h) {
  IntensityTrace seen = trace;
  for (int w = 0; w < trace.size(); ++w) {
    const int from = std::clamp(w + shift_h, 0, trace.size() - 1);
    seen.carbon_g_per_kwh[w] = trace.carbon_g_per_kwh[from];
    for (size_t f = 0; f < trace.generation.size(); ++f) seen.generation[f].mw[w] = trace.generation[f].mw[from];
  }
  return seen;
}

// The window's decision under a carbon-aware policy (sets option, paused, forecast, mu).
void DecideAware(const IntensityTrace& trace, int w, const KnobSet& knobs, const ReplayConfig& config,
                 control::CarbonState& state, control::CarbonForecastCache& forecast, const LogFn& log,
                 WindowDecision& d) {
  control::CarbonWindowConfig window{config.slowdown_budget, kWindowS};
  if (config.told_job_length || config.may_pause) window.job_work_windows = config.work_h;
  window.may_pause = config.may_pause;
  window.restart_windows = config.restart_h * 3600 / kWindowS;
  std::vector<double> known;
  const int told_h = window.job_work_windows > 0 ? static_cast<int>(control::kMaxHistoryHours) : 24;
  for (int k = 0; config.perfect_forecast && k < told_h; ++k) known.push_back(ValueAt(trace, w + k));
  d.option = control::DecideCarbonWindow(knobs, window, trace.WindowStart(w), Reading(trace, w, config.live_reading),
                                         &state, &forecast, known);
  d.paused = d.option < 0;
  d.restart_h = std::min(1.0, state.restart_left_windows);  // hourly windows
  d.forecast_g_per_kwh = state.forecast_g_per_kwh;
  d.lambda_g_per_s = state.lambda_g_per_s;
  if (log) log(state.explanation);
}

// Work, energy and carbon of the window as decided.
void Run(const KnobSet& knobs, double remaining_h, WindowDecision& d) {
  if (d.paused) {  // no work; GPUs held idle draw knobs.pause_power_w for the whole window
    d.energy_j = knobs.pause_power_w * kWindowS;
    d.carbon_g = d.energy_j / 3.6e6 * d.actual_g_per_kwh;
    return;
  }
  const KnobOption& o = d.option < 0 ? knobs.reference : knobs.options[d.option];
  const KnobOption& m = knobs.options[d.mix_option];
  const double speed = knobs.reference.time_s * ((1 - d.mix_share) / o.time_s + d.mix_share / m.time_s);
  const double power_w = (1 - d.mix_share) * o.energy_j / o.time_s + d.mix_share * m.energy_j / m.time_s;
  d.work_h = std::min(speed * (1 - d.restart_h), remaining_h);
  d.busy_h = d.work_h / speed;
  d.energy_j = d.busy_h * 3600 * power_w + d.restart_h * 3600 * knobs.restart_power_w;
  d.carbon_g = d.energy_j / 3.6e6 * d.actual_g_per_kwh;
}

}  // namespace

ReplayResult ReplayJob(const IntensityTrace& trace, int start_window, const KnobSet& knobs, const ReplayConfig& config,
                       const LogFn& log) {
  ReplayResult result;
  const bool aware = config.policy == ReplayPolicy::kCarbonAware;
  const IntensityTrace shifted = config.reading_shift_h != 0 ? Shifted(trace, config.reading_shift_h) : IntensityTrace{};
  const IntensityTrace& reads = config.reading_shift_h != 0 ? shifted : trace;
  control::CarbonState state = WarmedState(reads, start_window);
  control::CarbonForecastCache forecast;
  double remaining_h = config.work_h;
  for (int w = start_window; remaining_h > 1e-12; ++w) {
    WindowDecision d;
    d.window = w;
    d.actual_g_per_kwh = ValueAt(trace, w);
    d.option = config.fixed_option;
    if (aware) DecideAware(reads, w, knobs, config, state, forecast, log, d);
    if (!aware && config.mix_share > 0) {
      d.mix_option = config.mix_option;
      d.mix_share = config.mix_share;
    }
    Run(knobs, remaining_h, d);
    remaining_h -= d.work_h;
    result.time_h += d.paused ? 1.0 : d.restart_h + d.busy_h;
    result.energy_j += d.energy_j;
    result.carbon_g += d.carbon_g;
    result.windows.push_back(d);
  }
  return result;
}

}  // namespace perseus::carbon
