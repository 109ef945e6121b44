// Lower bounds on iteration energy from the convex relaxation of the problem
// (each computation's cost curve replaced by its lower convex hull, durations
// continuous). Its optimal cost LB(T) is convex and non-increasing in T, and
// no plan with iteration time <= T uses less energy than
// min over T' <= T of LB(T') + P_block * S * T'.
//
// RelaxationCurve holds LB at the times the sweep visited (exact between
// them, where LB is linear). EnergyLowerBound solves the relaxation
// independently as a min-cost circulation with LEMON's network simplex at a
// few times; the flow on the deadline arc is LB's (negated) slope, so each
// solve is a tangent line bounding LB everywhere. Both are immutable once
// built and thread-safe to query.
#pragma once

#include <atomic>
#include <limits>
#include <vector>

#include "optimizer/node_costs.h"
#include "perseus/problem.h"
#include "perseus/status.h"

namespace perseus::optimizer {

class RelaxationCurve {
 public:
  explicit RelaxationCurve(double blocking_power_w) : blocking_power_w_(blocking_power_w) {}
  // Points must come in decreasing time (the sweep's order); Finish() once
  // after the last, before any query.
  void Add(double time_s, double cost_j);
  void Finish();
  // LB(T) by linear interpolation; the slowest cost past the slowest point.
  double CostAt(double time_s) const;
  // Lower bound on the energy of any plan whose iteration time is <= time_s.
  double AtTime(double time_s) const;
  // Lower bound on the energy of any plan whose iteration time is >= time_s.
  double AtLeastTime(double time_s) const;
  // The fastest visited time at which the relaxation's energy is least: of
  // the points added so far (before Finish() too), and in the end of all.
  double MinEnergyTime() const { return least_energy_time_s_; }
  // The least energy (cost + blocking power x time) of the points so far.
  double LeastEnergy() const { return least_energy_j_; }

 private:
  std::vector<double> time_s_, cost_j_;  // ascending after Finish()
  double least_energy_j_ = std::numeric_limits<double>::infinity();
  double least_energy_time_s_ = 0;
  std::vector<double> prefix_min_energy_j_, suffix_min_energy_j_;
  double blocking_power_w_;  // x stages
};

class EnergyLowerBound {
 public:
  struct Tangent {
    double time_s;  // where the relaxation was solved
    double cost_j;  // relaxation cost there (sum of e - P_block*t)
    double slope;   // d cost / d T there (<= 0)
  };

  // Solves the relaxation at `sample_times_s` (each >= the fastest possible
  // time). Unavailable ("cancelled") once `cancel` is set, checked before
  // each solve.
  static Result<EnergyLowerBound> Compute(const Problem& problem, const std::vector<NodeCosts>& costs,
                                          const std::vector<double>& sample_times_s,
                                          const std::atomic<bool>* cancel = nullptr);

  // Lower bound on the energy of any plan whose iteration time is <= time_s.
  double AtTime(double time_s) const;
  // The relaxation's exact optimal cost at the i-th sample time.
  const std::vector<Tangent>& tangents() const { return tangents_; }

 private:
  double EnergyAt(double time_s) const;
  std::vector<Tangent> tangents_;
  double fastest_time_s_ = 0;
  double blocking_power_w_ = 0;  // x stages: the P_block * S * T term
};

}  // namespace perseus::optimizer
