// Turning continuous durations into a real frequency plan.
//
// Each computation first takes the cheapest measured option no longer than
// its continuous duration (so the plan is never slower than the relaxation),
// then sweeps over the DAG hand any remaining slack before the deadline to
// computations that can use it to save energy. Pure function.
#pragma once

#include <vector>

#include "optimizer/node_costs.h"
#include "perseus/problem.h"

namespace perseus::optimizer {

// REQUIRES: duration_s[i] >= costs[i].min_time_s(); the result's iteration
// time is at most max(deadline_s, longest path of duration_s).
PlanChoice Discretize(const Problem& problem, const std::vector<NodeCosts>& costs,
                      const std::vector<double>& duration_s, double deadline_s);

// Hands slack before `deadline_s` to computations that save energy with it;
// never makes the plan slower than max(deadline_s, its current time).
void FillSlack(const Problem& problem, const std::vector<NodeCosts>& costs, double deadline_s,
               std::vector<int>& pareto_index);

}  // namespace perseus::optimizer
