// Warm-started min cut with lower bounds.
#include "optimizer/min_cut.h"

#include <lemon/preflow.h>
#include <lemon/smart_graph.h>

#include <algorithm>

namespace perseus::optimizer {
namespace {
constexpr double kEps = 1e-9;
}  // namespace

MinCut::MinCut(int num_nodes, Engine engine) : num_nodes_(num_nodes), engine_(engine) {}

int MinCut::AddArc(int from, int to) {
  from_.push_back(from);
  to_.push_back(to);
  lower_.push_back(0);
  upper_.push_back(0);
  return num_user_arcs_++;
}

void MinCut::SetBounds(int arc, double lower, double upper) {
  lower_[arc] = lower;
  upper_[arc] = upper;
}

int MinCut::Order(int v) const {
  if (v == kSource) return -1;
  if (v == kSink) return num_nodes_;
  return v;
}

void MinCut::Finalize() {
  for (int v = 0; v < num_nodes_; ++v) {
    from_.push_back(v), to_.push_back(kSink);
    from_.push_back(kSource), to_.push_back(v);
  }
  const int m = static_cast<int>(from_.size());
  cap_.assign(m, 0);
  flow_.assign(m, 0);
  out_first_.assign(num_nodes_, -1);
  in_first_.assign(num_nodes_, -1);
  out_next_.assign(m, -1);
  in_next_.assign(m, -1);
  for (int a = m - 1; a >= 0; --a) {
    out_next_[a] = out_first_[from_[a]];
    out_first_[from_[a]] = a;
    in_next_[a] = in_first_[to_[a]];
    in_first_[to_[a]] = a;
  }
  finalized_ = true;
}

double MinCut::FoldLowerBounds() {
  // balance_[v] = lower bounds leaving v - lower bounds entering v. The cut
  // value is the sum over forward arcs of (upper - lower) plus the sum of
  // balance_ over the source side: positive balance is an arc to the sink,
  // negative balance an arc from the source plus a constant.
  balance_.assign(num_nodes_, 0.0);
  for (int a = 0; a < num_user_arcs_; ++a) {
    cap_[a] = upper_[a] >= kInfiniteCapacity ? kInfiniteCapacity : upper_[a] - lower_[a];
    balance_[from_[a]] += lower_[a];
    balance_[to_[a]] -= lower_[a];
  }
  double constant = balance_[kSource];
  for (int v = 0; v < num_nodes_; ++v) {
    const int to_sink = num_user_arcs_ + 2 * v, from_source = to_sink + 1;
    const bool inner = v != kSource && v != kSink;
    cap_[to_sink] = inner && balance_[v] > 0 ? balance_[v] : 0;
    cap_[from_source] = inner && balance_[v] < 0 ? -balance_[v] : 0;
    if (inner && balance_[v] < 0) constant += balance_[v];
  }
  return constant;
}

void MinCut::TrimToCapacities() {
  // Cut flow down to the new capacities, then restore conservation: excess
  // flows back toward the source (reverse topological order), deficits on
  // toward the sink (topological order). The flow is acyclic, so one pass each.
  std::fill(balance_.begin(), balance_.end(), 0.0);  // now: inflow - outflow
  for (size_t a = 0; a < flow_.size(); ++a) {
    if (flow_[a] > cap_[a]) {
      double over = flow_[a] - cap_[a];
      flow_[a] = cap_[a];
      balance_[from_[a]] += over;
      balance_[to_[a]] -= over;
    }
  }
  std::vector<int>& order = queue_;
  order.clear();
  for (int v = 2; v < num_nodes_; ++v) order.push_back(v);
  for (auto it = order.rbegin(); it != order.rend(); ++it) {
    int v = *it;
    for (int a = in_first_[v]; a >= 0 && balance_[v] > kEps; a = in_next_[a]) {
      double r = std::min(flow_[a], balance_[v]);
      flow_[a] -= r, balance_[v] -= r, balance_[from_[a]] += r;
    }
  }
  for (int v : order) {
    for (int a = out_first_[v]; a >= 0 && balance_[v] < -kEps; a = out_next_[a]) {
      double r = std::min(flow_[a], -balance_[v]);
      flow_[a] -= r, balance_[v] += r, balance_[to_[a]] -= r;
    }
  }
}

void MinCut::BuildResidualIndex() {
  // Compressed adjacency of the arcs that can carry residual capacity now:
  // entry 2a is arc a leaving from_[a], entry 2a+1 its reverse leaving to_[a].
  // Arcs with neither capacity nor flow (most of the network off the critical
  // path) are left out, so searches skip them.
  adj_start_.assign(num_nodes_ + 1, 0);
  for (size_t a = 0; a < flow_.size(); ++a) {
    if (cap_[a] > kEps || flow_[a] > kEps) ++adj_start_[from_[a] + 1], ++adj_start_[to_[a] + 1];
  }
  for (int v = 0; v < num_nodes_; ++v) adj_start_[v + 1] += adj_start_[v];
  adj_.resize(adj_start_[num_nodes_]);
  adj_fill_.assign(adj_start_.begin(), adj_start_.end() - 1);
  for (int a = 0; a < static_cast<int>(flow_.size()); ++a) {
    if (cap_[a] > kEps || flow_[a] > kEps) adj_[adj_fill_[from_[a]]++] = 2 * a, adj_[adj_fill_[to_[a]]++] = 2 * a + 1;
  }
}

double MinCut::Residual(int entry) const {
  const int a = entry >> 1;
  return (entry & 1) ? flow_[a] : cap_[a] - flow_[a];
}

int MinCut::Head(int entry) const { return (entry & 1) ? from_[entry >> 1] : to_[entry >> 1]; }

bool MinCut::BuildLevels(bool stop_at_sink) {
  // Breadth-first search of the residual network from the source; level_ < 0
  // marks nodes it does not reach.
  level_.assign(num_nodes_, -1);
  queue_.clear();
  level_[kSource] = 0;
  queue_.push_back(kSource);
  for (size_t h = 0; h < queue_.size(); ++h) {
    const int v = queue_[h];
    if (stop_at_sink && level_[kSink] >= 0 && level_[v] >= level_[kSink]) break;
    for (int k = adj_start_[v]; k < adj_start_[v + 1]; ++k) {
      const int w = Head(adj_[k]);
      if (level_[w] < 0 && Residual(adj_[k]) > kEps) level_[w] = level_[v] + 1, queue_.push_back(w);
    }
  }
  return level_[kSink] >= 0;
}

double MinCut::Push(int v, double limit) {
  if (v == kSink) return limit;
  for (int& k = cursor_[v]; k < adj_start_[v + 1]; ++k) {
    const int e = adj_[k], w = Head(e);
    const double r = Residual(e);
    if (r <= kEps || level_[w] != level_[v] + 1) continue;
    double pushed = Push(w, std::min(limit, r));
    if (pushed > 0) {
      flow_[e >> 1] += (e & 1) ? -pushed : pushed;
      return pushed;
    }
  }
  return 0;
}

void MinCut::Augment() {
  // Dinic: blocking flows along shortest residual paths.
  BuildResidualIndex();
  double total = 0;
  while (BuildLevels(true)) {
    cursor_.assign(adj_start_.begin(), adj_start_.end() - 1);
    while (double pushed = Push(kSource, kInfiniteCapacity)) {
      total += pushed;
      if (total >= kInfiniteCapacity / 2) return;  // no finite cut; the caller stops
    }
  }
}

double MinCut::Solve(std::vector<char>& source_side) {
  return engine_ == Engine::kWarmDinic ? SolveWarm(source_side) : SolveWithLemonPreflow(source_side);
}

double MinCut::SolveWarm(std::vector<char>& source_side) {
  if (!finalized_) Finalize();
  double constant = FoldLowerBounds();
  TrimToCapacities();
  Augment();  // ends with a search that did not reach the sink: level_ marks the source side
  source_side.assign(num_nodes_, 0);
  for (int v = 0; v < num_nodes_; ++v) source_side[v] = level_[v] >= 0 ? 1 : 0;
  double value = 0;
  for (int a = out_first_[kSource]; a >= 0; a = out_next_[a]) value += flow_[a];
  if (value >= kInfiniteCapacity / 2) std::fill(flow_.begin(), flow_.end(), 0.0);  // do not warm-start from it
  return value + constant;
}

double MinCut::SolveWithLemonPreflow(std::vector<char>& source_side) {
  if (!finalized_) Finalize();
  double constant = FoldLowerBounds();
  using Graph = lemon::SmartDigraph;
  Graph g;
  g.reserveNode(num_nodes_);
  for (int i = 0; i < num_nodes_; ++i) g.addNode();
  Graph::ArcMap<double> cap(g);
  for (size_t a = 0; a < from_.size(); ++a) cap[g.addArc(g.nodeFromId(from_[a]), g.nodeFromId(to_[a]))] = cap_[a];
  lemon::Preflow<Graph, Graph::ArcMap<double>> flow(g, cap, g.nodeFromId(kSource), g.nodeFromId(kSink));
  flow.tolerance(lemon::Tolerance<double>(1e-12));
  flow.runMinCut();
  source_side.assign(num_nodes_, 0);
  for (int v = 0; v < num_nodes_; ++v) source_side[v] = flow.minCut(g.nodeFromId(v)) ? 1 : 0;
  return flow.flowValue() + constant;
}

}  // namespace perseus::optimizer
