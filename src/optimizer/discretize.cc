// Rounding to measured options and slack filling.
#include "optimizer/discretize.h"

#include <algorithm>

#include "optimizer/critical_path.h"

namespace perseus::optimizer {

Discretizer::Discretizer(const Problem& problem, const std::vector<NodeCosts>& costs)
    : problem_(problem),
      costs_(costs),
      rounded_(problem.nodes.size(), 0),
      index_(problem.nodes.size(), 0),
      duration_s_(problem.nodes.size()) {}

void Discretizer::Choose(int i, double available_s) {
  index_[i] = std::max(0, costs_[i].CheapestWithinNear(available_s, index_[i]));
  duration_s_[i] = costs_[i].pareto()[index_[i]].time_s;
}

void Discretizer::BackwardFill(double deadline_s) {
  // earliest_start_ holds the starts before this pass; bound_s_ becomes each
  // computation's latest finish as the pass has already changed its successors.
  bound_s_.assign(problem_.nodes.size(), deadline_s);
  for (int i = problem_.num_nodes() - 1; i >= 0; --i) {
    Choose(i, bound_s_[i] - earliest_start_[i]);
    const double start = bound_s_[i] - duration_s_[i];
    for (int u : problem_.nodes[i].preds) bound_s_[u] = std::min(bound_s_[u], start);
  }
}

void Discretizer::ForwardFill(double deadline_s) {
  BackwardPass(problem_, duration_s_, deadline_s, latest_finish_);
  bound_s_.assign(problem_.nodes.size(), 0.0);  // earliest start after this pass's changes
  for (int i = 0; i < problem_.num_nodes(); ++i) {
    Choose(i, latest_finish_[i] - bound_s_[i]);
    const double finish = bound_s_[i] + duration_s_[i];
    for (int v : problem_.nodes[i].succs) bound_s_[v] = std::max(bound_s_[v], finish);
  }
}

PlanChoice Discretizer::Run(const std::vector<double>& duration_s, double deadline_s) {
  for (int i = 0; i < problem_.num_nodes(); ++i) {
    rounded_[i] = std::max(0, costs_[i].CheapestWithinNear(duration_s[i], rounded_[i]));
    index_[i] = rounded_[i];
    duration_s_[i] = costs_[i].pareto()[index_[i]].time_s;
  }
  const double deadline = std::max(deadline_s, ForwardPass(problem_, duration_s_, earliest_start_));
  BackwardFill(deadline);
  ForwardFill(deadline);
  PlanChoice choice(index_.size());
  for (size_t i = 0; i < index_.size(); ++i) choice[i] = costs_[i].pareto()[index_[i]].option;
  return choice;
}

}  // namespace perseus::optimizer
