// The convex relaxation as a min-cost circulation.
//
// Primal (durations d_i = pi(f_i) - pi(s_i), event times pi):
//   min sum_i C_i(d_i)  s.t.  precedences, pi(sink) - pi(source) <= T,
// with the hull written as C(d) = c_last + sum_j w'_j max(0, tau_j - d),
// w'_j = w_j - w_{j+1} >= 0 (w_j the segment slopes, decreasing), d >= tau_0.
// Its LP dual is a circulation: per computation an uncapacitated arc of
// profit tau_0 and one arc of capacity w'_j and profit tau_j per hull
// breakpoint, precedence arcs, and a return arc sink->source of cost T whose
// flow is the multiplier of the deadline, i.e. -dLB/dT.
#include "optimizer/lower_bound.h"

#include <lemon/network_simplex.h>
#include <lemon/smart_graph.h>

#include <algorithm>
#include <limits>

namespace perseus::optimizer {
namespace {

using Graph = lemon::SmartDigraph;
using Simplex = lemon::NetworkSimplex<Graph, double, double>;

struct Network {
  Graph g;
  Graph::ArcMap<double> upper{g}, cost{g};
  Graph::Arc deadline_arc;
  double base_cost_j = 0;  // sum of every node's cheapest hull cost
};

void AddArc(Network& net, Graph::Node a, Graph::Node b, double upper, double cost) {
  Graph::Arc arc = net.g.addArc(a, b);
  net.upper[arc] = upper;
  net.cost[arc] = cost;
}

void AddComputation(Network& net, const NodeCosts& c, Graph::Node s, Graph::Node f, double inf) {
  const auto& h = c.hull();
  net.base_cost_j += h.back().cost_j;
  AddArc(net, s, f, inf, -h.front().time_s);
  for (size_t j = 1; j < h.size(); ++j) {
    double w = (h[j - 1].cost_j - h[j].cost_j) / (h[j].time_s - h[j - 1].time_s);
    double w_next = j + 1 < h.size() ? (h[j].cost_j - h[j + 1].cost_j) / (h[j + 1].time_s - h[j].time_s) : 0.0;
    if (w - w_next > 0) AddArc(net, s, f, w - w_next, -h[j].time_s);
  }
}

void BuildNetwork(const Problem& problem, const std::vector<NodeCosts>& costs, double inf, Network& net) {
  const int n = problem.num_nodes();
  net.g.reserveNode(2 * n + 2);
  Graph::Node source = net.g.addNode(), sink = net.g.addNode();
  std::vector<Graph::Node> start(n), finish(n);
  for (int i = 0; i < n; ++i) {
    start[i] = net.g.addNode();
    finish[i] = net.g.addNode();
    AddComputation(net, costs[i], start[i], finish[i], inf);
  }
  for (int i = 0; i < n; ++i) {
    const ProblemNode& node = problem.nodes[i];
    if (node.preds.empty()) AddArc(net, source, start[i], inf, 0);
    if (node.succs.empty()) AddArc(net, finish[i], sink, inf, 0);
    for (int j : node.succs) AddArc(net, finish[i], start[j], inf, 0);
  }
  net.deadline_arc = net.g.addArc(sink, source);
  net.upper[net.deadline_arc] = inf;
}

}  // namespace

void RelaxationCurve::Add(double time_s, double cost_j) {
  time_s_.push_back(time_s);
  cost_j_.push_back(cost_j);
}

void RelaxationCurve::Finish() {
  std::reverse(time_s_.begin(), time_s_.end());
  std::reverse(cost_j_.begin(), cost_j_.end());
  double best = std::numeric_limits<double>::infinity();
  for (size_t k = 0; k < time_s_.size(); ++k) {
    best = std::min(best, cost_j_[k] + blocking_power_w_ * time_s_[k]);
    prefix_min_energy_j_.push_back(best);
  }
  suffix_min_energy_j_.resize(time_s_.size());
  best = std::numeric_limits<double>::infinity();
  for (size_t k = time_s_.size(); k-- > 0;) {
    best = std::min(best, cost_j_[k] + blocking_power_w_ * time_s_[k]);
    suffix_min_energy_j_[k] = best;
  }
}

double RelaxationCurve::CostAt(double t) const {
  if (time_s_.empty()) return 0;
  if (t >= time_s_.back()) return cost_j_.back();
  if (t <= time_s_.front()) return cost_j_.front();
  size_t k = std::upper_bound(time_s_.begin(), time_s_.end(), t) - time_s_.begin();
  double w = (t - time_s_[k - 1]) / (time_s_[k] - time_s_[k - 1]);
  return cost_j_[k - 1] + w * (cost_j_[k] - cost_j_[k - 1]);
}

double RelaxationCurve::AtTime(double t) const {
  if (time_s_.empty()) return 0;
  // Between visited times the energy bound is linear, so its minimum over
  // [fastest, t] is at a visited time or at t itself.
  size_t k = std::upper_bound(time_s_.begin(), time_s_.end(), t) - time_s_.begin();
  double at_t = CostAt(t) + blocking_power_w_ * t;
  return k == 0 ? at_t : std::min(prefix_min_energy_j_[k - 1], at_t);
}

double RelaxationCurve::AtLeastTime(double t) const {
  if (time_s_.empty()) return 0;
  // Past the slowest visited time the cost is flat, so the energy only grows.
  size_t k = std::upper_bound(time_s_.begin(), time_s_.end(), t) - time_s_.begin();
  double at_t = CostAt(t) + blocking_power_w_ * t;
  return k == time_s_.size() ? at_t : std::min(suffix_min_energy_j_[k], at_t);
}

Result<EnergyLowerBound> EnergyLowerBound::Compute(const Problem& problem, const std::vector<NodeCosts>& costs,
                                                   const std::vector<double>& sample_times_s) {
  EnergyLowerBound lb;
  lb.blocking_power_w_ = problem.blocking_power_w * problem.num_stages();
  lb.fastest_time_s_ = std::numeric_limits<double>::infinity();
  Network net;
  const double inf = std::numeric_limits<double>::infinity();
  BuildNetwork(problem, costs, inf, net);
  Simplex simplex(net.g);
  for (double t : sample_times_s) {
    net.cost[net.deadline_arc] = t;
    simplex.reset();
    simplex.upperMap(net.upper).costMap(net.cost);
    Simplex::ProblemType result = simplex.run();
    if (result != Simplex::OPTIMAL) {
      return Status::Internal("lower bound: relaxation at T=" + std::to_string(t) + " s is " +
                              (result == Simplex::UNBOUNDED ? "infeasible (T below the fastest time)" : "infeasible"));
    }
    lb.tangents_.push_back({t, net.base_cost_j - simplex.totalCost(), -simplex.flow(net.deadline_arc)});
    lb.fastest_time_s_ = std::min(lb.fastest_time_s_, t);
  }
  return lb;
}

double EnergyLowerBound::EnergyAt(double time_s) const {
  double best = -std::numeric_limits<double>::infinity();
  for (const Tangent& tg : tangents_) best = std::max(best, tg.cost_j + tg.slope * (time_s - tg.time_s));
  return best + blocking_power_w_ * time_s;
}

double EnergyLowerBound::AtTime(double time_s) const {
  if (tangents_.empty()) return 0;
  // The bound is convex in T; its minimum over [fastest, time_s] lies at an
  // end or where two tangents cross.
  double lo = std::min(fastest_time_s_, time_s);
  double best = std::min(EnergyAt(lo), EnergyAt(time_s));
  for (size_t a = 0; a < tangents_.size(); ++a) {
    for (size_t b = a + 1; b < tangents_.size(); ++b) {
      const Tangent& p = tangents_[a];
      const Tangent& q = tangents_[b];
      if (p.slope == q.slope) continue;
      double x = (q.cost_j - q.slope * q.time_s - p.cost_j + p.slope * p.time_s) / (p.slope - q.slope);
      if (x > lo && x < time_s) best = std::min(best, EnergyAt(x));
    }
  }
  return best;
}

}  // namespace perseus::optimizer
