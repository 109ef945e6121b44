// The online profiling sweep's decisions (docs/http_api.md, "Online
// profiling"): which clocks each stage profiles, the windows that measure
// them, when a window ends, and whether a round of repeat windows follows or
// profiling is done. The server holds the state and the reports and fits the
// estimates (src/profiling); these functions decide. Pure: time is passed in.
// Thread safety: none needed (values and pure functions).
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace perseus::control {

struct ProfilingOptions {
  int warmup_iterations = 1;     // run, not measured, after each window change
  int window_iterations = 2;     // measured iterations per window ("iterations_per_clock" is accepted too)
  int clock_stride = 0;          // profile every n-th supported clock (the lowest is always included);
                                 // 0: the smallest stride that keeps at most max_clocks clocks
  int max_clocks = 20;           // with clock_stride 0
  int min_clock_mhz = 0;         // do not profile below this clock (0: the lowest supported)
  int reference_every = 6;       // a window at the highest clocks every n windows (thermal drift anchor)
  double target_relative_error = 0.005;  // per-clock standard error of forward+backward energy
  int max_repeat_rounds = 2;     // rounds of repeat windows for clocks above the target
  double time_budget_s = 1500;   // repeat windows stop when profiling would run past this much job time (0: no limit)
  double thermal_time_constant_s = 0;  // the estimator's thermal drift time constant (0: chosen from the data)
  // Every window runs each stage's forwards and backwards at one clock (no
  // cross windows, profiling::DesignOptions::cross_windows; forward and
  // backward energy split by time at equal power,
  // profiling::EstimatorOptions::equal_power_split). The default: a clock
  // switch takes 100 ms on an H200, longer than a computation, so cross
  // windows' clocks never take effect there; and on profiling_bench it is at
  // least as accurate at 5 ms too (docs/design.md). false: cross windows.
  bool single_clock_windows = true;
};

// A sequence of windows, each giving every stage a forward and a backward
// clock (indices into the stage's clocks_mhz). All ranks run the current
// window; when every rank reported it, the next one starts. When the list is
// exhausted the estimator fits the profile and either repeat windows are
// appended for clocks still too uncertain or profiling ends.
struct ProfilingWindowPlan {
  std::vector<std::pair<int, int>> stages;  // [stage] -> (forward, backward) clock index
  std::string purpose;                      // "reference", "diagonal", "cross", "blocking", "repeat"
  double opened_s = 0, closed_s = 0;        // server time, seconds since profiling started
};

struct ProfilingState {
  std::vector<std::vector<int>> clocks_mhz;  // [stage] clocks profiled, descending
  std::vector<ProfilingWindowPlan> windows;
  int current = 0;       // windows[current] runs now
  int rounds = 0;        // rounds of repeat windows added
  int64_t version = 0;   // plan version of the current window
  double started_unix_s = 0;  // when profiling started (window times count from here)
  bool active() const { return current < static_cast<int>(windows.size()); }
};

// The clocks a stage profiles: those every rank of the stage supports
// (`rank_clocks_mhz`, one list per rank), at or above min_clock_mhz, every
// clock_stride-th from the top (clock_stride 0: the smallest stride that
// keeps at most max_clocks), plus the lowest. Empty when the ranks share no clock.
std::vector<int> SweepClocks(const std::vector<std::vector<int>>& rank_clocks_mhz, const ProfilingOptions& options);

// Per-stage clock lists cut to a common length (windows index every stage's
// list alike): a longer list keeps its first and last clock and evenly spaced
// ones between.
std::vector<std::vector<int>> CommonLengthClocks(std::vector<std::vector<int>> clocks_per_stage);

// The sweep's first round over `clocks_per_stage` (each non-empty): the base
// design of windows (profiling/window_design.h). started_unix_s and version
// are the caller's.
ProfilingState StartSweep(std::vector<std::vector<int>> clocks_per_stage, const ProfilingOptions& options);

// Closes the current window at `now_s` (seconds since profiling started) and
// moves to the next; true when the round's windows are exhausted (fit now).
bool CloseWindow(ProfilingState* state, double now_s);
// Opens the current window at `now_s`. REQUIRES: state->active().
void OpenWindow(ProfilingState* state, double now_s);

// After a round's fit: appends a round of repeat windows for the clock
// indices per stage still above the target (`repeat`), while rounds remain
// and within the time budget (each window costing what the finished ones
// did on average, `spent_s` over `state->current` windows). Returns how many
// were appended; 0 means profiling is done.
int AddRepeatRound(ProfilingState* state, const std::vector<std::vector<int>>& repeat, const ProfilingOptions& options,
                   double spent_s);

}  // namespace perseus::control
