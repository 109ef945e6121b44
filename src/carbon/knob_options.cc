// Hulls and the knob sets.
#include "carbon/knob_options.h"

#include <algorithm>
#include <set>

namespace perseus::carbon {
namespace {

// Cross product sign of (b - a) x (c - a) in the (time, energy) plane.
double Cross(const KnobOption& a, const KnobOption& b, const KnobOption& c) {
  return (b.time_s - a.time_s) * (c.energy_j - a.energy_j) - (b.energy_j - a.energy_j) * (c.time_s - a.time_s);
}

}  // namespace

int KnobSet::NoSlowdownIndex() const {
  int best = 0;
  for (int i = 0; i < static_cast<int>(options.size()); ++i) {
    if (options[i].time_s <= reference.time_s * (1 + 1e-9)) best = i;
  }
  return best;
}

std::vector<KnobOption> ParetoFront(std::vector<KnobOption> options) {
  std::sort(options.begin(), options.end(), [](const KnobOption& a, const KnobOption& b) {
    return a.time_s != b.time_s ? a.time_s < b.time_s : a.energy_j < b.energy_j;
  });
  std::vector<KnobOption> pareto;
  for (const KnobOption& o : options) {
    if (pareto.empty() || o.energy_j < pareto.back().energy_j) pareto.push_back(o);
  }
  return pareto;
}

std::vector<KnobOption> LowerConvexHull(std::vector<KnobOption> options) {
  std::vector<KnobOption> pareto = ParetoFront(std::move(options));
  std::vector<KnobOption> hull;
  for (const KnobOption& o : pareto) {
    while (hull.size() >= 2 && Cross(hull[hull.size() - 2], hull.back(), o) <= 0) hull.pop_back();
    hull.push_back(o);
  }
  return hull;
}

KnobSet FrontierKnobs(const Frontier& frontier) {
  KnobSet set;
  set.name = "Perseus frontier";
  set.reference = {"all-max", frontier.all_max.time_s, frontier.all_max.energy_j};
  std::vector<KnobOption> all;
  for (size_t i = 0; i < frontier.plans.size(); ++i) {
    all.push_back({"frontier plan " + std::to_string(i), frontier.plans[i].time_s, frontier.plans[i].energy_j,
                   static_cast<int>(i)});
  }
  set.pareto = ParetoFront(all);
  set.options = LowerConvexHull(std::move(all));
  return set;
}

PlanChoice PlanForGlobalClock(const Problem& problem, int clock_mhz) {
  PlanChoice choice(problem.nodes.size(), 0);
  for (size_t i = 0; i < problem.nodes.size(); ++i) {
    const std::vector<FreqPoint>& opts = problem.nodes[i].options;  // highest first
    int pick = static_cast<int>(opts.size()) - 1;
    for (int k = 0; k < static_cast<int>(opts.size()); ++k) {
      if (opts[k].freq_mhz <= clock_mhz) { pick = k; break; }
    }
    choice[i] = pick;
  }
  return choice;
}

KnobSet GlobalClockKnobs(const Problem& problem) {
  KnobSet set;
  set.name = "global SM clock";
  std::set<int, std::greater<int>> clocks;
  for (const ProblemNode& n : problem.nodes)
    for (const FreqPoint& p : n.options) clocks.insert(p.freq_mhz);
  std::vector<KnobOption> all;
  for (int c : clocks) {
    PlanCost cost = EvaluatePlan(problem, PlanForGlobalClock(problem, c));
    all.push_back({std::to_string(c) + " MHz", cost.time_s, cost.energy_j});
  }
  PlanCost max = EvaluatePlan(problem, AllMaxPlan(problem));
  set.reference = {"all-max", max.time_s, max.energy_j};
  set.pareto = ParetoFront(all);
  set.options = LowerConvexHull(std::move(all));
  return set;
}

}  // namespace perseus::carbon
