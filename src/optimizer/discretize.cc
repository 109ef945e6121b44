// Rounding to measured options and slack filling.
#include "optimizer/discretize.h"

#include <algorithm>

#include "optimizer/critical_path.h"

namespace perseus::optimizer {
namespace {

std::vector<double> Durations(const std::vector<NodeCosts>& costs, const std::vector<int>& pareto_index) {
  std::vector<double> d(costs.size());
  for (size_t i = 0; i < costs.size(); ++i) d[i] = costs[i].pareto()[pareto_index[i]].time_s;
  return d;
}

// One pass in topological order: each computation starts when its
// predecessors (as already changed in this pass) finish and takes the
// cheapest option that still finishes by its latest finish time.
void ForwardFill(const Problem& problem, const std::vector<NodeCosts>& costs, double deadline_s,
                 std::vector<int>& idx) {
  std::vector<double> d = Durations(costs, idx), latest_finish, start(problem.nodes.size(), 0.0);
  BackwardPass(problem, d, deadline_s, latest_finish);
  for (int i = 0; i < problem.num_nodes(); ++i) {
    idx[i] = costs[i].CheapestWithinFrom(latest_finish[i] - start[i], idx[i]);
    double finish = start[i] + costs[i].pareto()[idx[i]].time_s;
    for (int v : problem.nodes[i].succs) start[v] = std::max(start[v], finish);
  }
}

// The mirror image: in reverse topological order, each computation finishes
// when its successors must start and starts no earlier than its earliest start.
void BackwardFill(const Problem& problem, const std::vector<NodeCosts>& costs, double deadline_s,
                  std::vector<int>& idx) {
  std::vector<double> d = Durations(costs, idx), earliest_start;
  ForwardPass(problem, d, earliest_start);
  std::vector<double> finish(problem.nodes.size(), deadline_s);
  for (int i = problem.num_nodes() - 1; i >= 0; --i) {
    idx[i] = costs[i].CheapestWithinFrom(finish[i] - earliest_start[i], idx[i]);
    double start = finish[i] - costs[i].pareto()[idx[i]].time_s;
    for (int u : problem.nodes[i].preds) finish[u] = std::min(finish[u], start);
  }
}

}  // namespace

void FillSlack(const Problem& problem, const std::vector<NodeCosts>& costs, double deadline_s,
               std::vector<int>& pareto_index) {
  std::vector<double> es;
  double t = ForwardPass(problem, Durations(costs, pareto_index), es);
  double deadline = std::max(deadline_s, t);
  BackwardFill(problem, costs, deadline, pareto_index);
  ForwardFill(problem, costs, deadline, pareto_index);
}

PlanChoice Discretize(const Problem& problem, const std::vector<NodeCosts>& costs,
                      const std::vector<double>& duration_s, double deadline_s) {
  std::vector<int> idx(problem.nodes.size());
  for (int i = 0; i < problem.num_nodes(); ++i) idx[i] = std::max(0, costs[i].CheapestWithin(duration_s[i]));
  FillSlack(problem, costs, deadline_s, idx);
  PlanChoice choice(idx.size());
  for (size_t i = 0; i < idx.size(); ++i) choice[i] = costs[i].pareto()[idx[i]].option;
  return choice;
}

}  // namespace perseus::optimizer
