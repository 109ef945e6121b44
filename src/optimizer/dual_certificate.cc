// The dual-flow certificate (see the header).
#include "optimizer/dual_certificate.h"

#include <lemon/circulation.h>
#include <lemon/smart_graph.h>

#include <algorithm>
#include <cmath>
#include <string>

#include "optimizer/critical_path.h"

namespace perseus::optimizer {
namespace {

using Graph = lemon::SmartDigraph;

// A network with lower and upper bounds on its arcs, solved for a feasible
// circulation with LEMON's Circulation (push-relabel on the bounds directly;
// 2.5-3 times faster here than the textbook reduction to a maximum flow from
// a super source to a super sink with LEMON's Preflow, which it replaced:
// docs/design.md, Algorithm, 5).
class BoundedCirculation {
 public:
  explicit BoundedCirculation(int nodes) : excess_(nodes, 0) {
    for (int v = 0; v < nodes; ++v) g_.addNode();
  }
  int AddArc(int from, int to, double lower, double upper) {
    g_.addArc(g_.nodeFromId(from), g_.nodeFromId(to));
    lower_.push_back(lower);
    upper_.push_back(upper);
    excess_[to] += lower;
    excess_[from] -= lower;
    return static_cast<int>(lower_.size()) - 1;
  }
  // False if no circulation meets every bound; else Flow() is one.
  bool Solve() {
    const int arcs = static_cast<int>(lower_.size());
    Graph::ArcMap<double> lo(g_), up(g_);
    Graph::NodeMap<double> supply(g_, 0.0);
    for (int a = 0; a < arcs; ++a) lo[g_.arcFromId(a)] = lower_[a], up[g_.arcFromId(a)] = upper_[a];
    lemon::Circulation<Graph, Graph::ArcMap<double>, Graph::ArcMap<double>, Graph::NodeMap<double>> circ(g_, lo, up, supply);
    double needed = 0;
    for (double e : excess_) needed += std::max(0.0, e);
    circ.tolerance(lemon::Tolerance<double>(1e-12 * std::max(1.0, needed)));
    const bool ok = circ.run();
    flow_.resize(arcs);
    for (int a = 0; a < arcs; ++a) flow_[a] = circ.flow(g_.arcFromId(a));
    return ok;
  }
  double Flow(int arc) const { return flow_[arc]; }

 private:
  Graph g_;
  std::vector<double> lower_, upper_, excess_, flow_;
};

constexpr int kSource = 0, kSink = 1;
int In(int i) { return 2 + 2 * i; }
int Out(int i) { return 3 + 2 * i; }

// The tight subnetwork at time_s for tolerance tol and its bounded
// circulation; node_arc[i] is computation i's arc (-1: not tight, no flow).
// Returns the return arc sink -> source, or -1 if a computation with slack
// could still save by running slower (the durations are not optimal).
int BuildTightNetwork(const Problem& problem, const std::vector<NodeCosts>& costs, const std::vector<double>& d,
                      double time_s, double tol, BoundedCirculation& net, std::vector<int>& node_arc) {
  const int n = problem.num_nodes();
  std::vector<double> earliest_start, latest_finish;
  const Dag dag(problem);
  ForwardPass(dag, d, earliest_start);
  BackwardPass(dag, d, time_s, latest_finish);
  // "Unbounded" capacity: if any flow meets the bounds, one of value at most
  // the sum of the lower bounds does (drop paths no bound needs), so four
  // times the sum of all finite rates is never binding.
  double big = 1;
  for (int i = 0; i < n; ++i) {
    const double lengthen = costs[i].LengthenRate(d[i]), shorten = costs[i].ShortenRate(d[i]);
    big += lengthen + (std::isinf(shorten) ? 0 : shorten);
  }
  big *= 4;
  std::vector<char> critical(n, 0);
  node_arc.assign(n, -1);
  for (int i = 0; i < n; ++i) {
    const double lengthen = costs[i].LengthenRate(d[i]);
    if (latest_finish[i] - earliest_start[i] - d[i] > tol) {
      if (lengthen > 0) return -1;
      continue;
    }
    critical[i] = 1;
    const double shorten = costs[i].ShortenRate(d[i]);
    node_arc[i] = net.AddArc(In(i), Out(i), lengthen, std::isinf(shorten) ? big : std::max(shorten, lengthen));
  }
  for (int i = 0; i < n; ++i) {
    if (!critical[i]) continue;
    const ProblemNode& node = problem.nodes[i];
    if (node.preds.empty() && earliest_start[i] <= tol) net.AddArc(kSource, In(i), 0, big);
    if (node.succs.empty() && earliest_start[i] + d[i] >= time_s - tol) net.AddArc(Out(i), kSink, 0, big);
    for (int j : node.succs) {
      if (critical[j] && latest_finish[j] - d[j] - earliest_start[i] - d[i] <= tol) net.AddArc(Out(i), In(j), 0, big);
    }
  }
  return net.AddArc(kSink, kSource, 0, big);
}

}  // namespace

Result<EnergyLowerBound::Tangent> DualFlowTangent(const Problem& problem, const std::vector<NodeCosts>& costs,
                                                  const std::vector<double>& duration_s, double time_s) {
  const int n = problem.num_nodes();
  // As in the sweep: the tight set is exact up to rounding; widen the
  // tolerance if rounding hid a tight path.
  for (double tol = time_s * kTimeEps; tol < time_s * 1e-4; tol *= 100) {
    BoundedCirculation net(2 * n + 2);
    std::vector<int> node_arc;
    const int return_arc = BuildTightNetwork(problem, costs, duration_s, time_s, tol, net, node_arc);
    if (return_arc < 0) break;
    if (!net.Solve()) continue;
    // The line from the flow alone: sum_i min over hull vertices of
    // (cost + f_i time), minus value x T.
    long double fixed = 0;
    for (int i = 0; i < n; ++i) {
      const double f = node_arc[i] < 0 ? 0 : std::max(0.0, net.Flow(node_arc[i]));
      long double best = INFINITY;
      for (const CostPoint& v : costs[i].hull()) {
        best = std::min(best, static_cast<long double>(v.cost_j) + static_cast<long double>(f) * v.time_s);
      }
      fixed += best;
    }
    const double value = net.Flow(return_arc);
    return EnergyLowerBound::Tangent{time_s, static_cast<double>(fixed - static_cast<long double>(value) * time_s),
                                     -value};
  }
  return Status::Internal("dual certificate at T=" + std::to_string(time_s) +
                                    " s: no flow meets the optimality conditions (the relaxation's durations are not "
                                    "optimal there)");
}

}  // namespace perseus::optimizer
