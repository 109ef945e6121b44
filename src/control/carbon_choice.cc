// The rate–power hull, the per-window choice and the exact greedy plan.
#include "control/carbon_choice.h"

#include <algorithm>
#include <cmath>
#include <optional>
#include <tuple>

namespace perseus::control {
namespace {

// Cross product sign of (b - a) x (c - a) in the (rate, power) plane.
double Cross(const RatePower& a, const RatePower& b, const RatePower& c) {
  return (b.rate - a.rate) * (c.power_w - a.power_w) - (b.power_w - a.power_w) * (c.rate - a.rate);
}

// Points no other point beats on both rate and power, rate ascending.
std::vector<RatePower> Undominated(std::vector<RatePower> points) {
  std::sort(points.begin(), points.end(), [](const RatePower& a, const RatePower& b) {
    return a.rate != b.rate ? a.rate > b.rate : a.power_w < b.power_w;
  });
  std::vector<RatePower> kept;  // rate descending, power strictly descending
  for (const RatePower& p : points) {
    if (kept.empty() || p.power_w < kept.back().power_w) kept.push_back(p);
  }
  std::reverse(kept.begin(), kept.end());
  return kept;
}

}  // namespace

std::vector<double> StepSlopes(const std::vector<RatePower>& hull) {
  std::vector<double> slope;
  for (size_t k = 0; k + 1 < hull.size(); ++k) {
    slope.push_back((hull[k + 1].power_w - hull[k].power_w) / kJoulesPerKwh / (hull[k + 1].rate - hull[k].rate));
  }
  return slope;
}

std::vector<RatePower> RatePowerPoints(const KnobSet& knobs) {
  std::vector<RatePower> points;
  for (int i = 0; i < static_cast<int>(knobs.options.size()); ++i) {
    const KnobOption& o = knobs.options[i];
    points.push_back({i, knobs.reference.time_s / o.time_s, o.energy_j / o.time_s});
  }
  return points;
}

std::vector<RatePower> RatePowerHull(const KnobSet& knobs, bool allow_pause) {
  std::vector<RatePower> points = RatePowerPoints(knobs);
  if (allow_pause) points.push_back({-1, 0, knobs.pause_power_w});
  std::vector<RatePower> hull;
  for (const RatePower& p : Undominated(std::move(points))) {
    while (hull.size() >= 2 && Cross(hull[hull.size() - 2], hull.back(), p) <= 0) hull.pop_back();
    hull.push_back(p);
  }
  return hull;
}

int ChooseOnHull(const std::vector<RatePower>& hull, double carbon_g_per_kwh, double mu_g_per_s) {
  int best = 0;
  double best_value = 0;
  for (int k = 0; k < static_cast<int>(hull.size()); ++k) {
    const double value = mu_g_per_s * hull[k].rate - carbon_g_per_kwh * hull[k].power_w / kJoulesPerKwh;
    if (k == 0 || value >= best_value) {
      best = k;
      best_value = value;
    }
  }
  return best;
}

double WindowMix::Rate(const std::vector<RatePower>& hull) const {
  return (1 - fast_share) * hull[slow].rate + fast_share * hull[fast].rate;
}

double WindowMix::PowerW(const std::vector<RatePower>& hull) const {
  return (1 - fast_share) * hull[slow].power_w + fast_share * hull[fast].power_w;
}

namespace {

// The steps of every window at one price x: kept[w] of them (steps 0 ..
// kept[w] - 1, the cheaper ones) cost at most x, the rest more. Searched
// within [low[w], high[w]], where the answer lies.
struct StepCut {
  std::vector<int> kept;
  double given_back = 0;  // the work of the steps that cost more than x
};
StepCut CutAt(const std::vector<RatePower>& hull, const std::vector<double>& slope, const std::vector<double>& ci,
              const std::vector<double>& share, const std::vector<int>& low, const std::vector<int>& high, double x) {
  const int last = static_cast<int>(hull.size()) - 1;
  StepCut cut;
  cut.kept.resize(share.size());
  for (size_t w = 0; w < share.size(); ++w) {
    int lo = low[w], hi = high[w];  // steps lo .. hi - 1 undecided
    while (lo < hi) {
      const int mid = (lo + hi) / 2;
      if (ci[w] * slope[mid] <= x) lo = mid + 1; else hi = mid;
    }
    cut.kept[w] = lo;
    if (share[w] > 0) cut.given_back += share[w] * (hull[last].rate - hull[lo].rate);
  }
  return cut;
}

// How many steps the heap may be left to give back one by one.
constexpr int kHeapSteps = 32;

}  // namespace

// The greedy above, run from its end: every window that runs starts at the
// fastest point and the most expensive units are given back, in exactly the
// reverse order of the buying (cost, then window, then step), while the work
// still suffices; the unit that does not fit is given back in part.
//
// A window's steps cost c[w] * slope[k], rising with k, so at any price x
// the steps dearer than x are a suffix of each window's, found by binary
// search. Bisecting the price first narrows it to a range that holds at most
// kHeapSteps steps, or where the bisection stops: every step dearer than
// the range is given back at once (their work is less than the surplus,
// so the greedy gives them all back before any other), and a heap of every
// window's dearest step left gives back the rest one by one, in order.
WorkPlan PlanWork(const std::vector<RatePower>& hull, const std::vector<double>& ci, const std::vector<double>& share,
                  double work) {
  const int n = static_cast<int>(share.size()), last = static_cast<int>(hull.size()) - 1;
  WorkPlan plan;
  plan.windows.assign(n, WindowMix{});
  for (int w = 0; w < n; ++w) plan.work += share[w] * hull[0].rate;
  if (plan.work >= work || last == 0) {  // the least power suffices, or is all there is
    plan.feasible = plan.work >= work * (1 - 1e-12);
    return plan;
  }
  const std::vector<double> slope = StepSlopes(hull);
  double dearest = 0;
  for (int w = 0; w < n; ++w) {
    if (share[w] <= 0) continue;
    plan.work += share[w] * (hull[last].rate - hull[0].rate);
    plan.windows[w] = WindowMix{last, last, 0};
    dearest = std::max(dearest, ci[w] * slope[last - 1]);
  }
  plan.feasible = plan.work >= work * (1 - 1e-12);
  double surplus = plan.work - work;  // work that can be given back
  if (surplus < 0) {  // short even at the fastest everywhere: mu is the dearest step's
    plan.mu_g_per_s = dearest;
    return plan;
  }
  // Bisect the price: at `high` the work given back is at most the surplus, at `low` more.
  std::vector<int> low(n, 0), high(n, last);
  double low_x = 0, high_x = dearest;
  for (int round = 0; round < 64; ++round) {
    int undecided = 0;
    for (int w = 0; w < n; ++w) undecided += share[w] > 0 ? high[w] - low[w] : 0;
    if (undecided <= kHeapSteps) break;
    const double x = low_x > 0 && high_x > 4 * low_x ? std::sqrt(low_x * high_x) : (low_x + high_x) / 2;
    if (!(x > low_x && x < high_x)) break;
    StepCut cut = CutAt(hull, slope, ci, share, low, high, x);
    if (cut.given_back <= surplus) {
      high = std::move(cut.kept);
      high_x = x;
    } else {
      low = std::move(cut.kept);
      low_x = x;
    }
  }
  // (cost, window, from): the dearest step each window has not given back.
  using Step = std::tuple<double, int, int>;
  std::vector<Step> heap;
  for (int w = 0; w < n; ++w) {
    if (share[w] <= 0) continue;
    const int kept = high[w];
    if (kept < last) {
      const double gain = share[w] * (hull[last].rate - hull[kept].rate);
      surplus -= gain;
      plan.work -= gain;
      plan.windows[w] = WindowMix{kept, kept, 0};
    }
    if (kept > 0) heap.emplace_back(ci[w] * slope[kept - 1], w, kept - 1);
  }
  surplus = std::max(surplus, 0.0);
  std::make_heap(heap.begin(), heap.end());
  while (!heap.empty()) {
    std::pop_heap(heap.begin(), heap.end());
    const auto [cost, w, k] = heap.back();
    heap.pop_back();
    const double gain = share[w] * (hull[k + 1].rate - hull[k].rate);
    if (gain > surplus) {  // the last unit bought: kept, in part
      const double part = 1 - surplus / gain;
      plan.mu_g_per_s = cost;
      plan.windows[w] = part < 1 ? WindowMix{k, k + 1, part} : WindowMix{k + 1, k + 1, 0};
      plan.work -= surplus;
      return plan;
    }
    surplus -= gain;
    plan.work -= gain;
    plan.windows[w] = WindowMix{k, k, 0};
    if (k > 0) {
      heap.emplace_back(ci[w] * slope[k - 1], w, k - 1);
      std::push_heap(heap.begin(), heap.end());
    }
  }
  return plan;  // everything given back (only by rounding: the least power fell short)
}

double PlanCarbonG(const std::vector<RatePower>& hull, const WorkPlan& plan, const std::vector<double>& ci,
                   const std::vector<double>& share, double window_s) {
  double carbon = 0;
  for (size_t w = 0; w < plan.windows.size(); ++w) {
    carbon += ci[w] * share[w] * window_s * plan.windows[w].PowerW(hull) / kJoulesPerKwh;
  }
  return carbon;
}

std::vector<double> TruncatedShare(const std::vector<double>& share, double windows) {
  std::vector<double> t;
  for (size_t k = 0; k < share.size() && static_cast<double>(k) < windows; ++k) {
    t.push_back(std::min(share[k], windows - static_cast<double>(k)));
  }
  if (t.empty() && !share.empty()) t.push_back(share.front());
  return t;
}

std::vector<double> ShortenedShare(const std::vector<double>& share, double windows) {
  double total = 0;
  for (double s : share) total += s;
  return TruncatedShare(share, std::max(total - windows, 1e-9));
}

const RatePower& RunPoint(const std::vector<RatePower>& hull, const WindowMix& window) {
  return hull[window.fast_share >= 0.5 ? window.fast : window.slow];
}

namespace {

// PlanWorkWithRestarts' plan for `planned` restarts.
RestartingPlan PlanForRestarts(const std::vector<RatePower>& hull, const std::vector<double>& ci,
                               const std::vector<double>& share, double work, double restart_windows,
                               double restart_power_w, bool paused_now, double lost_windows, int planned) {
  RestartingPlan p;
  p.planned_restarts = planned;
  const double lost = planned * restart_windows + lost_windows;
  p.share = lost > 0 ? ShortenedShare(share, lost) : share;
  p.plan = PlanWork(hull, ci, p.share, work);
  bool paused = paused_now;
  for (size_t w = 0; w < p.plan.windows.size(); ++w) {
    const bool pauses = RunPoint(hull, p.plan.windows[w]).option < 0;
    if (paused && !pauses) {
      ++p.resumes;
      p.restart_carbon_g += ci[w] * restart_windows * restart_power_w / kJoulesPerKwh;
    }
    paused = pauses;
  }
  p.converged = p.resumes <= planned;
  return p;
}

}  // namespace

RestartingPlan PlanWorkWithRestarts(const std::vector<RatePower>& hull, const std::vector<double>& ci,
                                    const std::vector<double>& share, double work, double restart_windows,
                                    double restart_power_w, bool paused_now, double lost_windows) {
  auto plan = [&](int planned) {
    return PlanForRestarts(hull, ci, share, work, restart_windows, restart_power_w, paused_now, lost_windows, planned);
  };
  if (restart_windows <= 0) {
    RestartingPlan p = plan(0);
    p.converged = true;  // resumes cost nothing
    return p;
  }
  auto carbon = [&](const RestartingPlan& p) { return PlanCarbonG(hull, p.plan, ci, p.share, 1) + p.restart_carbon_g; };
  std::optional<RestartingPlan> best;
  RestartingPlan last;
  std::vector<int> tried;
  for (int round = 0, planned = 0; round < kRestartRounds; ++round) {
    if (std::find(tried.begin(), tried.end(), planned) != tried.end()) break;
    tried.push_back(planned);
    last = plan(planned);
    if (last.converged &&
        (!best || (last.plan.feasible && !best->plan.feasible) ||
         (last.plan.feasible == best->plan.feasible && carbon(last) < carbon(*best)))) {
      best = last;
    }
    if (last.resumes == planned) break;
    planned = last.resumes;
  }
  return best ? *best : last;
}

}  // namespace perseus::control
