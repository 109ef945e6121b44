// The replay loop.
#include "carbon/job_replay.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <vector>

#include "carbon/blend_forecaster.h"
#include "carbon/carbon_policy.h"
#include "carbon/iso_time.h"

namespace perseus::carbon {
namespace {

constexpr int kWarmupWindows = 21 * 24;

double ValueAt(const IntensityTrace& trace, int w) {
  return trace.carbon_g_per_kwh[std::clamp(w, 0, trace.size() - 1)];
}

// Estimated intensity of windows now+1 .. now+n-1 (now: the current window,
// given `first`): the value at the same hour on the last fully observed day.
std::vector<double> EstimateComing(const IntensityTrace& trace, int now, int n, double first) {
  std::vector<double> ci(n);
  for (int k = 0; k < n; ++k) ci[k] = k == 0 ? first : ValueAt(trace, now + k - 24 * ((k + 23) / 24));
  return ci;
}

void LogDecision(const LogFn& log, const IntensityTrace& trace, const KnobSet& knobs, const WindowDecision& d) {
  if (!log) return;
  const KnobOption& o = d.option < 0 ? knobs.reference : knobs.options[d.option];
  char line[400];
  std::snprintf(line, sizeof line,
                "%s: forecast %.1f gCO2/kWh (actual %.1f), lambda %.3g g/s -> %s (time %+.2f%%, energy %+.2f%% vs %s)",
                FormatIsoUtc(trace.WindowStart(d.window)).c_str(), d.forecast_g_per_kwh, d.actual_g_per_kwh,
                d.lambda_g_per_s, o.label.c_str(), 100 * (o.time_s / knobs.reference.time_s - 1),
                100 * (o.energy_j / knobs.reference.energy_j - 1), knobs.reference.label.c_str());
  log(line);
}

}  // namespace

ReplayResult ReplayJob(const IntensityTrace& trace, int start_window, const KnobSet& knobs, const ReplayConfig& config,
                       const LogFn& log) {
  ReplayResult result;
  const bool aware = config.policy == ReplayPolicy::kCarbonAware;
  const int warm_from = std::max(0, start_window - kWarmupWindows);
  BlendForecaster forecaster(1, HourOfDayUtc(trace.WindowStart(warm_from)));
  for (int w = warm_from; w < start_window; ++w) forecaster.Observe(trace.carbon_g_per_kwh[w]);
  const double deadline_h = config.work_h * (1 + config.slowdown_budget);
  double remaining_h = config.work_h;
  double lambda = 0;
  for (int k = 0; remaining_h > 1e-12; ++k) {
    const int w = start_window + k;
    WindowDecision d;
    d.window = w;
    d.actual_g_per_kwh = ValueAt(trace, w);
    d.forecast_g_per_kwh =
        w == warm_from || config.perfect_forecast ? d.actual_g_per_kwh : forecaster.Predict();
    if (!aware) {
      d.option = config.fixed_option;
    } else {
      const double left_h = deadline_h - k;
      if (k % config.replan_every_h == 0 || left_h < 24) {
        const int n = std::max(1, static_cast<int>(std::ceil(left_h - 1e-9)));
        const double last_fraction = left_h > 0 ? left_h - (n - 1) : 1.0;
        std::vector<double> coming = EstimateComing(trace, w, n, d.forecast_g_per_kwh);
        if (config.perfect_forecast) {
          for (int j = 0; j < n; ++j) coming[j] = ValueAt(trace, w + j);
        }
        lambda = LambdaForWork(knobs, coming, remaining_h, last_fraction).lambda_g_per_s;
      }
      d.lambda_g_per_s = lambda;
      d.option = ChooseOption(knobs, d.forecast_g_per_kwh, lambda);
      // Feasibility guard: never choose an option after which even the
      // fastest one could not finish by the deadline (options are time ascending).
      const double fastest = WorkPerWindowH(knobs, 0);
      while (d.option > 0 &&
             WorkPerWindowH(knobs, d.option) * std::clamp(left_h, 0.0, 1.0) + fastest * std::max(0.0, left_h - 1) <
                 remaining_h) {
        --d.option;
      }
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
    if (aware) LogDecision(log, trace, knobs, d);
    result.windows.push_back(d);
    forecaster.Observe(d.actual_g_per_kwh);
  }
  return result;
}

}  // namespace perseus::carbon
