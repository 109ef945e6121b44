// Clock switches that take long: when a GPU shows a locked clock only after
// a delay comparable to its computations (100 ms on an H200, docs/real_gpu.md),
// a plan that changes clocks between computations runs them partly at the
// previous clock. These decide when that is worth a warning and how many
// changes per GPU per iteration a plan may then make. perseus doctor, the
// server's window-report checks and its optimisation all use them.
// Thread safety: pure functions.
#pragma once

namespace perseus::control {

// A switch slower than this is worth a warning (doctor, the server).
inline constexpr double kSlowClockSwitchS = 0.010;
// With slow switches, a plan's changes may leave at most this share of the
// all-max iteration at a previous clock: changes x latency <= share x time.
inline constexpr double kSwitchTimeShare = 0.05;

// True when a measured switch latency is slow for computations of this mean
// length: above kSlowClockSwitchS and a quarter of a computation.
bool IsSlowClockSwitch(double latency_s, double mean_computation_s);

// The clock changes per GPU per iteration plans may make: the spec's limit
// when it sets one (>= 0); else, when the latency is above
// kSlowClockSwitchS, floor(kSwitchTimeShare x all_max_time_s / latency_s),
// at least 1; else -1 (no limit).
int ClockChangeLimit(int spec_limit, double clock_switch_latency_s, double all_max_time_s);

}  // namespace perseus::control
