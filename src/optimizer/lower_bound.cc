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
//
// Exact arithmetic, so the solve always ends. LEMON's network simplex keeps a
// strongly feasible spanning tree, which rules out cycling only when every
// comparison is exact; with floating-point costs and capacities, rounding
// broke the rule on a 4 x 4 GPipe problem and the solve never returned.
// So the network is solved on integers: times in units of kTimeSteps-th of
// the largest time, capacities rounded down in units of kCapacitySteps-th of
// the largest. Any circulation within the rounded-down capacities is feasible
// for the real network, and by weak duality every feasible circulation's
// objective, evaluated with the real times, is a lower bound for every T
// (an affine function of T, hence a tangent line below LB). Rounding only
// makes the bound a hair lower than LB (docs/design.md, Termination).
#include "optimizer/lower_bound.h"

#include <lemon/network_simplex.h>
#include <lemon/smart_graph.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <utility>
#include <vector>

namespace perseus::optimizer {
namespace {

using Graph = lemon::SmartDigraph;
using Simplex = lemon::NetworkSimplex<Graph, int64_t, int64_t>;

// 2^31 steps each: a path's summed cost stays below 2^31 x 2 x 2^19 nodes
// (the job-size limit) < 2^63, and so does the deadline arc's flow.
constexpr double kTimeSteps = 2147483648.0;
constexpr double kCapacitySteps = 2147483648.0;
constexpr int64_t kUncapacitated = std::numeric_limits<int64_t>::max();

// An arc as the model has it: capacity (W, infinity for none) and cost (s).
struct RealArc {
  double upper;
  double cost;
};

struct Network {
  Graph g;
  std::vector<std::pair<Graph::Node, Graph::Node>> ends;
  std::vector<RealArc> real;  // by arc id
  Graph::Arc deadline_arc;
  double base_cost_j = 0;  // sum of every node's cheapest hull cost
};

void AddArc(Network& net, Graph::Node a, Graph::Node b, double upper, double cost) {
  net.g.addArc(a, b);
  net.real.push_back({upper, cost});
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
  net.real.push_back({inf, 0});  // its cost is the deadline, set per solve
}

// The integer network's units: the largest finite capacity and time.
struct Scale {
  double capacity_w = 1;  // per unit of integer flow
  double time_s = 1;      // per unit of integer cost
};

Scale ScaleFor(const Network& net, const std::vector<double>& sample_times_s) {
  double max_upper = 0, max_time = 0;
  for (const RealArc& a : net.real) {
    if (std::isfinite(a.upper)) max_upper = std::max(max_upper, a.upper);
    max_time = std::max(max_time, std::abs(a.cost));
  }
  for (double t : sample_times_s) max_time = std::max(max_time, std::abs(t));
  Scale s;
  if (max_upper > 0) s.capacity_w = max_upper / kCapacitySteps;
  if (max_time > 0) s.time_s = max_time / kTimeSteps;
  return s;
}

// Integer capacities, rounded down, and costs, rounded up: a computation's
// profit (a negative cost) never grows, so with the deadline also rounded up
// no cycle turns negative at a deadline the real network meets (T >= the
// fastest time), and the integer solve is never unbounded where the real one is not.
void IntegerArcs(const Network& net, const Scale& scale, Graph::ArcMap<int64_t>& upper,
                 Graph::ArcMap<int64_t>& cost) {
  for (Graph::ArcIt a(net.g); a != lemon::INVALID; ++a) {
    const RealArc& r = net.real[static_cast<size_t>(Graph::id(a))];
    upper[a] = std::isfinite(r.upper) ? static_cast<int64_t>(std::floor(r.upper / scale.capacity_w)) : kUncapacitated;
    cost[a] = static_cast<int64_t>(std::ceil(r.cost / scale.time_s));
  }
}

// The dual objective of `flow` with the real times, as the line
// cost(T) = fixed - flow_on_deadline x T, evaluated at t.
EnergyLowerBound::Tangent TangentOf(const Network& net, const Simplex& simplex, const Scale& scale, double t) {
  long double fixed = net.base_cost_j;
  for (Graph::ArcIt a(net.g); a != lemon::INVALID; ++a) {
    if (a == net.deadline_arc) continue;
    const long double flow_w = static_cast<long double>(simplex.flow(a)) * scale.capacity_w;
    fixed -= flow_w * net.real[static_cast<size_t>(Graph::id(a))].cost;
  }
  const double slope = -static_cast<double>(static_cast<long double>(simplex.flow(net.deadline_arc)) * scale.capacity_w);
  return {t, static_cast<double>(fixed + static_cast<long double>(slope) * t), slope};
}

}  // namespace

void RelaxationCurve::Add(double time_s, double cost_j) {
  time_s_.push_back(time_s);
  cost_j_.push_back(cost_j);
  // Times fall, so a tie moves the least energy's time to the faster point.
  const double energy_j = cost_j + blocking_power_w_ * time_s;
  if (energy_j <= least_energy_j_) least_energy_j_ = energy_j, least_energy_time_s_ = time_s;
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
                                                   const std::vector<double>& sample_times_s,
                                                   const std::atomic<bool>* cancel) {
  EnergyLowerBound lb;
  lb.blocking_power_w_ = problem.pipeline_blocking_power_w();
  lb.fastest_time_s_ = std::numeric_limits<double>::infinity();
  Network net;
  BuildNetwork(problem, costs, std::numeric_limits<double>::infinity(), net);
  const Scale scale = ScaleFor(net, sample_times_s);
  Graph::ArcMap<int64_t> upper(net.g), cost(net.g);
  IntegerArcs(net, scale, upper, cost);
  Simplex simplex(net.g);
  for (double t : sample_times_s) {
    if (cancel != nullptr && cancel->load(std::memory_order_relaxed)) return Status::Unavailable("cancelled");
    // Only the integer optimum's flow is used; its objective is evaluated at the real t.
    cost[net.deadline_arc] = static_cast<int64_t>(std::ceil(t / scale.time_s));
    simplex.reset();
    simplex.upperMap(upper).costMap(cost);
    Simplex::ProblemType result = simplex.run();
    if (result != Simplex::OPTIMAL) {
      return Status::Internal("lower bound: relaxation at T=" + std::to_string(t) + " s is " +
                              (result == Simplex::UNBOUNDED ? "infeasible (T below the fastest time)" : "infeasible"));
    }
    lb.tangents_.push_back(TangentOf(net, simplex, scale, t));
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
