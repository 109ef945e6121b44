// Minimum s-t cut in a network whose arcs have lower and upper capacities,
// the step of the Phillips-Dessouky method: the value of a cut X is
//     sum of upper(a) over arcs leaving X - sum of lower(a) over arcs entering X.
// Lower bounds are folded into node terms (an arc to the sink or from the
// source per node) so one max flow solves it.
//
// The network's arcs are fixed; only their bounds change between solves, as
// they do between steps of the sweep. Solve() therefore starts from the
// previous maximum flow: it trims flow that no longer fits (cancelling it back
// to the source or on to the sink along the acyclic flow) and augments from
// there (Dinic), so a step costs a few graph passes instead of a max flow from
// scratch. SolveWithLemonPreflow() solves the same cut from scratch with
// LEMON's push-relabel; bench/min_cut_bench.cc compares the two (LEMON 1.3.1's
// EdmondsKarp header does not compile) and the tests use it as a cross-check.
// REQUIRES: arcs go from lower to higher node id except into the sink (node 1)
// and out of the source (node 0), i.e. node ids are a topological order of the
// network with the source first and the sink last. Not thread-safe.
#pragma once

#include <vector>

namespace perseus::optimizer {

inline constexpr double kInfiniteCapacity = 1e20;

class MinCut {
 public:
  static constexpr int kSource = 0;
  static constexpr int kSink = 1;

  enum class Engine { kWarmDinic, kLemonPreflow };
  explicit MinCut(int num_nodes, Engine engine = Engine::kWarmDinic);
  // Adds an arc with bounds [0, 0]; returns its id. Only before the first Solve.
  int AddArc(int from, int to);
  // REQUIRES: 0 <= lower <= upper (upper may be kInfiniteCapacity).
  void SetBounds(int arc, double lower, double upper);

  // Returns the minimum cut value (>= kInfiniteCapacity/2: no finite cut) and
  // marks the source side in `source_side`, with the engine chosen at
  // construction; the two named variants force one.
  double Solve(std::vector<char>& source_side);
  double SolveWarm(std::vector<char>& source_side);
  double SolveWithLemonPreflow(std::vector<char>& source_side);

 private:
  void Finalize();
  double FoldLowerBounds();
  void TrimToCapacities();
  void Augment();
  void BuildResidualIndex();
  double Residual(int entry) const;
  int Head(int entry) const;
  bool BuildLevels(bool stop_at_sink);
  double Push(int v, double limit);
  int Order(int v) const;  // position of node v in topological order

  int num_nodes_;
  Engine engine_;
  bool finalized_ = false;
  // Arcs 0..num_user_arcs_-1 are the caller's; then per node one arc to the
  // sink and one from the source carry the folded lower bounds.
  int num_user_arcs_ = 0;
  std::vector<int> from_, to_;
  std::vector<double> lower_, upper_, cap_, flow_;
  std::vector<int> out_first_, out_next_, in_first_, in_next_;
  std::vector<double> balance_;
  std::vector<int> level_, queue_, cursor_;
  std::vector<int> adj_start_, adj_fill_, adj_;  // residual index (see BuildResidualIndex)
};

}  // namespace perseus::optimizer
