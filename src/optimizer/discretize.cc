// Rounding to measured options and slack filling.
#include "optimizer/discretize.h"

#include <algorithm>
#include <functional>

#include "optimizer/critical_path.h"

namespace perseus::optimizer {

Discretizer::Discretizer(const Problem& problem, const std::vector<NodeCosts>& costs)
    : problem_(problem),
      costs_(costs),
      rounded_(problem.nodes.size(), 0),
      index_(problem.nodes.size(), 0),
      duration_s_(problem.nodes.size()),
      queued_(problem.nodes.size(), 0) {}

Discretizer::Move Discretizer::BestMove(int i) const {
  const std::vector<CostPoint>& pareto = costs_[i].pareto();
  const int k = index_[i];
  const double limit = (latest_finish_[i] - earliest_start_[i]) * (1 + kTimeEps);
  Move best{0, i, -1};
  for (int j = k + 1; j < static_cast<int>(pareto.size()) && pareto[j].time_s <= limit; ++j) {
    const double rate = (pareto[k].cost_j - pareto[j].cost_j) / std::max(pareto[j].time_s - pareto[k].time_s, 1e-300);
    if (rate > best.rate_j_per_s) best = {rate, i, j};
  }
  return best;
}

void Discretizer::Lengthen(int i, int index) {
  index_[i] = index;
  duration_s_[i] = costs_[i].pareto()[index].time_s;
  // Later computations may start later; earlier ones must finish sooner.
  // Node ids are a topological order: visiting by id settles each once.
  queued_[i] = 1;
  queue_.assign(1, i);
  while (!queue_.empty()) {
    std::pop_heap(queue_.begin(), queue_.end(), std::greater<int>());
    const int u = queue_.back();
    queue_.pop_back();
    queued_[u] = 0;
    const double finish = earliest_start_[u] + duration_s_[u];
    for (int v : problem_.nodes[u].succs) {
      if (finish > earliest_start_[v]) {
        earliest_start_[v] = finish;
        if (!queued_[v]) {
          queued_[v] = 1;
          queue_.push_back(v);
          std::push_heap(queue_.begin(), queue_.end(), std::greater<int>());
        }
      }
    }
  }
  queued_[i] = 1;
  queue_.assign(1, i);
  while (!queue_.empty()) {
    std::pop_heap(queue_.begin(), queue_.end());
    const int v = queue_.back();
    queue_.pop_back();
    queued_[v] = 0;
    const double start = latest_finish_[v] - duration_s_[v];
    for (int u : problem_.nodes[v].preds) {
      if (start < latest_finish_[u]) {
        latest_finish_[u] = start;
        if (!queued_[u]) {
          queued_[u] = 1;
          queue_.push_back(u);
          std::push_heap(queue_.begin(), queue_.end());
        }
      }
    }
  }
}

void Discretizer::GreedyFill(double deadline_s) {
  BackwardPass(problem_, duration_s_, deadline_s, latest_finish_);
  heap_.clear();
  for (int i = 0; i < problem_.num_nodes(); ++i) {
    const Move m = BestMove(i);
    if (m.index >= 0) heap_.push_back(m);
  }
  std::make_heap(heap_.begin(), heap_.end());
  while (!heap_.empty()) {
    std::pop_heap(heap_.begin(), heap_.end());
    const Move top = heap_.back();
    heap_.pop_back();
    // Slack only shrinks, so a node's best rate only falls: recheck lazily.
    const Move now = BestMove(top.node);
    if (now.index < 0) continue;
    if (now.index != top.index || now.rate_j_per_s < top.rate_j_per_s) {
      heap_.push_back(now);
      std::push_heap(heap_.begin(), heap_.end());
      continue;
    }
    Lengthen(now.node, now.index);
    const Move next = BestMove(now.node);
    if (next.index >= 0) {
      heap_.push_back(next);
      std::push_heap(heap_.begin(), heap_.end());
    }
  }
}

PlanChoice Discretizer::Run(const std::vector<double>& duration_s, double deadline_s) {
  for (int i = 0; i < problem_.num_nodes(); ++i) {
    rounded_[i] = std::max(0, costs_[i].CheapestWithinNear(duration_s[i], rounded_[i]));
    index_[i] = rounded_[i];
    duration_s_[i] = costs_[i].pareto()[index_[i]].time_s;
  }
  const double deadline = std::max(deadline_s, ForwardPass(problem_, duration_s_, earliest_start_));
  GreedyFill(deadline);
  PlanChoice choice(index_.size());
  for (size_t i = 0; i < index_.size(); ++i) choice[i] = costs_[i].pareto()[index_[i]].option;
  return choice;
}

}  // namespace perseus::optimizer
