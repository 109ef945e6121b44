// Forward and backward passes over the topologically ordered DAG.
#include "optimizer/critical_path.h"

#include <algorithm>

namespace perseus::optimizer {

Dag::Dag(const Problem& problem) {
  const int n = problem.num_nodes();
  succ_start_.reserve(n + 1);
  pred_start_.reserve(n + 1);
  succ_start_.push_back(0);
  pred_start_.push_back(0);
  for (const ProblemNode& node : problem.nodes) {
    succ_.insert(succ_.end(), node.succs.begin(), node.succs.end());
    pred_.insert(pred_.end(), node.preds.begin(), node.preds.end());
    succ_start_.push_back(static_cast<int>(succ_.size()));
    pred_start_.push_back(static_cast<int>(pred_.size()));
  }
}

double ForwardPass(const Dag& dag, const std::vector<double>& duration_s, std::vector<double>& earliest_start) {
  const int n = dag.num_nodes();
  earliest_start.assign(n, 0.0);
  double makespan = 0;
  for (int i = 0; i < n; ++i) {
    double finish = earliest_start[i] + duration_s[i];
    makespan = std::max(makespan, finish);
    for (int v : dag.succs(i)) earliest_start[v] = std::max(earliest_start[v], finish);
  }
  return makespan;
}

void BackwardPass(const Dag& dag, const std::vector<double>& duration_s, double deadline_s,
                  std::vector<double>& latest_finish) {
  const int n = dag.num_nodes();
  latest_finish.assign(n, deadline_s);
  for (int i = n - 1; i >= 0; --i) {
    double start = latest_finish[i] - duration_s[i];
    for (int u : dag.preds(i)) latest_finish[u] = std::min(latest_finish[u], start);
  }
}

}  // namespace perseus::optimizer
