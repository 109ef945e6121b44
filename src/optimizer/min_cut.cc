// Min cut with lower bounds via one max flow.
#include "optimizer/min_cut.h"

#include <lemon/preflow.h>
#include <lemon/smart_graph.h>

#include <algorithm>

namespace perseus::optimizer {

void MinCut::Reset(int num_nodes) {
  num_nodes_ = num_nodes;
  arcs_.clear();
}

void MinCut::AddArc(int from, int to, double lower, double upper) { arcs_.push_back({from, to, lower, upper}); }

double MinCut::FoldLowerBounds(int source, int sink) {
  // excess_[v] = lower bounds leaving v - lower bounds entering v. The cut
  // value equals the sum over forward arcs of (upper - lower) plus the sum of
  // excess_ over the source side, which arcs to the sink (positive excess) and
  // from the source (negative excess, with a constant) express.
  excess_.assign(num_nodes_, 0.0);
  from_.clear();
  to_.clear();
  cap_.clear();
  for (const Arc& a : arcs_) {
    from_.push_back(a.from);
    to_.push_back(a.to);
    cap_.push_back(a.upper >= kInfiniteCapacity ? kInfiniteCapacity : a.upper - a.lower);
    excess_[a.from] += a.lower;
    excess_[a.to] -= a.lower;
  }
  double constant = excess_[source];
  for (int v = 0; v < num_nodes_; ++v) {
    if (v == source || v == sink || excess_[v] == 0) continue;
    if (excess_[v] > 0) {
      from_.push_back(v), to_.push_back(sink), cap_.push_back(excess_[v]);
    } else {
      from_.push_back(source), to_.push_back(v), cap_.push_back(-excess_[v]);
      constant += excess_[v];
    }
  }
  return constant;
}

double MinCut::Solve(int source, int sink, std::vector<char>& source_side) {
  double constant = FoldLowerBounds(source, sink);
  double flow = algorithm_ == Algorithm::kDinic ? SolveDinic(source, sink, source_side)
                                                : SolvePreflow(source, sink, source_side);
  return flow + constant;
}

double MinCut::SolvePreflow(int source, int sink, std::vector<char>& source_side) {
  using Graph = lemon::SmartDigraph;
  Graph g;
  g.reserveNode(num_nodes_);
  g.reserveArc(static_cast<int>(from_.size()));
  for (int i = 0; i < num_nodes_; ++i) g.addNode();
  Graph::ArcMap<double> cap(g);
  for (size_t k = 0; k < from_.size(); ++k) cap[g.addArc(g.nodeFromId(from_[k]), g.nodeFromId(to_[k]))] = cap_[k];
  lemon::Preflow<Graph, Graph::ArcMap<double>> flow(g, cap, g.nodeFromId(source), g.nodeFromId(sink));
  flow.tolerance(lemon::Tolerance<double>(1e-12));
  flow.runMinCut();
  source_side.assign(num_nodes_, 0);
  for (int v = 0; v < num_nodes_; ++v) source_side[v] = flow.minCut(g.nodeFromId(v)) ? 1 : 0;
  return flow.flowValue();
}

bool MinCut::DinicLevels(int source, int sink) {
  level_.assign(num_nodes_, -1);
  queue_.clear();
  level_[source] = 0;
  queue_.push_back(source);
  for (size_t h = 0; h < queue_.size(); ++h) {
    int v = queue_[h];
    for (int e = first_[v]; e >= 0; e = next_edge_[e]) {
      if (edges_[e].cap > 1e-12 && level_[edges_[e].to] < 0) {
        level_[edges_[e].to] = level_[v] + 1;
        queue_.push_back(edges_[e].to);
      }
    }
  }
  return level_[sink] >= 0;
}

double MinCut::DinicPush(int v, int sink, double limit) {
  if (v == sink) return limit;
  for (int& e = cursor_[v]; e >= 0; e = next_edge_[e]) {
    Edge& edge = edges_[e];
    if (edge.cap <= 1e-12 || level_[edge.to] != level_[v] + 1) continue;
    double pushed = DinicPush(edge.to, sink, std::min(limit, edge.cap));
    if (pushed > 0) {
      edge.cap -= pushed;
      edges_[e ^ 1].cap += pushed;
      return pushed;
    }
  }
  return 0;
}

double MinCut::SolveDinic(int source, int sink, std::vector<char>& source_side) {
  const int m = static_cast<int>(from_.size());
  edges_.resize(2 * m);
  first_.assign(num_nodes_, -1);
  next_edge_.resize(2 * m);
  for (int k = 0; k < m; ++k) {
    edges_[2 * k] = {to_[k], cap_[k]};
    edges_[2 * k + 1] = {from_[k], 0.0};
    next_edge_[2 * k] = first_[from_[k]];
    first_[from_[k]] = 2 * k;
    next_edge_[2 * k + 1] = first_[to_[k]];
    first_[to_[k]] = 2 * k + 1;
  }
  double total = 0;
  while (total < kInfiniteCapacity / 2 && DinicLevels(source, sink)) {
    cursor_ = first_;
    while (double pushed = DinicPush(source, sink, kInfiniteCapacity)) total += pushed;
  }
  DinicLevels(source, sink);  // the source side is what the source still reaches
  source_side.assign(num_nodes_, 0);
  for (int v = 0; v < num_nodes_; ++v) source_side[v] = level_[v] >= 0 ? 1 : 0;
  return total;
}

}  // namespace perseus::optimizer
