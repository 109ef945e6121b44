// Honest evaluation of a plan on the real profile values. Deliberately
// independent of the solver: it is the referee the solver's output is checked
// against.
#include <algorithm>

#include "perseus/problem.h"

namespace perseus {

std::vector<double> EarliestStarts(const Problem& problem, const PlanChoice& choice) {
  std::vector<double> start(problem.nodes.size(), 0.0);
  for (size_t i = 0; i < problem.nodes.size(); ++i) {  // nodes are topologically ordered
    const ProblemNode& n = problem.nodes[i];
    double finish = start[i] + n.options[choice[i]].time_s;
    for (int v : n.succs) start[v] = std::max(start[v], finish);
  }
  return start;
}

PlanCost EvaluatePlan(const Problem& problem, const PlanChoice& choice) {
  std::vector<double> start = EarliestStarts(problem, choice);
  PlanCost cost;
  double busy_s = 0, energy_j = 0;
  for (size_t i = 0; i < problem.nodes.size(); ++i) {
    const FreqPoint& o = problem.nodes[i].options[choice[i]];
    cost.time_s = std::max(cost.time_s, start[i] + o.time_s);
    busy_s += o.time_s;
    energy_j += o.energy_j;
  }
  cost.energy_j = energy_j + problem.blocking_power_w * (problem.num_stages() * cost.time_s - busy_s);
  return cost;
}

}  // namespace perseus
