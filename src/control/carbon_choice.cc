// Per-window choice and the lambda bisection.
#include "control/carbon_choice.h"

#include <algorithm>

namespace perseus::control {
namespace {

double PlannedWork(const KnobSet& knobs, const std::vector<double>& ci, double lambda, double last_fraction) {
  double work = 0;
  for (size_t w = 0; w < ci.size(); ++w) {
    const double share = w + 1 == ci.size() ? last_fraction : 1.0;
    work += share * WorkPerWindowH(knobs, ChooseOption(knobs, ci[w], lambda));
  }
  return work;
}

}  // namespace

int ChooseOption(const KnobSet& knobs, double carbon_g_per_kwh, double lambda_g_per_s) {
  int best = 0;
  double best_cost = 0;
  for (int i = 0; i < static_cast<int>(knobs.options.size()); ++i) {
    const KnobOption& o = knobs.options[i];
    const double cost = carbon_g_per_kwh * o.energy_j / kJoulesPerKwh + lambda_g_per_s * o.time_s;
    if (i == 0 || cost < best_cost) {
      best = i;
      best_cost = cost;
    }
  }
  return best;
}

double WorkPerWindowH(const KnobSet& knobs, int i) { return knobs.reference.time_s / knobs.options[i].time_s; }

LambdaChoice LambdaForWork(const KnobSet& knobs, const std::vector<double>& ci, double work_h, double last_fraction) {
  // Above lambda_hi the fastest option wins at every intensity in `ci`.
  double max_ci = 0;
  for (double c : ci) max_ci = std::max(max_ci, c);
  double lambda_hi = 0;
  const KnobOption& fast = knobs.options.front();
  for (const KnobOption& o : knobs.options) {
    if (o.time_s > fast.time_s) {
      lambda_hi = std::max(lambda_hi, max_ci * (fast.energy_j - o.energy_j) / kJoulesPerKwh / (o.time_s - fast.time_s));
    }
  }
  lambda_hi = lambda_hi * 1.01 + 1e-12;
  LambdaChoice out;
  if (PlannedWork(knobs, ci, 0, last_fraction) >= work_h) {
    out.planned_work_h = PlannedWork(knobs, ci, 0, last_fraction);
    return out;
  }
  if (PlannedWork(knobs, ci, lambda_hi, last_fraction) < work_h) {
    out.lambda_g_per_s = lambda_hi;
    out.feasible = false;
    out.planned_work_h = PlannedWork(knobs, ci, lambda_hi, last_fraction);
    return out;
  }
  double lo = 0, hi = lambda_hi;
  for (int it = 0; it < 50; ++it) {
    const double mid = 0.5 * (lo + hi);
    if (PlannedWork(knobs, ci, mid, last_fraction) >= work_h) hi = mid;
    else lo = mid;
  }
  out.lambda_g_per_s = hi;
  out.planned_work_h = PlannedWork(knobs, ci, hi, last_fraction);
  return out;
}

}  // namespace perseus::control
