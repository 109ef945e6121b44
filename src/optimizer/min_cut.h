// Minimum s-t cut in a network whose arcs have lower and upper capacities,
// the step of the Phillips-Dessouky method: the value of a cut X is
//     sum of upper(a) over arcs leaving X - sum of lower(a) over arcs entering X.
//
// The network's arcs are fixed; only their bounds change between solves, as
// they do between steps of the sweep, and usually only a few of them. The
// default engine is therefore dynamic: a Boykov-Kolmogorov max flow whose
// search trees and flow survive from one solve to the next (Kohli and Torr's
// dynamic graph cuts). Lower bounds and any flow an arc can no longer carry
// are folded into each node's net terminal capacity
//     (source arcs' upper) - (sink arcs' upper) + (lower + flow in) - (lower + flow out),
// positive: residual capacity from the source, negative: to the sink. Any
// flow within the arcs' capacities is then a valid starting point, so a solve
// only repairs the trees around the arcs and nodes whose bounds changed.
// SolveWithLemonPreflow() solves the same cut from scratch with LEMON's
// push-relabel; bench/optimizer_bench.cc compares the two and the tests use
// it as a cross-check.
// REQUIRES: no arc enters the source (node 0) or leaves the sink (node 1).
// Not thread-safe.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace perseus::optimizer {

inline constexpr double kInfiniteCapacity = 1e20;
// Residual capacities within this fraction of the magnitudes they were
// computed from count as zero (min_cut.cc).
inline constexpr double kResidualRelativeEps = 1e-12;

class MinCut {
 public:
  static constexpr int kSource = 0;
  static constexpr int kSink = 1;

  enum class Engine { kDynamicTrees, kLemonPreflow };
  explicit MinCut(int num_nodes, Engine engine = Engine::kDynamicTrees);
  // Adds an arc with bounds [0, 0]; returns its id. Only before the first Solve.
  int AddArc(int from, int to);
  // REQUIRES: 0 <= lower <= upper (upper may be kInfiniteCapacity).
  // Inline: the sweep sets every arc's bounds at every step, and most are
  // unchanged.
  void SetBounds(int arc, double lower, double upper) {
    if (lower_[arc] != lower || upper_[arc] != upper) ChangeBounds(arc, lower, upper);
  }

  // Returns the minimum cut value (>= kInfiniteCapacity/2: no finite cut) and
  // marks its source side in `source_side`: for the dynamic engine, the nodes
  // the source reaches in the residual network, the smallest minimum cut
  // (Preflow's side may be another minimum cut). Uses the engine chosen at
  // construction; the two named variants force one. Should the dynamic engine
  // ever exceed its augmentation budget (a safety net against numerical
  // livelock), that solve falls back to Preflow and the next starts afresh.
  double Solve(std::vector<char>& source_side);
  // The same cut's source side, without its value: false if no finite cut
  // exists. Saves the pass over every arc that the value costs, which the
  // sweep, solving once per step, does not need.
  bool FindCut(std::vector<char>& source_side);
  double SolveDynamic(std::vector<char>& source_side);
  double SolveWithLemonPreflow(std::vector<char>& source_side);

 private:
  enum Tree : signed char { kFree = 0, kSourceTree = 1, kSinkTree = -1 };
  static constexpr int kTerminalLink = -1;  // parent_ of a tree's root
  static constexpr int kOrphanLink = -2;    // parent_ of a node awaiting adoption
  static constexpr int kNoLink = -3;        // parent_ of a free node

  void ChangeBounds(int arc, double lower, double upper);
  void Finalize();
  // The dynamic engine's cut side; false if no finite cut exists. Sets
  // `fallback_value` when Preflow solved it (and so gave the value).
  bool DynamicSide(std::vector<char>& source_side, double* fallback_value);
  bool IsTerminalArc(int arc) const;
  double CutValue(const std::vector<char>& source_side) const;
  void StartTrees();
  bool RepairChanges();  // false: some node links source and sink without bound
  enum class FlowOutcome { kMaximum, kUnbounded, kStalled };
  FlowOutcome MaxFlow();

  // Adjacency entries: 2a is arc a seen from its tail, 2a+1 from its head.
  int Head(int entry) const { return (entry & 1) ? from_[entry >> 1] : to_[entry >> 1]; }
  // Inline: the search trees ask at every arc they look at.
  double Residual(int arc, bool forward) const {
    const double r = forward ? cap_[arc] - flow_[arc] : flow_[arc];
    const double scale = cap_[arc] < kInfiniteCapacity ? cap_[arc] : flow_[arc];
    return r <= kResidualRelativeEps * scale ? 0 : r;
  }
  // Along the entry, away from its owner / toward its owner.
  double ResidualOut(int entry) const { return Residual(entry >> 1, !(entry & 1)); }
  double ResidualIn(int entry) const { return Residual(entry >> 1, entry & 1); }
  // Residual capacity a tree link needs: from parent to child in the source
  // tree, child to parent in the sink tree; `entry` is in the child's list.
  double LinkResidual(Tree tree, int entry) const {
    return tree == kSourceTree ? ResidualIn(entry) : ResidualOut(entry);
  }
  void PushOut(int entry, double amount);
  // Net terminal capacity of node v (see the file comment), +-kInfiniteCapacity
  // for an uncapacitated source or sink arc. Sets `both_infinite` if v has both.
  double Terminal(int v, bool* both_infinite = nullptr) const;
  bool LinkValid(int v) const;

  void Activate(int v);
  void MakeOrphan(int v);
  void MakeRoot(int v, Tree tree);
  // For a tree node now linked to the other terminal.
  void MoveToOtherTree(int v);
  void HandleTerminalChange(int v, double net);  // net: Terminal(v)
  void Adopt(int v);
  void AdoptOrphans();
  // Saturates a path source -> ... -> tail -entry-> head -> ... -> sink;
  // false if its capacity is unbounded.
  bool Augment(int tail, int entry);

  int num_nodes_;
  Engine engine_;
  bool finalized_ = false;
  bool trees_valid_ = false;  // false: start the next dynamic solve afresh
  std::vector<int> from_, to_;
  std::vector<double> lower_, upper_;
  std::vector<double> cap_, flow_;  // inner arcs: upper - lower (or infinite), and flow
  // Per node: inner arcs' entries and terminal arcs, in compressed rows.
  std::vector<int> adj_start_, adj_, terminal_start_, terminal_;
  std::vector<int> adj_head_;  // per adjacency entry, the node at its other end
  // Search trees.
  std::vector<signed char> tree_, active_, node_marked_, arc_marked_;
  std::vector<int> parent_, dist_;
  std::vector<int64_t> stamp_;  // adoption rounds; 64 bits so they never wrap
  std::vector<int> active_queue_, orphans_, marked_nodes_, marked_arcs_;
  std::size_t active_head_ = 0, orphan_head_ = 0;
  int64_t time_ = 0;
};

}  // namespace perseus::optimizer
