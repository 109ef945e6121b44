// The window decision and its hourly history.
#include "control/carbon_window.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <optional>
#include <span>

#include "carbon/ensemble_forecaster.h"
#include "carbon/intensity_trace.h"
#include "carbon/iso_time.h"
#include "control/carbon_choice.h"
#include "control/plan_assignment.h"

namespace perseus::control {
namespace {

int64_t FloorDiv(int64_t a, int64_t b) { return a / b - ((a % b != 0) && ((a < 0) != (b < 0))); }

// Records the reading as the intensity (and fuel mix) of the UTC hour
// containing `now`. Hours no decision saw (windows longer than an hour, a
// server that was down) repeat the last value, so the history stays hourly
// whatever the window, as the forecaster's daily and weekly lags need. The
// mix covers the hours since the first reading with a usable one, while
// every reading has one: a reading without breaks it.
void RecordHour(CarbonState& cs, int64_t now, const CarbonReading& reading) {
  constexpr size_t kFuels = carbon::kEiaFuelCount;
  const int64_t hour = FloorDiv(now, 3600);
  const int64_t gap = cs.history.empty() ? 0 : hour - cs.history_last_hour - 1;
  std::vector<double>& mix = cs.history_mix_mw;
  if (cs.history.empty() || cs.history_last_hour < 0 || gap >= static_cast<int64_t>(kMaxHistoryHours)) {
    cs.history = {reading.carbon_g_per_kwh};
    mix.clear();
  } else if (gap < 0) {
    cs.history.back() = reading.carbon_g_per_kwh;  // another decision in the same hour (or the clock went back)
    if (!mix.empty()) mix.resize(mix.size() - kFuels);
  } else {
    cs.history.insert(cs.history.end(), static_cast<size_t>(gap), cs.history.back());
    cs.history.push_back(reading.carbon_g_per_kwh);
    if (!mix.empty()) {
      const std::vector<double> last(mix.end() - kFuels, mix.end());
      for (int64_t g = 0; g < gap; ++g) mix.insert(mix.end(), last.begin(), last.end());
    }
  }
  if (carbon::UsableMix(reading.mix_mw)) mix.insert(mix.end(), reading.mix_mw.begin(), reading.mix_mw.end());
  else mix.clear();
  cs.history_last_hour = std::max(cs.history_last_hour, hour);
  if (cs.history.size() > kMaxHistoryHours) {
    const size_t drop = cs.history.size() - kMaxHistoryHours;
    cs.history.erase(cs.history.begin(), cs.history.begin() + static_cast<std::ptrdiff_t>(drop));
  }
  if (mix.size() > cs.history.size() * kFuels) {
    mix.erase(mix.begin(), mix.end() - static_cast<std::ptrdiff_t>(cs.history.size() * kFuels));
  }
}

// Hour i of the history's fuel mix. REQUIRES: ForecastUsesFuelMix(cs).
std::span<const double> MixOfHour(const CarbonState& cs, size_t i) {
  return {cs.history_mix_mw.data() + i * carbon::kEiaFuelCount, carbon::kEiaFuelCount};
}

// The mean of the intensity at the hour of history[idx] over the last 7
// observed days (fewer when the history is shorter).
double WeekTimeOfDayMean(const CarbonState& cs, int64_t idx) {
  double sum = 0;
  int days = 0;
  for (; days < 7 && idx - 24 * days >= 0; ++days) sum += cs.history[idx - 24 * days];
  return sum / days;
}

// The intensity expected in each of the coming windows from what is known
// before them: the last recorded hour (a live reading) for the rest of its
// hour, the forecast for the hour after, the same hour on the last observed
// day for the rest of the coming day, and past it that hour's mean over the
// last 7 days (beyond a day, yesterday's noise costs more than it tells:
// docs/carbon.md, "Evaluation").
std::vector<double> ComingWindows(const CarbonState& cs, double forecast, int64_t now_s, int64_t window_s, int horizon) {
  const int64_t last = static_cast<int64_t>(cs.history.size()) - 1;
  const int64_t delay_h = std::max<int64_t>(0, FloorDiv(now_s, 3600) - cs.history_last_hour);
  std::vector<double> coming(horizon);
  for (int k = 0; k < horizon; ++k) {
    const int64_t ahead_h = delay_h + (now_s % 3600 + k * window_s) / 3600;  // hours after the last recorded
    const int64_t idx = last + ahead_h - 24 * ((ahead_h + 23) / 24);          // the same hour, last observed day
    if (ahead_h == 0) coming[k] = cs.history.back();
    else if (ahead_h == 1 || idx < 0) coming[k] = forecast;
    else if (ahead_h < 24) coming[k] = cs.history[idx];
    else coming[k] = WeekTimeOfDayMean(cs, idx);
  }
  return coming;
}

std::string Explain(const carbon::KnobSet& knobs, const CarbonWindowConfig& config, int64_t now,
                    const CarbonReading& reading, const CarbonState& cs, double now_g_per_kwh, int option) {
  const bool live = reading.of_unix_s < 0 || FloorDiv(reading.of_unix_s, 3600) == FloorDiv(now, 3600);
  char seen[160];
  if (live) {
    std::snprintf(seen, sizeof seen, "intensity %.1f gCO2/kWh%s (forecast %.1f next hour)", reading.carbon_g_per_kwh,
                  reading.stale ? " (stale)" : "", cs.forecast_g_per_kwh);
  } else {
    std::snprintf(seen, sizeof seen, "last hour %.1f gCO2/kWh%s, forecast %.1f this hour", reading.carbon_g_per_kwh,
                  reading.stale ? " (stale)" : "", now_g_per_kwh);
  }
  char what[200] = "paused (GPUs released)";
  if (option < 0 && knobs.pause_power_w > 0) {
    std::snprintf(what, sizeof what, "paused (GPUs held idle, %.0f W)", knobs.pause_power_w);
  }
  if (option >= 0) {
    const carbon::KnobOption& o = knobs.options[option];
    std::snprintf(what, sizeof what, "%s (time %+.2f%%, energy %+.2f%% vs %s)", o.label.c_str(),
                  100 * (o.time_s / knobs.reference.time_s - 1), 100 * (o.energy_j / knobs.reference.energy_j - 1),
                  knobs.reference.label.c_str());
  }
  char line[512];
  std::snprintf(line, sizeof line, "%s: %s, mu %.3g g/s -> %s; slowdown so far %.2f%% of %s %.2f%%",
                carbon::FormatIsoUtc(now).c_str(), seen, cs.lambda_g_per_s, what, 100 * CarbonSlowdownSoFar(cs),
                config.job_work_windows > 0 ? "deadline slack" : "budget", 100 * config.slowdown_budget);
  return line;
}

// The windows the plan covers (share of each that is available) and the
// work it must make up in them: a rolling day to be on budget at its end,
// or with a known length the rest of the job.
struct Horizon {
  std::vector<double> share;
  double need = 0;
};
Horizon PlanHorizon(const CarbonWindowConfig& config, const CarbonState& cs) {
  Horizon h;
  if (config.job_work_windows <= 0) {
    const int n = static_cast<int>(std::clamp<int64_t>(86400 / config.window_s, 1, kMaxHorizonWindows));
    h.share.assign(n, 1.0);
    h.need = (cs.elapsed_windows + n) / (1 + config.slowdown_budget) - cs.work_windows;
    return h;
  }
  const double left = config.job_work_windows * (1 + config.slowdown_budget) - cs.elapsed_windows;
  const int n = std::clamp(static_cast<int>(std::ceil(left - 1e-9)), 1, static_cast<int>(kMaxHistoryHours));
  for (int k = 0; k < n; ++k) h.share.push_back(std::clamp(left - k, 1e-9, 1.0));
  h.need = config.job_work_windows - cs.work_windows;
  return h;
}

// The first `windows` windows of `h` (the last one in part), for the same work.
Horizon Truncated(const Horizon& h, double windows) { return {TruncatedShare(h.share, windows), h.need}; }
// `h` but its last `windows` of time, for the same work.
Horizon Shortened(const Horizon& h, double windows) { return {ShortenedShare(h.share, windows), h.need}; }

// Whether the decision may pause the job: only with a known length.
bool MayPause(const CarbonWindowConfig& config) { return config.may_pause && config.job_work_windows > 0; }

// The restart a resume costs, in windows: only where pauses release the GPUs.
double RestartWindows(const carbon::KnobSet& knobs, const CarbonWindowConfig& config) {
  return MayPause(config) && knobs.pause_power_w <= 0 ? config.restart_windows : 0;
}

// The option PlanWork plans for the first of the coming windows (the nearer
// of two points it mixes), as an index into knobs.options.
//
// A pause draws power (knobs.pause_power_w > 0, the GPUs held) until the job
// ends, and a plan that pauses ends at the deadline: it is kept only when it
// costs less carbon, idle hours included, than the plan that never pauses and
// ends when its slowest point would (the horizons between are not tried).
// A pause that releases the GPUs costs a restart (`restart_windows` > 0) at
// every resume: a plan that pauses has that much less time per resume it
// plans (PlanWorkWithRestarts), and a running job keeps it only when it costs
// less carbon, the restarts' energy included, than not pausing over the
// whole horizon (less a restart under way); a paused job, which must restart
// anyway, plans with the shorter horizon.
int PlannedOption(const carbon::KnobSet& knobs, const std::vector<double>& coming, const Horizon& h, bool may_pause,
                  double restart_windows, CarbonState& cs) {
  std::vector<RatePower> hull = RatePowerHull(knobs, may_pause);
  const double need = std::max(0.0, h.need);
  // A restart under way (restart_s over a window, or a lifted pause) takes
  // its time off every plan (a paused job has none).
  const double under_way = cs.restart_left_windows;
  const RestartingPlan pausing = PlanWorkWithRestarts(hull, coming, h.share, need, restart_windows,
                                                      knobs.restart_power_w, cs.paused && cs.evaluated, under_way);
  WorkPlan plan = pausing.plan;
  std::vector<RatePower> running = RatePowerHull(knobs, false);
  std::optional<Horizon> without;  // the plan that never pauses, where it competes
  if (may_pause && knobs.pause_power_w > 0) without = Truncated(h, need / running.front().rate);
  if (may_pause && restart_windows > 0 && !cs.paused) without = under_way > 0 ? Shortened(h, under_way) : h;
  if (without) {
    const WorkPlan run = PlanWork(running, coming, without->share, need);
    // A pause off the hull (it draws more than the slowest option) always
    // takes the plan that never pauses: the deadline's windows are not all run.
    if (run.feasible &&
        (hull.front().option >= 0 || !plan.feasible ||
         PlanCarbonG(running, run, coming, without->share, 1) <=
             PlanCarbonG(hull, plan, coming, pausing.share, 1) + pausing.restart_carbon_g)) {
      hull = std::move(running);
      plan = run;
    }
  }
  cs.lambda_g_per_s = plan.mu_g_per_s;
  return RunPoint(hull, plan.windows.front()).option;
}

// Step 1: the time since the last decision, charged to the option then chosen.
void ChargeElapsed(const carbon::KnobSet& knobs, const CarbonWindowConfig& config, int64_t now, CarbonState& cs) {
  if (!cs.evaluated || now <= cs.last_eval_unix_s) return;
  const double dt = static_cast<double>(now - cs.last_eval_unix_s) / static_cast<double>(config.window_s);
  const double option_time_s = cs.option_time_s > 0 ? cs.option_time_s : knobs.reference.time_s;
  const double restarting = std::min(dt, cs.restart_left_windows);
  cs.restart_left_windows -= restarting;
  cs.elapsed_windows += dt;
  if (!cs.paused) cs.work_windows += (dt - restarting) * knobs.reference.time_s / option_time_s;
}

double RateOf(const carbon::KnobSet& knobs, int option) {
  return option < 0 ? 0 : knobs.reference.time_s / knobs.options[option].time_s;
}

// Step 5: faster options (options are fastest first; -1 is the pause) until
// the budget holds after the next window: the average slowdown, or with a
// known length finishing by the deadline at full speed.
int Guard(const carbon::KnobSet& knobs, const CarbonWindowConfig& config, const CarbonState& cs, int option) {
  const double budget = config.slowdown_budget;
  auto breaks = [&](int o) {
    if (config.job_work_windows <= 0) {
      return cs.work_windows + RateOf(knobs, o) < (cs.elapsed_windows + 1) / (1 + budget) - 1e-9;
    }
    const double left = config.job_work_windows * (1 + budget) - cs.elapsed_windows;  // to the deadline
    // The time no work is done in: a resume's restart (pausing now or resuming
    // now), or what is left of one under way.
    const double lost = o < 0 || cs.paused ? RestartWindows(knobs, config) : cs.restart_left_windows;
    const double by_deadline =
        o < 0 ? cs.work_windows + std::max(0.0, left - 1 - lost) * RateOf(knobs, 0)
              : cs.work_windows + std::clamp(std::min(left, 1.0) - lost, 0.0, 1.0) * RateOf(knobs, o) +
                    std::max(0.0, left - std::max(1.0, lost)) * RateOf(knobs, 0);
    return by_deadline < config.job_work_windows - 1e-9;
  };
  if (option < 0 && breaks(option)) option = static_cast<int>(knobs.options.size()) - 1;
  while (option > 0 && breaks(option)) --option;
  return option;
}

// Steps 3 and 4's inputs: the coming windows' intensities, estimated or
// (studies only) known, and the horizon they cover.
std::vector<double> ComingIntensities(const CarbonWindowConfig& config, const CarbonState& cs, int64_t now,
                                      const std::vector<double>& known_coming, Horizon& h) {
  if (config.job_work_windows <= 0 && !known_coming.empty()) {  // a rolling plan over what is known
    h.share.assign(known_coming.size(), 1.0);
    h.need = (cs.elapsed_windows + known_coming.size()) / (1 + config.slowdown_budget) - cs.work_windows;
    return known_coming;
  }
  std::vector<double> coming =
      ComingWindows(cs, cs.forecast_g_per_kwh, now, config.window_s, static_cast<int>(h.share.size()));
  std::copy_n(known_coming.begin(), std::min(known_coming.size(), coming.size()), coming.begin());
  return coming;
}

}  // namespace

CarbonForecastCache::CarbonForecastCache() = default;
CarbonForecastCache::~CarbonForecastCache() = default;
CarbonForecastCache::CarbonForecastCache(CarbonForecastCache&&) noexcept = default;
CarbonForecastCache& CarbonForecastCache::operator=(CarbonForecastCache&&) noexcept = default;

size_t FuelMixHours(const CarbonState& state) { return state.history_mix_mw.size() / carbon::kEiaFuelCount; }

bool ForecastUsesFuelMix(const CarbonState& state) {
  return !state.history.empty() && state.history_mix_mw.size() == state.history.size() * carbon::kEiaFuelCount;
}

bool CarbonForecastCache::Continues(const CarbonState& state, bool with_mix) const {
  const int64_t first_hour = state.history_last_hour - (static_cast<int64_t>(state.history.size()) - 1);
  if (!fed_ || with_mix != with_mix_ || fed_through_ < first_hour || fed_through_ > state.history_last_hour) {
    return false;
  }
  const size_t i = static_cast<size_t>(fed_through_ - first_hour);
  if (state.history[i] != fed_last_value_) return false;
  if (!with_mix) return true;
  const std::span<const double> mix = MixOfHour(state, i);
  return std::equal(mix.begin(), mix.end(), fed_last_mix_.begin(), fed_last_mix_.end());
}

double CarbonForecastCache::ForecastNextHour(const CarbonState& state) {
  const int64_t first_hour = state.history_last_hour - (static_cast<int64_t>(state.history.size()) - 1);
  const bool with_mix = ForecastUsesFuelMix(state);
  // Taken out while it is fed, so a feed that throws leaves no half-fed
  // forecaster behind (the next call rebuilds).
  std::unique_ptr<carbon::EnsembleForecaster> fed = Continues(state, with_mix) ? std::move(fed_) : nullptr;
  if (!fed) {
    fed = std::make_unique<carbon::EnsembleForecaster>(
        1, carbon::HourOfWeekUtc(first_hour * 3600),
        with_mix ? carbon::EiaLifecycleFactors() : std::vector<double>{});
    fed_through_ = first_hour - 1;
  }
  fed_.reset();
  for (int64_t hour = fed_through_ + 1; hour <= state.history_last_hour; ++hour) {
    const size_t i = static_cast<size_t>(hour - first_hour);
    if (with_mix) fed->ObserveWithMix(state.history[i], MixOfHour(state, i));
    else fed->Observe(state.history[i]);
  }
  fed_through_ = state.history_last_hour;
  fed_last_value_ = state.history.back();
  if (with_mix) {
    const std::span<const double> last = MixOfHour(state, state.history.size() - 1);
    fed_last_mix_.assign(last.begin(), last.end());
  } else {
    fed_last_mix_.clear();
  }
  with_mix_ = with_mix;
  fed_ = std::move(fed);
  return fed_->Predict();
}

double PausePowerW(const Problem& problem, bool holds_gpus) {
  return holds_gpus ? problem.pipeline_blocking_power_w() : 0;
}

double RestartPowerW(const Problem& problem, std::optional<double> per_gpu_w) {
  if (!per_gpu_w) return PausePowerW(problem, /*holds_gpus=*/true);
  return *per_gpu_w * problem.num_stages() * problem.gpus_per_stage;
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

CarbonReading FromIntensityReading(const carbon::IntensityReading& reading) {
  return {reading.carbon_g_per_kwh, reading.stale, reading.unix_s, reading.mix_mw};
}

void SeedCarbonHistory(const std::vector<carbon::IntensityReading>& past, CarbonState* state) {
  if (!state->history.empty()) return;
  for (const carbon::IntensityReading& r : past) RecordHour(*state, r.unix_s, FromIntensityReading(r));
}

void LiftCarbonPause(const carbon::KnobSet& knobs, const CarbonWindowConfig& config, int64_t now_unix_s,
                     CarbonState* state) {
  CarbonState& cs = *state;
  if (!cs.evaluated || !cs.paused) return;
  ChargeElapsed(knobs, config, now_unix_s, cs);  // paused: time, no work
  cs.paused = false;
  cs.option = 0;  // stored as "not paused"; the plan it runs stays plan_index (option_time_s its time)
  cs.restart_left_windows = RestartWindows(knobs, config);
  cs.last_eval_unix_s = std::max(cs.last_eval_unix_s, now_unix_s);
}

double CarbonSlowdownSoFar(const CarbonState& state) {
  return state.work_windows > 0 ? state.elapsed_windows / state.work_windows - 1 : 0;
}

int DecideCarbonWindow(const carbon::KnobSet& knobs, const CarbonWindowConfig& config, int64_t now,
                       const CarbonReading& reading, CarbonState* state, CarbonForecastCache* cache,
                       const std::vector<double>& known_coming) {
  CarbonState& cs = *state;
  ChargeElapsed(knobs, config, now, cs);
  RecordHour(cs, reading.of_unix_s < 0 ? now : std::min(now, reading.of_unix_s), reading);
  CarbonForecastCache fresh;
  cs.forecast_g_per_kwh = (cache ? cache : &fresh)->ForecastNextHour(cs);
  Horizon h = PlanHorizon(config, cs);
  const std::vector<double> coming = ComingIntensities(config, cs, now, known_coming, h);
  const bool may_pause = MayPause(config);
  const double restart = RestartWindows(knobs, config);
  const int option = Guard(knobs, config, cs, PlannedOption(knobs, coming, h, may_pause, restart, cs));
  // A resume starts a restart; a pause ends one under way.
  cs.restart_left_windows = option < 0 ? 0 : cs.paused && cs.evaluated ? restart : cs.restart_left_windows;
  cs.option = option;
  cs.paused = option < 0;
  if (option >= 0) cs.option_time_s = knobs.options[option].time_s;
  cs.plan_index = option < 0 ? cs.plan_index : std::max(0, knobs.options[option].plan_index);
  cs.evaluated = true;
  cs.last_eval_unix_s = now;
  cs.intensity_g_per_kwh = reading.carbon_g_per_kwh;
  cs.stale = reading.stale;
  cs.explanation = Explain(knobs, config, now, reading, cs, coming.front(), option);
  return option;
}

}  // namespace perseus::control
