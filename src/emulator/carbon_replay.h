// Replays a grid carbon-intensity trace against a training job: the job needs
// `work_h` hours at the reference setting (all-max clocks or the maximum power
// limit) and starts at window `start_window`; each hour window a policy picks
// an option, the job does reference_time/option_time hours of work in it, and
// its energy is charged at that window's actual intensity. The job ends when
// its work is done (the last window is partial).
//
// Policies: kFixed runs one option throughout, or a fixed mix of two in every
// window (AllMax is the reference, "Perseus alone" the no-slowdown plan);
// kCarbonAware makes, at the start of every hour, the decision `perseus
// serve` makes for a job with a carbon config (control/carbon_window.h),
// starting from the history a server's first decision seeds from its trace
// source (the preceding three weeks, control::kSeededHistoryHours). No look-ahead: the reading at the start of an hour is the
// previous hour's value (an hour's average is known when it is over), unless
// `live_reading` (the value of the hour itself, what the server's trace
// source reads; at the trace's first hour, with nothing before it, its own
// value marked stale). The budget is the average slowdown vs the reference;
// the decision's guard keeps it at every window boundary (told the job's
// length: by the deadline it makes of the budget).
// Windows past the trace's end use its last value.
// Thread safety: pure function (the log callback is called on this thread).
#pragma once

#include <string>
#include <vector>

#include "carbon/intensity_source.h"
#include "carbon/intensity_trace.h"
#include "carbon/knob_options.h"

namespace perseus::carbon {

enum class ReplayPolicy { kFixed, kCarbonAware };

struct ReplayConfig {
  ReplayPolicy policy = ReplayPolicy::kCarbonAware;
  int fixed_option = -1;          // kFixed: index into options; -1: the reference setting
  int mix_option = 0;             // kFixed with mix_share > 0: index into options run
  double mix_share = 0;           //   for this share of every window (fixed_option the rest)
  double slowdown_budget = 0.05;  // kCarbonAware: allowed average slowdown vs the reference
  double work_h = 168;            // job length at the reference setting
  // kCarbonAware: plan with the actual intensities of the coming day instead
  // of their estimates (the same heuristic given the future; not a bound).
  bool perfect_forecast = false;
  // kCarbonAware: read each hour's own value at its start (look-ahead; the
  // server's trace source does this) instead of the previous hour's.
  bool live_reading = false;
  // kCarbonAware: tell the decision the job's length (work_h): the budget
  // becomes a deadline, work_h * (1 + slowdown_budget) hours after the
  // start, and the decision plans the rest of the job instead of a rolling
  // day (control::CarbonWindowConfig::job_work_windows; the server is not told).
  bool told_job_length = false;
  // kCarbonAware with the length told: the job may pause (implies told_job_length).
  bool may_pause = false;
  // kCarbonAware with may_pause, the GPUs released (knobs.pause_power_w 0):
  // hours a resume costs before work goes on (stop, restart, restore;
  // control::CarbonWindowConfig::restart_windows). Charged as time without
  // progress, drawing knobs.restart_power_w.
  double restart_h = 0;
  // kCarbonAware: the decision reads (and its history is) the trace this
  // many hours off, a wrong picture of the grid (what wrong forecasts do);
  // carbon is still charged at the actual intensity.
  int reading_shift_h = 0;
};

struct WindowDecision {
  int window = 0;                   // trace window index
  double forecast_g_per_kwh = 0;   // of the next window, at this decision
  double actual_g_per_kwh = 0;
  double lambda_g_per_s = 0;
  int option = -1;                  // -1: the reference setting (or paused)
  bool paused = false;              // may_pause: no work; energy knobs.pause_power_w x the window
  int mix_option = 0;               // run for mix_share of the window (a fixed mix)
  double mix_share = 0;
  double work_h = 0;                // reference hours of work done
  double busy_h = 0;                // hours of the window the job ran (paused: 0)
  double restart_h = 0;             // hours of the window a resume's restart took, before the work (energy included)
  double energy_j = 0;
  double carbon_g = 0;
};

struct ReplayResult {
  double time_h = 0;        // wall time to finish (paused hours count)
  double energy_j = 0;
  double carbon_g = 0;
  std::vector<WindowDecision> windows;
};

// REQUIRES: knobs.options non-empty; 0 <= start_window < trace.size().
// `log` (may be empty) gets one line per decision explaining it.
ReplayResult ReplayJob(const IntensityTrace& trace, int start_window, const KnobSet& knobs, const ReplayConfig& config,
                       const LogFn& log);

}  // namespace perseus::carbon
