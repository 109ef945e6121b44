// The carbon window decision (docs/carbon.md, "The window decision"): the
// one rule `perseus serve` runs for a job with a carbon config and that
// `perseus carbon` replays on a trace.
//
// At the start of each window of `window_s` seconds, given a reading (the
// intensity of the hour now for a live source, of the hour before for a
// trace replayed without look-ahead):
//  1. charge the time since the last decision to the option then chosen:
//     elapsed_windows += dt, work_windows += dt * T_reference / T_option;
//  2. record the reading as the intensity of its UTC hour (the history is
//     hourly whatever the window; hours no decision saw repeat the last value);
//  3. forecast the hour after the last one recorded (EnsembleForecaster over the
//     hourly history) and estimate the coming day of windows from what is
//     known before them: a live reading for the rest of its hour, the
//     forecast for the next hour, then the same hour on the last observed
//     day, and beyond a day that hour's mean over the last 7 days;
//  4. price progress with PlanWork (control/carbon_choice.h): the least-carbon
//     plan over the coming day that makes up the work the budget requires by
//     then, (elapsed + horizon) / (1 + budget) - work (with a known length:
//     over the rest of the job, all of its work); run what it plans for this
//     window (the nearer point where it mixes two);
//  5. guard: step to faster options until the average slowdown,
//     elapsed / work - 1, is within the budget after the next window (with
//     a known length: until the deadline is still reachable at full speed).
// Slowdown is counted against knobs.reference (the server: its no-slowdown plan).
// The decision is pure: time is passed in, nothing is read or written
// outside the state. Thread safety: none; the caller owns the state.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "carbon/intensity_source.h"
#include "carbon/intensity_trace.h"
#include "carbon/knob_options.h"
#include "perseus/optimizer.h"
#include "perseus/problem.h"

namespace perseus::carbon {
class EnsembleForecaster;
}

namespace perseus::control {

// What the server stores with a job (and a replay keeps per run).
struct CarbonState {
  int plan_index = 0;                // knobs.options[option].plan_index (0 when it is not a frontier plan)
  int option = 0;                    // into knobs.options: the option chosen last (-1: paused)
  double option_time_s = 0;          // its time per unit of work (<= 0: the reference's; ignored when paused)
  bool paused = false;               // the last decision paused the job (may_pause only)
  bool evaluated = false;            // false: no decision yet (plan_index 0)
  int64_t last_eval_unix_s = 0;      // when the option was chosen
  int64_t history_last_hour = -1;    // floor(unix_s / 3600) of history.back()
  double intensity_g_per_kwh = 0;    // the reading at the last decision
  bool stale = false;                // the reading was a fallback
  double forecast_g_per_kwh = 0;     // at the last decision, the forecast of the hour after the last one recorded
  // The price of progress (mu, control/carbon_choice.h), g per second of
  // reference work, at the last decision. (Named lambda before the rule
  // maximised mu * rate - c * power; the stored name is kept.)
  double lambda_g_per_s = 0;
  double elapsed_windows = 0;        // wall time under carbon control, in windows
  // After a resume (CarbonWindowConfig::restart_windows): restart time not yet
  // charged, in windows; the time since the last decision makes no progress
  // until it has passed.
  double restart_left_windows = 0;
  double work_windows = 0;           // work done, in windows of the reference
  std::vector<double> history;       // one intensity per UTC hour, oldest first (at most 4 weeks)
  // The fuel mix of the last hours of history, oldest first, one row of
  // carbon::kEiaFuelCount values per hour (MW per fuel of carbon::kEiaFuels;
  // flat, so copying the state costs one allocation), where the source
  // publishes it: from the first reading with a usable mix on, while every
  // reading has one. When it covers the whole history the forecast uses it
  // (EnsembleForecaster's mix members). The stored JSON has one array per hour.
  std::vector<double> history_mix_mw;
  std::string explanation;           // the last decision's log line
};

// The forecaster fed with the history so far, kept between decisions so a
// decision costs one observation, not the whole history. The last hour is
// fed too; a later decision in the same hour that changes its value (a live
// reading) rebuilds it from the history, as does anything else that does not
// continue what it was fed. Not stored: after a restart (or given an empty
// cache) it is rebuilt from the history kept.
class CarbonForecastCache {
 public:
  CarbonForecastCache();
  ~CarbonForecastCache();
  CarbonForecastCache(CarbonForecastCache&&) noexcept;
  CarbonForecastCache& operator=(CarbonForecastCache&&) noexcept;

  // The forecast for the hour after state.history.back().
  double ForecastNextHour(const CarbonState& state);

 private:
  // Whether the history continues what the forecaster was fed.
  bool Continues(const CarbonState& state, bool with_mix) const;

