#include "control/carbon_window.h"

#include <gtest/gtest.h>

#include <cmath>
#include <random>

#include "carbon/ensemble_forecaster.h"
#include "carbon/intensity_trace.h"
#include "carbon/iso_time.h"

namespace perseus::control {
namespace {

constexpr int64_t kDay0 = 1640995200;  // 2022-01-01T00:00:00Z, a Saturday

carbon::KnobSet FourPlans() {
  carbon::KnobSet k;
  k.options = {{"frontier plan 0", 1.00, 100, 0}, {"frontier plan 3", 1.03, 90, 3},
               {"frontier plan 5", 1.08, 84, 5}, {"frontier plan 9", 1.20, 80, 9}};
  k.pareto = k.options;
  k.reference = {"fastest plan", 1.00, 100, 0};
  return k;
}

// 100 g/kWh before noon UTC, 700 after, with some noise.
double Diurnal(int64_t now, std::mt19937& rng) {
  std::normal_distribution<double> noise(0, 20);
  return ((now - kDay0) % 86400 < 12 * 3600 ? 100 : 700) + noise(rng);
}

TEST(CarbonWindow, SlowsDownWhereTheGridIsDirtyAndKeepsTheBudgetAtEveryBoundary) {
  const carbon::KnobSet knobs = FourPlans();
  CarbonState state;
  CarbonForecastCache cache;
  std::mt19937 rng(3);
  double dirty_time = 0, clean_time = 0;
  int dirty = 0, clean = 0;
  for (int h = 0; h < 14 * 24; ++h) {
    const int64_t now = kDay0 + h * 3600;
    const double ci = Diurnal(now, rng);
    const int option = DecideCarbonWindow(knobs, {0.05, 3600}, now, {ci, false}, &state, &cache);
    EXPECT_EQ(state.plan_index, knobs.options[option].plan_index);
    EXPECT_LE(CarbonSlowdownSoFar(state), 0.05 + 1e-9) << "hour " << h;
    // After this window, too: the guard looks one window ahead.
    const double work_after = state.work_windows + 1.0 / knobs.options[option].time_s;
    EXPECT_LE((state.elapsed_windows + 1) / work_after - 1, 0.05 + 1e-9) << "hour " << h;
    if (h < 24) continue;  // the first day has no yesterday to plan with
    (ci > 400 ? dirty_time : clean_time) += knobs.options[option].time_s;
    ++(ci > 400 ? dirty : clean);
  }
  EXPECT_GT(dirty_time / dirty, clean_time / clean + 0.02);  // slower plans in the dirty half
  EXPECT_GT(CarbonSlowdownSoFar(state), 0.04);               // and the budget is spent
}

TEST(CarbonWindow, ZeroBudgetKeepsTheFastestOption) {
  const carbon::KnobSet knobs = FourPlans();
  CarbonState state;
  std::mt19937 rng(4);
  for (int h = 0; h < 72; ++h) {
    const int64_t now = kDay0 + h * 3600;
    EXPECT_EQ(DecideCarbonWindow(knobs, {0.0, 3600}, now, {Diurnal(now, rng), false}, &state), 0);
  }
}

// The cache is an optimisation only: with or without it, and with windows
// shorter and longer than an hour and gaps (a server that was down), every
// decision is the same while the history holds every hour seen (4 weeks;
// after that the cached forecaster remembers more than a rebuilt one).
TEST(CarbonWindow, TheForecastCacheChangesNoDecision) {
  const carbon::KnobSet knobs = FourPlans();
  for (int64_t window_s : {900, 3600, 7200}) {
    CarbonState cached, rebuilt;
    CarbonForecastCache cache;
    std::mt19937 rng(static_cast<unsigned>(window_s));
    int64_t now = kDay0;
    for (int i = 0; i < 3000 && now + 30 * 3600 < kDay0 + static_cast<int64_t>(kMaxHistoryHours) * 3600; ++i) {
      now += i % 97 == 96 ? 30 * 3600 : window_s;  // now and then a day and a half without decisions
      const double ci = Diurnal(now, rng);
      const int a = DecideCarbonWindow(knobs, {0.05, window_s}, now, {ci, false}, &cached, &cache);
      const int b = DecideCarbonWindow(knobs, {0.05, window_s}, now, {ci, false}, &rebuilt, nullptr);
      ASSERT_EQ(a, b) << "window " << window_s << " decision " << i;
      ASSERT_EQ(cached.forecast_g_per_kwh, rebuilt.forecast_g_per_kwh) << "window " << window_s << " decision " << i;
      ASSERT_EQ(cached.explanation, rebuilt.explanation);
    }
    EXPECT_GT(cached.history.size(), kMaxHistoryHours * 3 / 4);
  }
}

// The runtime's forecaster is the ensemble fed the history from its first
// hour, on the real calendar (the weekend feature needs the day of the
// week, which it takes from the absolute hour the server stores).
TEST(CarbonWindow, TheForecastIsTheEnsembleOnTheHistorysCalendar) {
  CarbonState state;
  std::mt19937 rng(3);
  const int64_t first = kDay0 + 5 * 3600;  // Saturday 05:00 UTC
  for (int i = 0; i < 24 * 10; ++i) state.history.push_back(Diurnal(first + i * 3600, rng));
  state.history_last_hour = first / 3600 + 24 * 10 - 1;
  carbon::EnsembleForecaster ensemble(1, carbon::HourOfWeekUtc(first));
  for (double v : state.history) ensemble.Observe(v);
  CarbonForecastCache cache;
  EXPECT_EQ(cache.ForecastNextHour(state), ensemble.Predict());
  carbon::EnsembleForecaster monday(1, 5);  // the same hours taken as from Monday 05:00
  for (double v : state.history) monday.Observe(v);
  EXPECT_NE(cache.ForecastNextHour(state), monday.Predict());
}

// A fuel mix for hour `now`: the diurnal intensity made of solar by day and
// gas and coal at night, with its intensity (kEiaFuels' factors).
std::vector<double> DiurnalMix(int64_t now, std::mt19937& rng) {
  std::normal_distribution<double> noise(0, 50);
  const bool day = (now - kDay0) % 86400 < 12 * 3600;
  //      WND                 SUN                 WAT  OIL  NG                  COL                NUC  OTH
  return {300 + noise(rng), day ? 2000.0 : 0.0, 100, 10, 900 + noise(rng), day ? 50.0 : 400.0, 500, 40};
}

CarbonReading MixReading(int64_t now, std::mt19937& rng) {
  CarbonReading r;
  r.mix_mw = DiurnalMix(now, rng);
  r.carbon_g_per_kwh = carbon::MixIntensity(r.mix_mw, carbon::EiaLifecycleFactors());
  return r;
}

// The stored mix, one row per hour.
std::vector<std::vector<double>> MixRows(const CarbonState& state) {
  std::vector<std::vector<double>> rows;
  for (size_t i = 0; i < FuelMixHours(state); ++i) {
    rows.emplace_back(state.history_mix_mw.begin() + static_cast<std::ptrdiff_t>(8 * i),
                      state.history_mix_mw.begin() + static_cast<std::ptrdiff_t>(8 * i + 8));
  }
  return rows;
}

// The mix covers the hours since the first reading with a usable one,
// hourly like the intensity, while every reading has one; the forecast uses
// it when it covers the whole history.
TEST(CarbonWindow, TheFuelMixIsKeptHourlyWhileEveryReadingHasOne) {
  const carbon::KnobSet knobs = FourPlans();
  const std::vector<double> a(8, 1), b(8, 2), c(8, 3);
  CarbonState state;
  DecideCarbonWindow(knobs, {0.05, 900}, kDay0, {100, false, -1, a}, &state);
  EXPECT_EQ(MixRows(state), (std::vector<std::vector<double>>{a}));
  EXPECT_TRUE(ForecastUsesFuelMix(state));
  DecideCarbonWindow(knobs, {0.05, 900}, kDay0 + 900, {200, false, -1, b}, &state);  // same hour: replaces
  EXPECT_EQ(MixRows(state), (std::vector<std::vector<double>>{b}));
  DecideCarbonWindow(knobs, {0.05, 900}, kDay0 + 3 * 3600, {300, false, -1, c}, &state);  // unseen hours repeat
  EXPECT_EQ(MixRows(state), (std::vector<std::vector<double>>{b, b, b, c}));
  EXPECT_TRUE(ForecastUsesFuelMix(state));
  DecideCarbonWindow(knobs, {0.05, 900}, kDay0 + 4 * 3600, {300, false}, &state);  // no mix: breaks it
  EXPECT_TRUE(state.history_mix_mw.empty());
  EXPECT_FALSE(ForecastUsesFuelMix(state));
  DecideCarbonWindow(knobs, {0.05, 900}, kDay0 + 5 * 3600, {300, false, -1, a}, &state);  // starts again
  EXPECT_EQ(MixRows(state), (std::vector<std::vector<double>>{a}));
  EXPECT_EQ(state.history.size(), 6u);
  EXPECT_FALSE(ForecastUsesFuelMix(state));  // it covers one hour of six
  DecideCarbonWindow(knobs, {0.05, 900}, kDay0 + 6 * 3600, {300, false, -1, a}, &state);
  DecideCarbonWindow(knobs, {0.05, 900}, kDay0 + 7 * 3600, {300, false, -1, {1, 2, 3}}, &state);  // not 8 fuels
  EXPECT_TRUE(state.history_mix_mw.empty());
  std::vector<double> negative = a;
  negative[4] = -1;
  DecideCarbonWindow(knobs, {0.05, 900}, kDay0 + 8 * 3600, {300, false, -1, a}, &state);
  DecideCarbonWindow(knobs, {0.05, 900}, kDay0 + 9 * 3600, {300, false, -1, negative}, &state);  // not usable
  EXPECT_TRUE(state.history_mix_mw.empty());
  // The history keeps four weeks and the mix never outgrows it.
  CarbonState full;
  CarbonForecastCache cache;
  for (int64_t h = 0; h < static_cast<int64_t>(kMaxHistoryHours) + 50; ++h) {
    DecideCarbonWindow(knobs, {0.05, 3600}, kDay0 + h * 3600, {300, false, -1, h % 2 ? a : b}, &full, &cache);
  }
  EXPECT_EQ(full.history.size(), kMaxHistoryHours);
  ASSERT_EQ(FuelMixHours(full), kMaxHistoryHours);
  EXPECT_EQ(MixRows(full).back(), a);  // the last hour, 721, is odd
  EXPECT_EQ(MixRows(full).front(), b);
}

// With the mix over the whole history the forecast is the ensemble with
// its mix members, fed every hour's intensity and mix; it differs from the
// forecast from the intensity alone.
TEST(CarbonWindow, TheForecastUsesTheFuelMixWhenItCoversTheHistory) {
  CarbonState state;
  std::mt19937 rng(5);
  const int64_t first = kDay0 + 5 * 3600;
  for (int i = 0; i < 24 * 10; ++i) {
    const CarbonReading r = MixReading(first + i * 3600, rng);
    state.history.push_back(r.carbon_g_per_kwh);
    state.history_mix_mw.insert(state.history_mix_mw.end(), r.mix_mw.begin(), r.mix_mw.end());
  }
  state.history_last_hour = first / 3600 + 24 * 10 - 1;
  carbon::EnsembleForecaster with_mix(1, carbon::HourOfWeekUtc(first), carbon::EiaLifecycleFactors());
  carbon::EnsembleForecaster alone(1, carbon::HourOfWeekUtc(first));
  for (size_t i = 0; i < state.history.size(); ++i) {
    with_mix.ObserveWithMix(state.history[i], MixRows(state)[i]);
    alone.Observe(state.history[i]);
  }
  CarbonForecastCache cache;
  EXPECT_EQ(cache.ForecastNextHour(state), with_mix.Predict());
  EXPECT_NE(with_mix.Predict(), alone.Predict());
  state.history_mix_mw.erase(state.history_mix_mw.begin(), state.history_mix_mw.begin() + 8);  // not the whole history
  EXPECT_EQ(cache.ForecastNextHour(state), alone.Predict());
}

// The cache follows the mix stopping (a source without it) and starting
// again (here after a gap longer than the history, which starts both
// afresh): every forecast equals the one rebuilt from the stored history.
TEST(CarbonWindow, TheForecastCacheFollowsTheFuelMixStoppingAndStarting) {
  const carbon::KnobSet knobs = FourPlans();
  CarbonState cached, rebuilt;
  CarbonForecastCache cache;
  std::mt19937 rng(6);
  int with_mix = 0;
  for (int h = 0; h < 17 * 24; ++h) {
    const int64_t hour = h < 12 * 24 ? h : h + static_cast<int64_t>(kMaxHistoryHours) + 100;
    const int64_t now = kDay0 + hour * 3600;
    CarbonReading r = MixReading(now, rng);
    if (h >= 10 * 24 && h < 12 * 24) r.mix_mw.clear();  // two days from a source without the mix
    const int a = DecideCarbonWindow(knobs, {0.05, 3600}, now, r, &cached, &cache);
    const int b = DecideCarbonWindow(knobs, {0.05, 3600}, now, r, &rebuilt, nullptr);
    ASSERT_EQ(a, b) << "hour " << h;
    ASSERT_EQ(cached.forecast_g_per_kwh, rebuilt.forecast_g_per_kwh) << "hour " << h;
    ASSERT_EQ(cached.explanation, rebuilt.explanation);
    with_mix += ForecastUsesFuelMix(cached);
  }
  EXPECT_EQ(with_mix, 10 * 24 + 5 * 24);  // the first ten days and the last five
}

TEST(CarbonWindow, HistoryIsHourlyWhateverTheWindow) {
  const carbon::KnobSet knobs = FourPlans();
  CarbonState state;
  DecideCarbonWindow(knobs, {0.05, 900}, kDay0, {100, false}, &state);
  DecideCarbonWindow(knobs, {0.05, 900}, kDay0 + 900, {200, false}, &state);  // same hour: replaces
  EXPECT_EQ(state.history, (std::vector<double>{200}));
  DecideCarbonWindow(knobs, {0.05, 900}, kDay0 + 3 * 3600, {300, false}, &state);  // two hours unseen repeat
  EXPECT_EQ(state.history, (std::vector<double>{200, 200, 200, 300}));
  EXPECT_EQ(state.history_last_hour, kDay0 / 3600 + 3);
  EXPECT_NE(state.explanation.find("2022-01-01T03:00:00Z: intensity 300.0 gCO2/kWh"), std::string::npos)
      << state.explanation;
}

// A first decision seeded with the source's past hours forecasts as a state
// that decided every one of those hours would; seeding a state that has a
// history does nothing.
TEST(CarbonWindow, ASeededFirstDecisionForecastsAsHourlyDecisionsWould) {
  const carbon::KnobSet knobs = FourPlans();
  std::mt19937 rng(5);
  CarbonState hourly;
  std::vector<carbon::IntensityReading> past;
  for (int h = 0; h < 3 * 24; ++h) {
    const int64_t hour_s = kDay0 + h * 3600;
    const carbon::IntensityReading r{Diurnal(hour_s, rng), hour_s, false};
    DecideCarbonWindow(knobs, {0.05, 3600}, hour_s, FromIntensityReading(r), &hourly);
    past.push_back(r);
  }
  CarbonState seeded;
  SeedCarbonHistory(past, &seeded);
  EXPECT_EQ(seeded.history, hourly.history);
  EXPECT_EQ(seeded.history_last_hour, hourly.history_last_hour);
  EXPECT_FALSE(seeded.evaluated);  // nothing decided, nothing charged
  EXPECT_EQ(seeded.elapsed_windows, 0);
  const int64_t now = kDay0 + 3 * 24 * 3600;
  const CarbonReading reading{650, false, now};
  DecideCarbonWindow(knobs, {0.05, 3600}, now, reading, &hourly);
  DecideCarbonWindow(knobs, {0.05, 3600}, now, reading, &seeded);
  EXPECT_EQ(seeded.forecast_g_per_kwh, hourly.forecast_g_per_kwh);
  EXPECT_EQ(seeded.history, hourly.history);
  CarbonState unseeded;
  DecideCarbonWindow(knobs, {0.05, 3600}, now, reading, &unseeded);
  EXPECT_NE(unseeded.forecast_g_per_kwh, seeded.forecast_g_per_kwh);  // one reading forecasts differently
  const std::vector<double> kept = seeded.history;
  SeedCarbonHistory(past, &seeded);
  EXPECT_EQ(seeded.history, kept);
}

// A released job pays a restart after every pause (here up to two windows
// of it): the time makes no progress, and the guard still meets the deadline
// on random grids, pausing less as restarts grow dearer.
TEST(CarbonWindow, ReleasedPausesPayTheirRestartAndTheDeadlineHolds) {
  carbon::KnobSet knobs = FourPlans();
  std::mt19937 rng(17);
  std::uniform_real_distribution<double> u(20, 900);
  std::vector<int> pauses_by_restart;
  for (double restart : {0.0, 0.25, 1.0, 2.0}) {
    int pauses = 0;
    for (int trial = 0; trial < 20; ++trial) {
      const CarbonWindowConfig config{0.5, 3600, 20, true, restart};  // 20 windows of work within 30
      CarbonState state;
      bool was_paused = false;
      for (int w = 0; w <= 30; ++w) {
        const int64_t now = kDay0 + 86400 * (trial + 1) + w * 3600;
        const int option = DecideCarbonWindow(knobs, config, now, {u(rng), false}, &state);
        if (w == 30) break;  // the decision charged the 30th window
        if (was_paused && option >= 0) {
          EXPECT_DOUBLE_EQ(state.restart_left_windows, restart) << "window " << w;
        }
        pauses += option < 0 && !was_paused;
        was_paused = option < 0;
      }
      EXPECT_GE(state.work_windows, 20 - 1e-9) << "restart " << restart << " trial " << trial;
      EXPECT_NEAR(state.elapsed_windows, 30, 1e-9);
    }
    EXPECT_GT(pauses, 0) << "restart " << restart;
    pauses_by_restart.push_back(pauses);
  }
  EXPECT_LT(pauses_by_restart.back(), pauses_by_restart.front());  // dearer restarts, fewer pauses
}

// A restart's energy is part of what a pause costs: the dearer it is, the
// fewer pauses; one dearer than anything a pause could save, none.
TEST(CarbonWindow, ARestartsEnergyCountsAgainstPausing) {
  std::vector<int> pauses_by_power;
  for (double restart_power_w : {0.0, 2000.0, 1e7}) {
    carbon::KnobSet knobs = FourPlans();  // 100 W at the fastest
    knobs.restart_power_w = restart_power_w;
    std::mt19937 rng(17);
    std::uniform_real_distribution<double> u(20, 900);
    int pauses = 0;
    for (int trial = 0; trial < 20; ++trial) {
      const CarbonWindowConfig config{0.5, 3600, 20, true, 0.25};
      CarbonState state;
      for (int w = 0; w <= 30; ++w) {
        const int64_t now = kDay0 + 86400 * (trial + 1) + w * 3600;
        const bool was_paused = state.paused;
        const bool paused = DecideCarbonWindow(knobs, config, now, {u(rng), false}, &state) < 0;
        pauses += w < 30 && paused && !was_paused && state.work_windows < 20 - 1e-9;  // not done yet
      }
      EXPECT_GE(state.work_windows, 20 - 1e-9);  // by the deadline
    }
    pauses_by_power.push_back(pauses);
  }
  EXPECT_GT(pauses_by_power[0], pauses_by_power[1]);  // 59 and 36 pauses
  EXPECT_GT(pauses_by_power[1], 0);
  EXPECT_EQ(pauses_by_power[2], 0);
}

// A restart's power counts every GPU of the pipeline, tensor-parallel ones
// too; by default each at its blocking power (Problem::blocking_power_w is
// per stage, already x its GPUs).
TEST(CarbonWindow, ARestartDrawsOnEveryGpuOfThePipeline) {
  Problem problem;
  problem.schedule.spec.stages = 4;
  problem.gpus_per_stage = 2;
  problem.blocking_power_w = 2 * 80;
  EXPECT_DOUBLE_EQ(RestartPowerW(problem, 50.0), 50.0 * 8);
  EXPECT_DOUBLE_EQ(RestartPowerW(problem, std::nullopt), 80.0 * 8);
  EXPECT_DOUBLE_EQ(RestartPowerW(problem, std::nullopt), PausePowerW(problem, /*holds_gpus=*/true));
}

// A pause lifted without a decision: the time since is paused (no work), a
// released job's resume costs its restart, a held one's nothing.
TEST(CarbonWindow, ALiftedPauseChargesNoWorkAndAReleasedOnesRestart) {
  for (double pause_power_w : {0.0, 30.0}) {
    carbon::KnobSet knobs = FourPlans();
    knobs.pause_power_w = pause_power_w;
    const CarbonWindowConfig config{0.5, 3600, 10, true, 0.25};
    CarbonState state;
    state.evaluated = true;
    state.paused = true;
    state.option = -1;
    state.option_time_s = 1.08;
    state.last_eval_unix_s = kDay0;
    state.elapsed_windows = 3;
    state.work_windows = 2;
    LiftCarbonPause(knobs, config, kDay0 + 2 * 3600, &state);
    EXPECT_FALSE(state.paused);
    EXPECT_EQ(state.option, 0);
    EXPECT_DOUBLE_EQ(state.elapsed_windows, 5);
    EXPECT_DOUBLE_EQ(state.work_windows, 2);
    EXPECT_EQ(state.last_eval_unix_s, kDay0 + 2 * 3600);
    EXPECT_DOUBLE_EQ(state.restart_left_windows, pause_power_w > 0 ? 0 : 0.25);
    // The next window runs the plan after the restart.
    DecideCarbonWindow(knobs, config, kDay0 + 3 * 3600, {300, false}, &state);
    EXPECT_NEAR(state.work_windows, 2 + (pause_power_w > 0 ? 1 : 0.75) / 1.08, 1e-12);
    const CarbonState unchanged = state;
    LiftCarbonPause(knobs, config, kDay0 + 9 * 3600, &state);  // not paused: nothing
    EXPECT_EQ(state.elapsed_windows, unchanged.elapsed_windows);
  }
}

TEST(CarbonWindow, ChargesTheTimeSinceTheLastDecisionToTheOptionThenChosen) {
  const carbon::KnobSet knobs = FourPlans();
  CarbonState state;
  DecideCarbonWindow(knobs, {0.5, 3600}, kDay0, {700, false}, &state);
  const double t = state.option_time_s;
  ASSERT_GT(t, 1.0);  // a large budget on a dirty grid buys a slower plan
  DecideCarbonWindow(knobs, {0.5, 3600}, kDay0 + 1800, {700, false}, &state);
  EXPECT_DOUBLE_EQ(state.elapsed_windows, 0.5);
  EXPECT_DOUBLE_EQ(state.work_windows, 0.5 / t);
}

TEST(CarbonWindow, KnownComingIntensitiesReplaceTheEstimate) {
  const carbon::KnobSet knobs = FourPlans();
  CarbonState guessed, known;
  // Now is dirty; the estimate (no history) says every coming hour is as
  // dirty, but the next 23 are actually clean: knowing it, the policy spends
  // more of its budget now.
  DecideCarbonWindow(knobs, {0.05, 3600}, kDay0, {700, false}, &guessed);
  std::vector<double> coming(24, 50);
  coming[0] = 700;
  DecideCarbonWindow(knobs, {0.05, 3600}, kDay0, {700, false}, &known, nullptr, coming);
  EXPECT_GE(known.option_time_s, guessed.option_time_s);
  EXPECT_LT(known.lambda_g_per_s, guessed.lambda_g_per_s);
}

// With the job's length known the budget is a deadline: the job may pause
// in dirty hours, and it finishes in time.
TEST(CarbonWindow, AKnownLengthIsADeadlineThatHoldsAndPausingIsUsed) {
  const carbon::KnobSet knobs = FourPlans();
  CarbonWindowConfig config{0.5, 3600, 48, true};
  CarbonState state;
  CarbonForecastCache cache;
  std::mt19937 rng(6);
  int paused_dirty = 0, paused_clean = 0, h = 0;
  for (; state.work_windows < 48 - 1e-9; ++h) {
    const int64_t now = kDay0 + h * 3600;
    const double ci = Diurnal(now, rng);
    const int option = DecideCarbonWindow(knobs, config, now, {ci, false}, &state, &cache);
    EXPECT_EQ(state.paused, option < 0);
    if (option < 0) ++(ci > 400 ? paused_dirty : paused_clean);
    ASSERT_LT(h, 200);
  }
  EXPECT_LE(state.elapsed_windows, 48 * 1.5 + 1e-9);
  EXPECT_GT(paused_dirty, 0);
  EXPECT_GT(paused_dirty, paused_clean);
  EXPECT_NE(state.explanation.find("of deadline slack 50.00%"), std::string::npos) << state.explanation;
}

// A reading of the hour before (no look-ahead) is recorded as that hour's,
// and the hour now is forecast.
TEST(CarbonWindow, AReadingOfTheHourBeforeIsRecordedAsThatHours) {
  const carbon::KnobSet knobs = FourPlans();
  CarbonState state;
  DecideCarbonWindow(knobs, {0.05, 3600}, kDay0 + 3600, {100, false, kDay0}, &state);
  DecideCarbonWindow(knobs, {0.05, 3600}, kDay0 + 7200, {200, false, kDay0 + 3600}, &state);
  EXPECT_EQ(state.history, (std::vector<double>{100, 200}));
  EXPECT_EQ(state.history_last_hour, kDay0 / 3600 + 1);
  EXPECT_NE(state.explanation.find("2022-01-01T02:00:00Z: last hour 200.0 gCO2/kWh, forecast "), std::string::npos)
      << state.explanation;
}

}  // namespace
}  // namespace perseus::control
