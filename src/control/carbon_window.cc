// The window decision and its hourly history.
#include "control/carbon_window.h"

#include <algorithm>
#include <cstdio>

#include "carbon/blend_forecaster.h"
#include "carbon/iso_time.h"
#include "control/carbon_choice.h"
#include "control/plan_assignment.h"

namespace perseus::control {
namespace {

int64_t FloorDiv(int64_t a, int64_t b) { return a / b - ((a % b != 0) && ((a < 0) != (b < 0))); }

// Records `value` as the intensity of the UTC hour containing `now`. Hours
// no decision saw (windows longer than an hour, a server that was down)
// repeat the last value, so the history stays hourly whatever the window,
// as the forecaster's daily and weekly lags need.
void RecordHour(CarbonState& cs, int64_t now, double value) {
  const int64_t hour = FloorDiv(now, 3600);
  const int64_t gap = cs.history.empty() ? 0 : hour - cs.history_last_hour - 1;
  if (cs.history.empty() || cs.history_last_hour < 0 || gap >= static_cast<int64_t>(kMaxHistoryHours)) {
    cs.history = {value};
    cs.history_first_hour = carbon::HourOfDayUtc(now);
  } else if (gap < 0) {
    cs.history.back() = value;  // another decision in the same hour (or the clock went back)
  } else {
    cs.history.insert(cs.history.end(), static_cast<size_t>(gap), cs.history.back());
    cs.history.push_back(value);
  }
  cs.history_last_hour = std::max(cs.history_last_hour, hour);
  if (cs.history.size() > kMaxHistoryHours) {
    const size_t drop = cs.history.size() - kMaxHistoryHours;
    cs.history.erase(cs.history.begin(), cs.history.begin() + static_cast<std::ptrdiff_t>(drop));
    cs.history_first_hour = static_cast<int>((cs.history_first_hour + drop) % 24);
  }
}

// The intensity expected in each of the coming windows: the reading for the
// rest of this hour, the forecast for the next, then the same hour on the
// last observed day.
std::vector<double> ComingWindows(const CarbonState& cs, double now_value, double forecast, int64_t window_s,
                                  int horizon) {
  const int64_t last = static_cast<int64_t>(cs.history.size()) - 1;
  std::vector<double> coming(horizon);
  for (int k = 0; k < horizon; ++k) {
    const int64_t ahead_h = k * window_s / 3600;
    const int64_t idx = last + ahead_h - 24 * ((ahead_h + 23) / 24);
    coming[k] = ahead_h == 0 ? now_value : ahead_h == 1 || idx < 0 ? forecast : cs.history[idx];
  }
  return coming;
}

std::string Explain(const carbon::KnobSet& knobs, const CarbonWindowConfig& config, int64_t now,
                    const CarbonReading& reading, const CarbonState& cs, int option) {
  const carbon::KnobOption& o = knobs.options[option];
  char line[512];
  std::snprintf(line, sizeof line,
                "%s: intensity %.1f gCO2/kWh%s (forecast %.1f next window), lambda %.3g g/s -> %s (time %+.2f%%, "
                "energy %+.2f%% vs %s); slowdown so far %.2f%% of budget %.2f%%",
                carbon::FormatIsoUtc(now).c_str(), reading.carbon_g_per_kwh, reading.stale ? " (stale)" : "",
                cs.forecast_g_per_kwh, cs.lambda_g_per_s, o.label.c_str(),
                100 * (o.time_s / knobs.reference.time_s - 1), 100 * (o.energy_j / knobs.reference.energy_j - 1),
                knobs.reference.label.c_str(), 100 * CarbonSlowdownSoFar(cs), 100 * config.slowdown_budget);
  return line;
}

}  // namespace

CarbonForecastCache::CarbonForecastCache() = default;
CarbonForecastCache::~CarbonForecastCache() = default;
CarbonForecastCache::CarbonForecastCache(CarbonForecastCache&&) noexcept = default;
CarbonForecastCache& CarbonForecastCache::operator=(CarbonForecastCache&&) noexcept = default;

double CarbonForecastCache::ForecastNextHour(const CarbonState& state) {
  const int64_t n = static_cast<int64_t>(state.history.size());
  const int64_t first_hour = state.history_last_hour - (n - 1);
  // Feed every hour but the last (which a later decision in the same hour
  // may still replace); rebuild when the history does not continue ours.
  if (!completed_ || next_hour_ < first_hour || next_hour_ > state.history_last_hour) {
    completed_ = std::make_unique<carbon::BlendForecaster>(1, state.history_first_hour);
    next_hour_ = first_hour;
  }
  for (; next_hour_ < state.history_last_hour; ++next_hour_) completed_->Observe(state.history[next_hour_ - first_hour]);
  carbon::BlendForecaster with_last = *completed_;
  with_last.Observe(state.history.back());
  return with_last.Predict();
}

carbon::KnobSet FrontierKnobsFromNoSlowdown(const Frontier& frontier) {
  const int base = NoSlowdownPlanIndex(frontier);
  carbon::KnobSet k;
  k.name = "Perseus frontier";
  k.reference = {"no-slowdown plan", frontier.plans[base].time_s, frontier.plans[base].energy_j, base};
  std::vector<carbon::KnobOption> plans;
  for (size_t i = base; i < frontier.plans.size(); ++i) {
    plans.push_back({"frontier plan " + std::to_string(i), frontier.plans[i].time_s, frontier.plans[i].energy_j,
                     static_cast<int>(i)});
  }
  k.pareto = carbon::ParetoFront(plans);
  k.options = carbon::LowerConvexHull(std::move(plans));
  return k;
}

double CarbonSlowdownSoFar(const CarbonState& state) {
  return state.work_windows > 0 ? state.elapsed_windows / state.work_windows - 1 : 0;
}

int DecideCarbonWindow(const carbon::KnobSet& knobs, const CarbonWindowConfig& config, int64_t now,
                       const CarbonReading& reading, CarbonState* state, CarbonForecastCache* cache,
                       const std::vector<double>& known_coming) {
  CarbonState& cs = *state;
  const double budget = config.slowdown_budget;
  if (cs.evaluated && now > cs.last_eval_unix_s) {
    const double dt = static_cast<double>(now - cs.last_eval_unix_s) / static_cast<double>(config.window_s);
    const double option_time_s = cs.option_time_s > 0 ? cs.option_time_s : knobs.reference.time_s;
    cs.elapsed_windows += dt;
    cs.work_windows += dt * knobs.reference.time_s / option_time_s;
  }
  RecordHour(cs, now, reading.carbon_g_per_kwh);
  CarbonForecastCache fresh;
  cs.forecast_g_per_kwh = (cache ? cache : &fresh)->ForecastNextHour(cs);
  const int horizon = static_cast<int>(std::clamp<int64_t>(86400 / config.window_s, 1, kMaxHorizonWindows));
  const std::vector<double> coming =
      known_coming.empty()
          ? ComingWindows(cs, reading.carbon_g_per_kwh, cs.forecast_g_per_kwh, config.window_s, horizon)
          : known_coming;
  const double need = (cs.elapsed_windows + static_cast<double>(coming.size())) / (1 + budget) - cs.work_windows;
  cs.lambda_g_per_s = LambdaForWork(knobs, coming, std::max(0.0, need)).lambda_g_per_s;
  int option = ChooseOption(knobs, reading.carbon_g_per_kwh, cs.lambda_g_per_s);
  // Budget guard: after the next window the policy's slowdown is still within the budget.
  while (option > 0 &&
         cs.work_windows + WorkPerWindowH(knobs, option) < (cs.elapsed_windows + 1) / (1 + budget) - 1e-9) {
    --option;
  }
  cs.option = option;
  cs.option_time_s = knobs.options[option].time_s;
  cs.plan_index = std::max(0, knobs.options[option].plan_index);
  cs.evaluated = true;
  cs.last_eval_unix_s = now;
  cs.intensity_g_per_kwh = reading.carbon_g_per_kwh;
  cs.stale = reading.stale;
  cs.explanation = Explain(knobs, config, now, reading, cs, option);
  return option;
}

}  // namespace perseus::control
