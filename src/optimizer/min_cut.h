// Minimum s-t cut in a network whose arcs have lower and upper capacities,
// the step of the Phillips-Dessouky method: the value of a cut X is
//     sum of upper(a) over arcs leaving X - sum of lower(a) over arcs entering X.
// Lower bounds are folded into node terms so one max flow solves it.
//
// Two max-flow engines: LEMON's Preflow (push-relabel) and a hand-written
// Dinic. bench/min_cut_bench.cc shows Preflow spends far longer on the sweep's
// networks (infinite-capacity precedence arcs make push-relabel shuttle excess
// back to the source; LEMON 1.3.1's EdmondsKarp header does not compile), so
// the sweep uses Dinic; Preflow stays as the cross-check in tests.
// Not thread-safe; reuse one instance to avoid reallocations.
#pragma once

#include <vector>

namespace perseus::optimizer {

inline constexpr double kInfiniteCapacity = 1e20;

class MinCut {
 public:
  enum class Algorithm { kDinic, kLemonPreflow };
  explicit MinCut(Algorithm algorithm = Algorithm::kDinic) : algorithm_(algorithm) {}

  // Starts a new network with nodes 0..num_nodes-1.
  void Reset(int num_nodes);
  // REQUIRES: 0 <= lower <= upper (upper may be kInfiniteCapacity).
  void AddArc(int from, int to, double lower, double upper);
  // Returns the minimum cut value (>= kInfiniteCapacity/2 means no finite cut)
  // and marks the source side in `source_side`.
  double Solve(int source, int sink, std::vector<char>& source_side);

 private:
  struct Arc {
    int from, to;
    double lower, upper;
  };
  // Capacities after folding lower bounds in; returns the constant term.
  double FoldLowerBounds(int source, int sink);
  double SolvePreflow(int source, int sink, std::vector<char>& source_side);
  double SolveDinic(int source, int sink, std::vector<char>& source_side);
  bool DinicLevels(int source, int sink);
  double DinicPush(int v, int sink, double limit);

  Algorithm algorithm_;
  int num_nodes_ = 0;
  std::vector<Arc> arcs_;
  std::vector<double> excess_;
  // Residual network in compressed adjacency form (Dinic).
  struct Edge {
    int to;
    double cap;
  };
  std::vector<int> from_, to_;        // folded arcs
  std::vector<double> cap_;
  std::vector<Edge> edges_;           // edge e and e^1 are a pair
  std::vector<int> first_, next_edge_, level_, cursor_, queue_;
};

}  // namespace perseus::optimizer
