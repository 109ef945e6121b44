// The carbon-aware choice (docs/carbon.md, "The window decision"): in each
// window run the option maximising
//     mu_g_per_s * rate - carbon_g_per_kwh * power_w / 3.6e6       (g/s)
// where rate is the option's progress (reference time / option time, i.e.
// seconds of reference work per second) and power its average power.
// mu_g_per_s prices progress in grams of CO2 per second of reference work.
//
// This is the Lagrangian rule of the linear program "choose, per window, the
// share of time at each option (or paused) to finish the work at least
// carbon": with one work constraint and one time constraint per window, a
// single multiplier mu decides every window, only the lower convex hull of
// power against rate can win, and at most the windows whose intensity sits
// exactly at a hull breakpoint mix two adjacent points. PlanWork solves that
// LP exactly by the greedy this structure allows (the cheapest unit of work
// first); emulator/carbon_optimum_test.cc checks it against GLPK's simplex.
// Thread safety: pure functions.
#pragma once

#include <vector>

#include "carbon/knob_options.h"

namespace perseus::control {

using carbon::KnobOption;
using carbon::KnobSet;

inline constexpr double kJoulesPerKwh = 3.6e6;

// A point of the rate–power hull: an option, or a pause, run for a whole window.
struct RatePower {
  int option = -1;     // index into knobs.options; -1: paused (no progress; power knobs.pause_power_w)
  double rate = 0;     // reference time / option time
  double power_w = 0;  // option energy / option time
};

// Every option as a point (rate, power), in knobs.options order.
std::vector<RatePower> RatePowerPoints(const KnobSet& knobs);

// The points that maximise mu * rate - c * power for some mu >= 0 and c > 0:
// the lower convex hull of power against rate, from the least power (the
// pause when allowed, at (0, knobs.pause_power_w), else the slowest option)
// to the fastest option, rate ascending. A pause that draws more than the
// slowest option is not on it. REQUIRES: !knobs.options.empty().
std::vector<RatePower> RatePowerHull(const KnobSet& knobs, bool allow_pause = false);

// Per step k of the hull (hull.size() - 1 of them), the carbon per unit of
// work, per gCO2/kWh of intensity, of moving a window from hull[k] to
// hull[k + 1]: a window at intensity c pays c * StepSlopes(hull)[k] grams
// per second of reference work. They rise with k.
std::vector<double> StepSlopes(const std::vector<RatePower>& hull);

// Index into `hull` of the maximiser of mu * rate - c * power (ties: the faster).
int ChooseOnHull(const std::vector<RatePower>& hull, double carbon_g_per_kwh, double mu_g_per_s);

// One window of a plan: `fast_share` of its time at hull[fast], the rest at
// hull[slow] (slow == fast when it runs one point).
struct WindowMix {
  int slow = 0;
  int fast = 0;
  double fast_share = 0;
  double Rate(const std::vector<RatePower>& hull) const;
  double PowerW(const std::vector<RatePower>& hull) const;
};

struct WorkPlan {
  double mu_g_per_s = 0;  // the price of the last unit of work planned (0: the least power suffices)
  bool feasible = true;   // false: even the fastest option everywhere falls short
  double work = 0;        // planned work, in windows of reference work
  std::vector<WindowMix> windows;
};

// The least-carbon plan over windows with intensities carbon_g_per_kwh[w],
// of which share[w] (0..1) of window w's time is available (a partial last
// window), that makes up `work` windows of reference work. Exact for the LP
// above: every window starts at hull[0]; units of work are then bought in
// increasing order of their carbon per unit, c[w] * (p[k+1] - p[k]) / (r[k+1] - r[k]),
// the last one in part. Ties go to the earlier window (faster now, spend later).
// The plan covers share's windows (carbon_g_per_kwh may go on past them).
// REQUIRES: !hull.empty(); share.size() <= carbon_g_per_kwh.size().
WorkPlan PlanWork(const std::vector<RatePower>& hull, const std::vector<double>& carbon_g_per_kwh,
                  const std::vector<double>& share, double work);

// The first `windows` windows of `share` (the last one in part; at least one window).
std::vector<double> TruncatedShare(const std::vector<double>& share, double windows);
// `share` less its last `windows` windows of time (at least a sliver of the first).
std::vector<double> ShortenedShare(const std::vector<double>& share, double windows);

// PlanWork for a job whose every resume costs a restart: `restart_windows`
// of time without progress drawing `restart_power_w`. A plan made with k
// restarts' less time (ShortenedShare; `lost_windows` less again for a
// restart already under way) is consistent when it makes at most k resumes:
// a window it runs (at the nearer of the two points it mixes, as the
// decision runs it) after one it pauses, or first from a job paused now
// (`paused_now`). From k = 0, each round plans again for the number of
// resumes the last plan made, more or fewer, at most kRestartRounds times
// and never the same k twice; the cheapest consistent plan (feasible
// first, then carbon with the restarts') is returned. Should no round be
// consistent, the last plan is, with `converged` false (the caller's guard
// must then keep the deadline).
struct RestartingPlan {
  WorkPlan plan;
  std::vector<double> share;    // the windows it covers (shortened)
  int planned_restarts = 0;     // the restarts `share` leaves time for
  int resumes = 0;              // the resumes it makes
  double restart_carbon_g = 0;  // their energy's carbon (PlanCarbonG's units at window_s 1)
  bool converged = true;        // resumes <= planned_restarts
};
inline constexpr int kRestartRounds = 4;
RestartingPlan PlanWorkWithRestarts(const std::vector<RatePower>& hull, const std::vector<double>& carbon_g_per_kwh,
                                    const std::vector<double>& share, double work, double restart_windows,
                                    double restart_power_w, bool paused_now, double lost_windows = 0);

// The hull point a window of a plan runs: the nearer of the two it mixes.
const RatePower& RunPoint(const std::vector<RatePower>& hull, const WindowMix& window);

// Carbon of a plan over windows of `window_s` seconds, in grams.
double PlanCarbonG(const std::vector<RatePower>& hull, const WorkPlan& plan, const std::vector<double>& carbon_g_per_kwh,
                   const std::vector<double>& share, double window_s);

}  // namespace perseus::control
