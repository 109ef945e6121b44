// The design of online profiling: which clocks every stage of a job runs in
// each measurement window.
//
// A window is a span of whole training iterations (after a warm-up) in which
// every stage runs its forward computations at one SM clock and its backward
// computations at another; the energy counter is read only at the window's
// ends, so a window must be long enough for the coarse counter. Windows are
// global: all stages of the job switch together, each to its own config.
// Clock indices refer to the stage's clock list, highest first (0 = maximum).
//
// The base design gives the estimator (stage_estimator.h) what it needs to
// separate forward from backward power and to see thermal drift:
//   - reference windows (0,0) first, every `reference_every` windows, and last
//     (drift anchors: the same config seen at different times);
//   - every other clock i once as a diagonal window (i,i) and once as a cross
//     window, (i,0) for odd i and (0,i) for even i, so forward and backward
//     power are each seen alone at every other clock and smoothness fills the
//     rest;
//   - clocks in bit-reversal (van der Corput) order, so that clock and time are
//     not confounded: a slow thermal drift cannot masquerade as a trend over
//     the clock;
//   - two blocking windows in which even stages run (0,0) while odd stages run
//     the lowest clock, and vice versa;
//   - staggered stages: stage s runs the same sequence of diagonal, cross and
//     blocking configs rotated by s/S of its length, so in every window the
//     stages run different clocks and each stage waits for the others for
//     widely varying times. Window totals identify the blocking power only
//     through that variation (a window's average power is blocking power plus
//     busy fraction x (busy power - blocking power)), and an error in it moves
//     every busy power. On the 8-stage GPT-3-like example at 3% window noise,
//     staggering brings the blocking power's error from about 16 W to 4 W and
//     the median energy error from about 3.5% to 1.5%, for about 7% more
//     profiling time (the slowest stage sets every window's pace).
// Thread safety: pure functions.
#pragma once

#include <string>
#include <vector>

namespace perseus::profiling {

// The clocks one stage runs in a window: indices into its clock list.
struct WindowConfig {
  int forward_index = 0;
  int backward_index = 0;
  bool operator==(const WindowConfig&) const = default;
};

// kStaggered: a window of a staggered design, in which stages run different
// parts of the design (per stage, the config tells diagonal from cross).
enum class WindowPurpose { kReference, kDiagonal, kCross, kBlocking, kRepeat, kStaggered };
const char* WindowPurposeName(WindowPurpose purpose);  // "reference", "diagonal", ...

// One global window: the config of every stage (index = stage).
struct WindowPlan {
  std::vector<WindowConfig> stages;
  WindowPurpose purpose = WindowPurpose::kReference;
};

struct DesignOptions {
  int reference_every = 8;       // a reference window every this many windows (>= 2; smaller values are raised to 2)
  bool blocking_windows = true;  // add the two blocking windows (needs >= 2 clocks)
  bool stagger_stages = true;    // rotate each stage's sequence (no effect with one stage)
  // false: no cross windows; every clock gets a second diagonal window
  // instead, so a stage never switches clocks inside a window. For GPUs whose
  // clock takes longer to change than a computation lasts (100 ms on an H200,
  // docs/real_gpu.md), where a cross window's clocks never take effect. The
  // estimator then splits forward from backward energy by their times at
  // equal power (stage_estimator.h).
  bool cross_windows = true;
};

// The base design for `stages` stages that each list `num_clocks` clocks.
// Returns no windows when stages < 1 or num_clocks < 1. Its length is about
// 2 * (num_clocks - 1) * R / (R - 1) + 3 for R = reference_every.
std::vector<WindowPlan> BaseDesign(int stages, int num_clocks, const DesignOptions& options = {});

// Extra diagonal windows for the clocks that still need data:
// clock_indices[s] lists stage s's clock indices (repeats allowed). Window k
// runs stage s at (c, c) for its k-th listed clock, and (0,0) once its list is
// exhausted; reference windows are added as in BaseDesign (first, every
// reference_every windows, last). Returns no windows when no stage needs any.
std::vector<WindowPlan> RepeatDesign(int stages, const std::vector<std::vector<int>>& clock_indices,
                                     const DesignOptions& options = {});

// 0..n-1 in bit-reversal order (0, n/2, n/4, 3n/4, ... for powers of two):
// every prefix is spread evenly over the range.
std::vector<int> InterleavedOrder(int n);

}  // namespace perseus::profiling
