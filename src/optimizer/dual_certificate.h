// A certificate that the relaxation's durations at one iteration time are
// optimal, much cheaper than solving the relaxation again.
//
// Weak duality: take any flow f >= 0 from the DAG's sources to its sinks,
// f_i through computation i, value v. Every path of durations meeting the
// deadline T has length <= T, so sum_i f_i d_i <= v T, and for every plan
//   sum_i C_i(d_i) >= sum_i min_d (C_i(d) + f_i d) - v T,
// with C_i the cost curve's convex hull (the min is at a hull vertex). The
// right side is a tangent line below the relaxation's optimum LB(T), for
// every T. It touches LB at T when f runs only through the computations and
// dependencies that are tight at T and each f_i lies between C_i's slopes on
// either side of d_i (the optimality conditions); such a flow exists exactly
// when the durations are optimal. DualFlowTangent finds one with LEMON's
// Circulation (a feasible flow with lower bounds, on the tight subnetwork
// only)
// and evaluates the line from the flow alone, so an error anywhere before
// (the sweep, the replay) shows as a line below the sweep's cost or as no
// flow at all. bench/optimizer_bench.cc compares its cost with the min-cost
// flow check's.
#pragma once

#include <vector>

#include "optimizer/lower_bound.h"
#include "optimizer/node_costs.h"
#include "perseus/problem.h"
#include "perseus/status.h"

namespace perseus::optimizer {

// REQUIRES: duration_s[i] within costs[i]'s hull, longest path <= time_s
// (within rounding). Internal when no flow satisfies the
// optimality conditions (the durations are not optimal at time_s).
Result<EnergyLowerBound::Tangent> DualFlowTangent(const Problem& problem, const std::vector<NodeCosts>& costs,
                                                  const std::vector<double>& duration_s, double time_s);

}  // namespace perseus::optimizer
