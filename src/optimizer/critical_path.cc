// Forward and backward passes over the topologically ordered DAG.
#include "optimizer/critical_path.h"

#include <algorithm>

namespace perseus::optimizer {

double ForwardPass(const Problem& problem, const std::vector<double>& duration_s,
                   std::vector<double>& earliest_start) {
  const int n = problem.num_nodes();
  earliest_start.assign(n, 0.0);
  double makespan = 0;
  for (int i = 0; i < n; ++i) {
    double finish = earliest_start[i] + duration_s[i];
    makespan = std::max(makespan, finish);
    for (int v : problem.nodes[i].succs) earliest_start[v] = std::max(earliest_start[v], finish);
  }
  return makespan;
}

void BackwardPass(const Problem& problem, const std::vector<double>& duration_s, double deadline_s,
                  std::vector<double>& latest_finish) {
  const int n = problem.num_nodes();
  latest_finish.assign(n, deadline_s);
  for (int i = n - 1; i >= 0; --i) {
    double start = latest_finish[i] - duration_s[i];
    for (int u : problem.nodes[i].preds) latest_finish[u] = std::min(latest_finish[u], start);
  }
}

}  // namespace perseus::optimizer
