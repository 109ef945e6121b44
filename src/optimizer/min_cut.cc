// Min cut with lower bounds: dynamic Boykov-Kolmogorov search trees, and
// LEMON's Preflow from scratch as the reference.
#include "optimizer/min_cut.h"

#include <lemon/preflow.h>
#include <lemon/smart_graph.h>

#include <algorithm>
#include <climits>
#include <cmath>

namespace perseus::optimizer {
namespace {
// Residual capacities at or below kEps count as zero, and so do residuals
// within kResidualRelativeEps (min_cut.h) of the magnitudes they were computed from (an arc's
// capacity, a node's terminal terms): those are rounding, and an augmenting
// path carrying only rounding would change nothing, forever.
constexpr double kEps = 1e-9;
}  // namespace

MinCut::MinCut(int num_nodes, Engine engine) : num_nodes_(num_nodes), engine_(engine) {}

int MinCut::AddArc(int from, int to) {
  from_.push_back(from);
  to_.push_back(to);
  lower_.push_back(0);
  upper_.push_back(0);
  return static_cast<int>(from_.size()) - 1;
}

bool MinCut::IsTerminalArc(int arc) const { return from_[arc] == kSource || to_[arc] == kSink; }

void MinCut::ChangeBounds(int arc, double lower, double upper) {
  const double old_lower = lower_[arc];
  lower_[arc] = lower;
  upper_[arc] = upper;
  if (!finalized_ || !trees_valid_) return;  // the next solve starts afresh
  auto mark_node = [this](int v) {
    if (v != kSource && v != kSink && !node_marked_[v]) node_marked_[v] = 1, marked_nodes_.push_back(v);
  };
  if (IsTerminalArc(arc)) {
    mark_node(from_[arc] == kSource ? to_[arc] : from_[arc]);
    return;
  }
  cap_[arc] = upper >= kInfiniteCapacity ? kInfiniteCapacity : upper - lower;
  // Flow the arc can no longer carry stays where it is, as terminal capacity.
  if (flow_[arc] > cap_[arc] || lower != old_lower) {
    flow_[arc] = std::min(flow_[arc], cap_[arc]);
    mark_node(from_[arc]);
    mark_node(to_[arc]);
  }
  if (!arc_marked_[arc]) arc_marked_[arc] = 1, marked_arcs_.push_back(arc);
}

void MinCut::Finalize() {
  const int m = static_cast<int>(from_.size());
  adj_start_.assign(num_nodes_ + 1, 0);
  terminal_start_.assign(num_nodes_ + 1, 0);
  auto inner = [](int v) { return v != kSource && v != kSink; };
  for (int a = 0; a < m; ++a) {
    if (IsTerminalArc(a)) {
      int v = from_[a] == kSource ? to_[a] : from_[a];
      if (inner(v)) ++terminal_start_[v + 1];
    } else {
      ++adj_start_[from_[a] + 1], ++adj_start_[to_[a] + 1];
    }
  }
  for (int v = 0; v < num_nodes_; ++v) adj_start_[v + 1] += adj_start_[v], terminal_start_[v + 1] += terminal_start_[v];
  adj_.resize(adj_start_[num_nodes_]);
  adj_head_.resize(adj_start_[num_nodes_]);
  terminal_.resize(terminal_start_[num_nodes_]);
  std::vector<int> adj_fill(adj_start_.begin(), adj_start_.end() - 1);
  std::vector<int> terminal_fill(terminal_start_.begin(), terminal_start_.end() - 1);
  for (int a = 0; a < m; ++a) {
    if (IsTerminalArc(a)) {
      int v = from_[a] == kSource ? to_[a] : from_[a];
      if (inner(v)) terminal_[terminal_fill[v]++] = a;
    } else {
      adj_head_[adj_fill[from_[a]]] = to_[a];
      adj_[adj_fill[from_[a]]++] = 2 * a;
      adj_head_[adj_fill[to_[a]]] = from_[a];
      adj_[adj_fill[to_[a]]++] = 2 * a + 1;
    }
  }
  cap_.assign(m, 0);
  flow_.assign(m, 0);
  tree_.assign(num_nodes_, kFree);
  active_.assign(num_nodes_, 0);
  node_marked_.assign(num_nodes_, 0);
  arc_marked_.assign(m, 0);
  parent_.assign(num_nodes_, kNoLink);
  stamp_.assign(num_nodes_, 0);
  dist_.assign(num_nodes_, 0);
  finalized_ = true;
}

void MinCut::PushOut(int entry, double amount) { flow_[entry >> 1] += (entry & 1) ? -amount : amount; }

double MinCut::Terminal(int v, bool* both_infinite) const {
  double net = 0, magnitude = 0;
  bool from_source = false, to_sink = false;
  for (int k = terminal_start_[v]; k < terminal_start_[v + 1]; ++k) {
    const int a = terminal_[k];
    const bool infinite = upper_[a] >= kInfiniteCapacity;
    if (from_[a] == kSource) {
      from_source |= infinite;
      if (!infinite) net += upper_[a];
    } else {
      to_sink |= infinite;
      if (!infinite) net -= upper_[a];
    }
    if (!infinite) magnitude += upper_[a];
  }
  for (int k = adj_start_[v]; k < adj_start_[v + 1]; ++k) {
    const int e = adj_[k], a = e >> 1;
    net += (e & 1) ? lower_[a] + flow_[a] : -(lower_[a] + flow_[a]);
    magnitude += lower_[a] + flow_[a];
  }
  if (both_infinite) *both_infinite = from_source && to_sink;
  if (from_source) return kInfiniteCapacity;
  if (to_sink) return -kInfiniteCapacity;
  return std::abs(net) <= kResidualRelativeEps * magnitude ? 0 : net;
}

bool MinCut::LinkValid(int v) const {
  if (parent_[v] == kTerminalLink) return Terminal(v) * static_cast<int>(tree_[v]) > kEps;
  return parent_[v] >= 0 && LinkResidual(static_cast<Tree>(tree_[v]), parent_[v]) > kEps;
}

void MinCut::Activate(int v) {
  if (!active_[v]) active_[v] = 1, active_queue_.push_back(v);
}

void MinCut::MakeOrphan(int v) {
  if (parent_[v] == kOrphanLink) return;
  parent_[v] = kOrphanLink;
  orphans_.push_back(v);
}

void MinCut::MakeRoot(int v, Tree tree) {
  tree_[v] = tree;
  parent_[v] = kTerminalLink;
  stamp_[v] = time_;
  dist_[v] = 1;
  Activate(v);
}

void MinCut::MoveToOtherTree(int v) {
  // Its children lose their parent; neighbours in its old tree may now have
  // residual capacity into the other tree, so they must look again.
  for (int k = adj_start_[v]; k < adj_start_[v + 1]; ++k) {
    const int q = adj_head_[k];
    if (tree_[q] != tree_[v]) continue;
    if (parent_[q] >= 0 && Head(parent_[q]) == v) MakeOrphan(q);
    Activate(q);
  }
  MakeRoot(v, static_cast<Tree>(-tree_[v]));
}

void MinCut::StartTrees() {
  for (size_t a = 0; a < from_.size(); ++a) {
    cap_[a] = upper_[a] >= kInfiniteCapacity ? kInfiniteCapacity : upper_[a] - lower_[a];
    flow_[a] = 0;
  }
  std::fill(tree_.begin(), tree_.end(), kFree);
  std::fill(parent_.begin(), parent_.end(), kNoLink);
  std::fill(active_.begin(), active_.end(), 0);
  std::fill(node_marked_.begin(), node_marked_.end(), 0);
  std::fill(arc_marked_.begin(), arc_marked_.end(), 0);
  active_queue_.clear(), orphans_.clear(), marked_nodes_.clear(), marked_arcs_.clear();
  active_head_ = orphan_head_ = 0;
  for (int v = 2; v < num_nodes_; ++v) marked_nodes_.push_back(v), node_marked_[v] = 1;
  trees_valid_ = true;
}

void MinCut::HandleTerminalChange(int v, double net) {
  if (parent_[v] == kOrphanLink) return;  // adoption looks at its terminal anyway
  const Tree want = net > kEps ? kSourceTree : net < -kEps ? kSinkTree : kFree;
  if (tree_[v] == kFree) {
    if (want != kFree) MakeRoot(v, want);
  } else if (want == tree_[v]) {
    if (parent_[v] != kTerminalLink) parent_[v] = kTerminalLink, stamp_[v] = time_, dist_[v] = 1;
    Activate(v);
  } else if (want == kFree) {
    if (parent_[v] == kTerminalLink) MakeOrphan(v);
  } else {
    MoveToOtherTree(v);
  }
}

bool MinCut::RepairChanges() {
  for (int a : marked_arcs_) {
    arc_marked_[a] = 0;
    for (int v : {from_[a], to_[a]}) {
      if (tree_[v] == kFree) continue;
      if (parent_[v] >= 0 && (parent_[v] >> 1) == a && !LinkValid(v)) MakeOrphan(v);
      Activate(v);  // the arc may have gained residual capacity
    }
  }
  marked_arcs_.clear();
  bool infinite = false;
  for (int v : marked_nodes_) {
    node_marked_[v] = 0;
    bool both = false;
    const double net = Terminal(v, &both);
    infinite |= both;
    if (!infinite) HandleTerminalChange(v, net);
  }
  marked_nodes_.clear();
  if (infinite) return false;
  AdoptOrphans();
  return true;
}

void MinCut::Adopt(int v) {
  const Tree tree = static_cast<Tree>(tree_[v]);
  const double net = Terminal(v) * static_cast<int>(tree);
  if (net > kEps) {
    parent_[v] = kTerminalLink, stamp_[v] = time_, dist_[v] = 1;
    return;
  }
  if (net < -kEps) {
    MoveToOtherTree(v);
    return;
  }
  // A new parent in the same tree whose path to the terminal avoids orphans,
  // as close to the terminal as possible (stamps cache verified distances).
  int best = -1, best_dist = INT_MAX;
  for (int k = adj_start_[v]; k < adj_start_[v + 1]; ++k) {
    const int e = adj_[k], q = adj_head_[k];
    if (tree_[q] != tree || LinkResidual(tree, e) <= kEps) continue;
    int d = 0, j = q;
    for (;;) {
      if (stamp_[j] == time_) {
        d += dist_[j];
        break;
      }
      const int link = parent_[j];
      ++d;
      if (link == kTerminalLink) {
        stamp_[j] = time_, dist_[j] = 1;
        break;
      }
      if (link < 0) {
        d = INT_MAX;
        break;
      }
      j = Head(link);
    }
    if (d == INT_MAX) continue;
    if (d < best_dist) best = e, best_dist = d;
    for (j = q; stamp_[j] != time_; j = Head(parent_[j])) stamp_[j] = time_, dist_[j] = d--;
  }
  if (best >= 0) {
    parent_[v] = best, stamp_[v] = time_, dist_[v] = best_dist + 1;
    return;
  }
  for (int k = adj_start_[v]; k < adj_start_[v + 1]; ++k) {
    const int e = adj_[k], q = adj_head_[k];
    if (tree_[q] != tree) continue;
    if (LinkResidual(tree, e) > kEps) Activate(q);
    if (parent_[q] >= 0 && Head(parent_[q]) == v) MakeOrphan(q);
  }
  tree_[v] = kFree;
  parent_[v] = kNoLink;
}

void MinCut::AdoptOrphans() {
  ++time_;
  while (orphan_head_ < orphans_.size()) {
    const int v = orphans_[orphan_head_++];
    if (parent_[v] == kOrphanLink) Adopt(v);
  }
  orphans_.clear();
  orphan_head_ = 0;
}

bool MinCut::Augment(int tail, int entry) {
  double amount = ResidualOut(entry);
  int x = tail;
  for (; parent_[x] != kTerminalLink; x = Head(parent_[x])) amount = std::min(amount, ResidualIn(parent_[x]));
  amount = std::min(amount, Terminal(x));
  for (x = Head(entry); parent_[x] != kTerminalLink; x = Head(parent_[x])) amount = std::min(amount, ResidualOut(parent_[x]));
  amount = std::min(amount, -Terminal(x));
  if (amount >= kInfiniteCapacity / 2) return false;
  PushOut(entry, amount);
  for (x = tail; parent_[x] != kTerminalLink;) {
    const int link = parent_[x], next = Head(link);
    PushOut(link ^ 1, amount);
    if (ResidualIn(link) <= kEps) MakeOrphan(x);
    x = next;
  }
  if (Terminal(x) <= kEps) MakeOrphan(x);
  for (x = Head(entry); parent_[x] != kTerminalLink;) {
    const int link = parent_[x], next = Head(link);
    PushOut(link, amount);
    if (ResidualOut(link) <= kEps) MakeOrphan(x);
    x = next;
  }
  if (Terminal(x) >= -kEps) MakeOrphan(x);
  return true;
}

MinCut::FlowOutcome MinCut::MaxFlow() {
  // Grow the trees from active nodes until they touch, push flow along the
  // path found, re-home the orphans it leaves; done when nothing is active.
  // The augmentation budget is a safety net: far more than any solve needs.
  const long budget = 100L * (num_nodes_ + static_cast<long>(from_.size())) + 1'000'000;
  long augmentations = 0;
  int current = -1;
  for (;;) {
    int p = current;
    if (p < 0 || tree_[p] == kFree || parent_[p] == kOrphanLink) {
      p = -1;
      while (active_head_ < active_queue_.size()) {
        const int v = active_queue_[active_head_++];
        active_[v] = 0;
        if (tree_[v] != kFree) {
          p = v;
          break;
        }
      }
      if (p < 0) break;
    }
    const Tree tree = static_cast<Tree>(tree_[p]);
    int meet = -1;
    for (int k = adj_start_[p]; k < adj_start_[p + 1]; ++k) {
      const int e = adj_[k], q = adj_head_[k];
      if (LinkResidual(tree, e ^ 1) <= kEps) continue;
      if (tree_[q] == kFree) {
        tree_[q] = tree, parent_[q] = e ^ 1, stamp_[q] = stamp_[p], dist_[q] = dist_[p] + 1;
        Activate(q);
      } else if (tree_[q] != tree) {
        meet = e;
        break;
      }
    }
    if (meet < 0) {
      current = -1;
      continue;
    }
    const bool ok = tree == kSourceTree ? Augment(p, meet) : Augment(Head(meet), meet ^ 1);
    if (!ok) return FlowOutcome::kUnbounded;
    if (++augmentations > budget) return FlowOutcome::kStalled;
    AdoptOrphans();
    current = p;
  }
  active_queue_.clear();
  active_head_ = 0;
  return FlowOutcome::kMaximum;
}

double MinCut::CutValue(const std::vector<char>& source_side) const {
  double value = 0;
  for (size_t a = 0; a < from_.size(); ++a) {
    const bool tail_in = source_side[from_[a]], head_in = source_side[to_[a]];
    if (tail_in && !head_in) {
      if (upper_[a] >= kInfiniteCapacity) return kInfiniteCapacity;
      value += upper_[a];
    } else if (!tail_in && head_in) {
      value -= lower_[a];
    }
  }
  return value;
}

double MinCut::Solve(std::vector<char>& source_side) {
  return engine_ == Engine::kDynamicTrees ? SolveDynamic(source_side) : SolveWithLemonPreflow(source_side);
}

bool MinCut::FindCut(std::vector<char>& source_side) {
  if (engine_ == Engine::kLemonPreflow) return SolveWithLemonPreflow(source_side) < kInfiniteCapacity / 2;
  double fallback_value = 0;
  return DynamicSide(source_side, &fallback_value);
}

double MinCut::SolveDynamic(std::vector<char>& source_side) {
  double fallback_value = -1;
  if (!DynamicSide(source_side, &fallback_value)) return kInfiniteCapacity;
  return fallback_value >= 0 ? fallback_value : CutValue(source_side);
}

bool MinCut::DynamicSide(std::vector<char>& source_side, double* fallback_value) {
  if (!finalized_) Finalize();
  if (!trees_valid_) StartTrees();
  const FlowOutcome outcome = RepairChanges() ? MaxFlow() : FlowOutcome::kUnbounded;
  if (outcome == FlowOutcome::kStalled) {
    trees_valid_ = false;  // start afresh next time; this once, solve from scratch
    *fallback_value = SolveWithLemonPreflow(source_side);
    return *fallback_value < kInfiniteCapacity / 2;
  }
  source_side.assign(num_nodes_, 0);
  source_side[kSource] = 1;
  if (outcome == FlowOutcome::kUnbounded) {
    trees_valid_ = false;
    return false;
  }
  // A maximum flow is finite, and no uncapacitated arc leaves the source
  // tree (its residual is unbounded): the cut's value is finite.
  for (int v = 2; v < num_nodes_; ++v) source_side[v] = tree_[v] == kSourceTree;
  return true;
}

double MinCut::SolveWithLemonPreflow(std::vector<char>& source_side) {
  // The textbook reduction: inner arcs carry upper - lower, and each node's
  // lower-bound balance becomes an arc to the sink or from the source.
  using Graph = lemon::SmartDigraph;
  Graph g;
  g.reserveNode(num_nodes_);
  for (int i = 0; i < num_nodes_; ++i) g.addNode();
  Graph::ArcMap<double> cap(g);
  std::vector<double> balance(num_nodes_, 0.0);
  double constant = 0;
  auto add = [&](int from, int to, double c) { cap[g.addArc(g.nodeFromId(from), g.nodeFromId(to))] = c; };
  for (size_t a = 0; a < from_.size(); ++a) {
    const double upper = upper_[a] >= kInfiniteCapacity ? kInfiniteCapacity : upper_[a];
    if (IsTerminalArc(static_cast<int>(a))) {
      add(from_[a], to_[a], upper);
    } else {
      add(from_[a], to_[a], upper >= kInfiniteCapacity ? kInfiniteCapacity : upper - lower_[a]);
      balance[from_[a]] += lower_[a];
      balance[to_[a]] -= lower_[a];
    }
  }
  for (int v = 2; v < num_nodes_; ++v) {
    if (balance[v] > 0) add(v, kSink, balance[v]);
    if (balance[v] < 0) add(kSource, v, -balance[v]), constant += balance[v];
  }
  lemon::Preflow<Graph, Graph::ArcMap<double>> flow(g, cap, g.nodeFromId(kSource), g.nodeFromId(kSink));
  flow.tolerance(lemon::Tolerance<double>(1e-12));
  flow.runMinCut();
  source_side.assign(num_nodes_, 0);
  for (int v = 0; v < num_nodes_; ++v) source_side[v] = flow.minCut(g.nodeFromId(v)) ? 1 : 0;
  return flow.flowValue() + constant;
}

}  // namespace perseus::optimizer