  std::unique_ptr<carbon::EnsembleForecaster> fed_;  // fed every hour up to fed_through_
  int64_t fed_through_ = -1;                     // absolute hour
  double fed_last_value_ = 0;                    // what it was fed for that hour
  std::vector<double> fed_last_mix_;
  bool with_mix_ = false;  // fed_ has the mix members
};

struct CarbonWindowConfig {
  double slowdown_budget = 0.05;  // allowed average slowdown vs knobs.reference
  int64_t window_s = 3600;
  // > 0: the job's length is known, in windows of reference work, and the
  // budget is a deadline: the job must finish within job_work_windows *
  // (1 + budget) windows of its first decision. The plan then covers the
  // rest of the job instead of a rolling day (hours past the coming day are
  // estimated as the same hour on the last observed day), and the guard
  // keeps the deadline reachable at full speed instead of the average
  // slowdown within the budget at every boundary.
  double job_work_windows = 0;
  // With a known length: the job may pause (GPUs released; no progress, no power).
  bool may_pause = false;
  // With may_pause and the GPUs released: the wall time a resume costs before
  // work goes on (the job stopped, waits for its restart and restores its
  // checkpoint), in windows. Each resume is charged it (CarbonState::
  // restart_left_windows); a plan that pauses is made with that much less
  // time for every resume it plans, and kept only if its carbon, with each
  // restart's energy (KnobSet::restart_power_w), beats not pausing; the
  // guard keeps the deadline reachable with it.
  double restart_windows = 0;
};

struct CarbonReading {
  double carbon_g_per_kwh = 0;
  bool stale = false;  // a fallback value (the source failed)
  // A time within the hour whose intensity this is; < 0: the hour of the
  // decision (a live reading). A replayed trace without look-ahead gives the
  // hour before: an hour's average is known only when it is over.
  int64_t of_unix_s = -1;
  // That hour's fuel mix (MW per fuel of carbon::kEiaFuels), where the
  // source publishes it; else empty.
  std::vector<double> mix_mw = {};
};

// Hours of history the fuel mix covers (the last ones).
size_t FuelMixHours(const CarbonState& state);
// Whether the next forecast uses the fuel mix: it covers the whole history.
bool ForecastUsesFuelMix(const CarbonState& state);

// At most this many windows are planned ahead on a rolling basis (a day of
// windows, at least one); with a known length, the rest of the job (at most
// kMaxHistoryHours windows).
inline constexpr int64_t kMaxHorizonWindows = 288;
// Hours of intensity history kept.
inline constexpr size_t kMaxHistoryHours = 28 * 24;
// Hours of history a job's first decision starts with, from what its source
// knew (carbon::IntensitySource::History; the replay: the trace before the run).
inline constexpr int kSeededHistoryHours = 21 * 24;

// A source's reading as the decision takes it.
CarbonReading FromIntensityReading(const carbon::IntensityReading& reading);

// Records `past` (a source's hourly readings, oldest first:
// carbon::IntensitySource::History) as the history of a state that has
// none, as decisions every hour would have: the first decision then
// forecasts and plans from what the source knew (yesterday's hours, the last
// week's), not from one reading. Does nothing to a state with a history.
void SeedCarbonHistory(const std::vector<carbon::IntensityReading>& past, CarbonState* state);

// Ends a pause without a decision (the server's, when its decisions have
// failed for too long): the time since the last decision is charged as
// paused (no work), the job runs plan_index again, a release pause's resume
// is charged its restart, and the lift counts as that decision's time (the
// next decision is due a window later). Nothing unless the state is paused.
void LiftCarbonPause(const carbon::KnobSet& knobs, const CarbonWindowConfig& config, int64_t now_unix_s,
                     CarbonState* state);

// What a pause draws per pipeline (KnobSet::pause_power_w): its blocking power
// when the ranks wait holding their GPUs, nothing when the GPUs are released.
double PausePowerW(const Problem& problem, bool holds_gpus);
// What a pipeline draws while a released job restarts (KnobSet::restart_power_w):
// `per_gpu_w` for each of its GPUs (stages x GPUs per stage), or, absent,
// each GPU's blocking power, as they idle while the processes start.
double RestartPowerW(const Problem& problem, std::optional<double> per_gpu_w);

// The options of a job's carbon decision: the convex hull of the frontier's
// plans from the no-slowdown plan on (NoSlowdownPlanIndex), with that plan,
// what runs without carbon awareness, as the reference.
carbon::KnobSet FrontierKnobsFromNoSlowdown(const Frontier& frontier);

// Decides the window starting at `now_unix_s` and updates *state. `known_coming`
// replaces the estimate of the coming windows' intensities (studies with
// perfect foresight only; empty otherwise). `cache` may be null (rebuilt
// from the history). Returns the chosen index into knobs.options, or -1 for
// a pause (may_pause only).
// REQUIRES: !knobs.options.empty(); config.window_s > 0.
int DecideCarbonWindow(const carbon::KnobSet& knobs, const CarbonWindowConfig& config, int64_t now_unix_s,
                       const CarbonReading& reading, CarbonState* state, CarbonForecastCache* cache = nullptr,
                       const std::vector<double>& known_coming = {});

// The policy's own average slowdown so far (0 before any work).
double CarbonSlowdownSoFar(const CarbonState& state);

}  // namespace perseus::control
