// Per-computation cost curves used by the solver.
//
// The cost of running computation i with option o is c = e_o - P_block * t_o:
// with E = sum e_i + P_block * (S*T - sum t_i) = sum c_i + P_block*S*T, for a
// fixed iteration time T minimising energy means minimising the sum of costs.
// For each node this keeps the Pareto-optimal options (faster ones cost more)
// and their lower convex hull, the continuous relaxation the sweep and the
// lower bound work on. Immutable after construction; copies share the curves.
#pragma once

#include <memory>
#include <vector>

#include "perseus/problem.h"

namespace perseus::optimizer {

struct CostPoint {
  double time_s = 0;
  double cost_j = 0;
  int option = 0;  // index into ProblemNode::options
};

class NodeCosts {
 public:
  NodeCosts(const std::vector<FreqPoint>& options, double blocking_power_w);

  // Time ascending, cost strictly descending.
  const std::vector<CostPoint>& pareto() const { return curves_->pareto; }
  // Vertices of the lower convex hull of pareto(), time ascending.
  const std::vector<CostPoint>& hull() const { return curves_->hull; }
  double min_time_s() const { return curves_->hull.front().time_s; }
  double max_time_s() const { return curves_->hull.back().time_s; }

  // Convex-hull cost at duration d (REQUIRES: min_time_s() <= d); flat past max_time_s().
  double HullCost(double d) const;
  // Cost increase per second of shortening from d (infinity at min_time_s()).
  double ShortenRate(double d) const;
  // Cost decrease per second of lengthening from d (0 at or past max_time_s()).
  double LengthenRate(double d) const;
  // The next hull vertex strictly below / above d (d itself if none).
  double HullVertexBelow(double d) const;
  double HullVertexAbove(double d) const;
  // Index into pareto() of the cheapest option with time <= d, or -1.
  int CheapestWithin(double d) const;
  // The same, scanning from index `guess` (fast when the answer is near it).
  int CheapestWithinNear(double d, int guess) const;
  // Equal for copies, and for nodes BuildNodeCosts gave the same options.
  const void* curves_key() const { return curves_.get(); }

 private:
  int SegmentAt(double d, bool left) const;
  // Shared by copies: nodes with the same options (BuildNodeCosts) then
  // read the same memory, which keeps the many per-record searches in cache.
  struct Curves {
    std::vector<CostPoint> pareto, hull;
  };
  std::shared_ptr<const Curves> curves_;
};

// The cheapest two computations in series can cost within a total time:
// every pair of their Pareto options, summed, Pareto-filtered (time
// ascending, cost strictly descending). A pair of a dependency's ends that
// fits its window fits within the window's total time, so this tells cheaply
// that no pair of options can be cheaper than the pair now.
class SeriesCosts {
 public:
  SeriesCosts(const NodeCosts& first, const NodeCosts& second);
  // The least cost_j of a pair whose times sum to at most total_s (summed
  // as first.time_s + second.time_s, costs likewise); +infinity if none.
  double CheapestWithin(double total_s) const;
  // The least total time within which a pair costs less than `cost_j`
  // (+infinity if none): CheapestWithin(t) < cost_j exactly when
  // t >= TimeToBeat(cost_j), so one search answers every t.
  double TimeToBeat(double cost_j) const;

 private:
  // stairs_time_s_[k] ascending, stairs_cost_j_[k] strictly descending.
  std::vector<double> stairs_time_s_, stairs_cost_j_;
};

// Builds one NodeCosts per problem node; nodes with identical options share work.
std::vector<NodeCosts> BuildNodeCosts(const Problem& problem);

// Relative tolerance for comparing times.
inline constexpr double kTimeEps = 1e-9;

}  // namespace perseus::optimizer
