// Certified lower bounds on iteration energy: the convex relaxation of the
// problem (each computation's cost curve replaced by its lower convex hull,
// durations continuous) solved exactly as a min-cost circulation with LEMON's
// network simplex, at a handful of iteration times.
//
// The relaxation's cost LB(T) is convex and non-increasing in T; the flow on
// the deadline arc is its (negated) slope, so each solve gives a tangent line
// that bounds LB everywhere. No plan with iteration time <= T can use less
// energy than AtTime(T). Immutable after Compute; thread-safe to query.
#pragma once

#include <vector>

#include "optimizer/node_costs.h"
#include "perseus/problem.h"
#include "perseus/status.h"

namespace perseus::optimizer {

class EnergyLowerBound {
 public:
  struct Tangent {
    double time_s;  // where the relaxation was solved
    double cost_j;  // relaxation cost there (sum of e - P_block*t)
    double slope;   // d cost / d T there (<= 0)
  };

  // Solves the relaxation at `sample_times_s` (each >= the fastest possible time).
  static Result<EnergyLowerBound> Compute(const Problem& problem, const std::vector<NodeCosts>& costs,
                                          const std::vector<double>& sample_times_s);

  // Lower bound on the energy of any plan whose iteration time is <= time_s.
  double AtTime(double time_s) const;
  const std::vector<Tangent>& tangents() const { return tangents_; }

 private:
  double EnergyAt(double time_s) const;
  std::vector<Tangent> tangents_;
  double fastest_time_s_ = 0;
  double blocking_power_w_ = 0;  // x stages: the P_block * S * T term
};

}  // namespace perseus::optimizer
