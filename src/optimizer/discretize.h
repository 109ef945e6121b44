// Turning continuous durations into a real frequency plan.
//
// Each computation first takes the cheapest measured option no longer than
// its continuous duration (so the plan is never slower than the relaxation),
// then sweeps over the DAG hand any remaining slack before the deadline to
// computations that can use it to save energy. Consecutive calls on nearby
// durations (as the frontier's records are) reuse the previous rounding as a
// starting guess and scratch space, so an object serves one caller at a time.
#pragma once

#include <vector>

#include "optimizer/node_costs.h"
#include "perseus/problem.h"

namespace perseus::optimizer {

class Discretizer {
 public:
  // Both must outlive the discretizer.
  Discretizer(const Problem& problem, const std::vector<NodeCosts>& costs);

  // REQUIRES: duration_s[i] >= costs[i].min_time_s(); the result's iteration
  // time is at most max(deadline_s, longest path of duration_s).
  PlanChoice Run(const std::vector<double>& duration_s, double deadline_s);

 private:
  // Slack filling, each pass keeping the other end fixed: in reverse
  // topological order each computation may end as late as its successors
  // start; then in topological order it may start as early as its
  // predecessors finish. Only lengthen: read and update index_ and duration_s_.
  void BackwardFill(double deadline_s);
  void ForwardFill(double deadline_s);
  void Choose(int node, double available_s);

  const Problem& problem_;
  const std::vector<NodeCosts>& costs_;
  // Indices into each computation's pareto(): the plain rounding (kept as
  // the next call's guess) and the plan being filled.
  std::vector<int> rounded_, index_;
  std::vector<double> duration_s_, earliest_start_, latest_finish_, bound_s_;
};

}  // namespace perseus::optimizer
