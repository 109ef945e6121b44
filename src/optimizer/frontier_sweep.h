// The iteration-time sweep: the Phillips-Dessouky method run exactly on the
// continuous convex relaxation, with real-valued durations (no time
// quantisation, no curve fitting).
//
// Each step takes the critical subgraph, finds with one min cut the cheapest
// way to shorten every critical path (shortening forward-cut computations,
// lengthening backward-cut ones), and moves as far as that cut stays optimal:
// to the next breakpoint of a moved computation's cost curve, or until a
// non-critical path becomes critical. Within a step the relaxation's optimum
// moves linearly. The sweep keeps every step's changes (its trajectory), so
// SweepReplay can reconstruct the optimum at any time it passed.
// Not thread-safe.
#pragma once

#include <cstddef>
#include <vector>

#include "optimizer/critical_path.h"
#include "optimizer/min_cut.h"
#include "optimizer/node_costs.h"
#include "perseus/problem.h"

namespace perseus::optimizer {

class FrontierSweep {
 public:
  // Starts with every computation at its cheapest hull vertex (time T*).
  FrontierSweep(const Problem& problem, const std::vector<NodeCosts>& costs,
                MinCut::Engine engine = MinCut::Engine::kDynamicTrees);

  // Shortens the iteration; returns false once no critical path can shrink.
  bool Step();

  // Off: every step builds its cut network afresh (the reference the tests
  // and bench/optimizer_bench.cc compare with). On by default.
  void set_reuse_networks(bool on) { reuse_networks_ = on; }
  // Steps that reused the last step's network.
  int reused_networks() const { return reused_networks_; }

  const std::vector<double>& durations_s() const { return duration_s_; }
  double time_s() const { return time_s_; }
  // Cost (sum of hull costs, J) of the relaxation's optimum at time_s().
  double relaxation_cost_j() const { return relaxation_cost_j_; }
  int steps() const { return static_cast<int>(step_times_s_.size()) - 1; }

  // The trajectory: step k ran from step_times_s()[k] down to
  // step_times_s()[k + 1] and changed the durations listed in
  // changes()[step_first_change()[k] .. step_first_change()[k + 1]).
  struct Change {
    int node;
    double duration_before_s;
  };
  const std::vector<double>& step_times_s() const { return step_times_s_; }
  const std::vector<std::size_t>& step_first_change() const { return step_first_change_; }
  const std::vector<Change>& changes() const { return changes_; }

 private:
  static int Start(int node) { return 2 + 2 * node; }  // start event; finish is +1
  void BuildCutNetwork(double tolerance_s);
  // Computation i's arc in the network: its lengthen and shorten rates.
  void SetComputationBounds(int i);
  enum class Outcome { kTaken, kRetry, kDone };
  // One try at a step: on the cut network built afresh with critical-path
  // tolerance `tolerance_s`, or (!rebuild) on the last one with the moved
  // computations' rates updated. kRetry: the step found was too small to
  // trust; kDone: no cut shortens the iteration.
  Outcome TryStep(double tolerance_s, bool rebuild);
  void RefreshRates(int node);
  // Fills direction_ from the cut (-1 shorten, +1 lengthen); false if nothing shortens.
  bool ReadCut();
  double BreakpointLimit() const;
  // Largest step <= max_step_s after which no path exceeds time_s_ - step.
  // Leaves in trial_start_ the earliest starts after a step of
  // trial_step_s_ (the last step it tried), and trial_longest_s_ the time;
  // for that trial, trial_least_slack_s_ and trial_crosses_back_ (see
  // critical_set_current_).
  double PathLimit(double max_step_s);
  // The predecessor on a longest path to v in PathLimit's trial of `step`
  // (-1: none), found again when asked rather than kept for every node.
  int TrialPred(int v, double step) const;

  const Problem& problem_;
  const Dag dag_;
  const std::vector<NodeCosts>& costs_;
  std::vector<double> duration_s_;
  double time_s_ = 0;
  double relaxation_cost_j_ = 0;
  // Scratch reused across steps.
  std::vector<double> earliest_start_, latest_finish_, trial_, trial_start_;
  double trial_step_s_ = -1, trial_longest_s_ = 0;
  // The cut network has a start and a finish event per computation (ids
  // 2+2i and 3+2i, a topological order) and fixed arcs whose bounds each
  // step sets: arc i is computation i; then one per dependency, then one from
  // the source per first computation and one to the sink per last one.
  struct DependencyArc {
    int from, to, arc;
  };
  std::vector<DependencyArc> dependency_arcs_;
  std::vector<std::pair<int, int>> source_arcs_, sink_arcs_;  // (node, arc)
  std::vector<char> critical_flag_;
  std::vector<int> critical_, moved_;
  std::vector<signed char> direction_;
  std::vector<double> shorten_rate_, lengthen_rate_;  // at duration_s_, refreshed for moved nodes
  std::vector<char> source_side_;
  // Most steps end at a moved computation's hull vertex and leave the
  // critical subgraph as it was (97% at 8 x 96); the next step then reuses
  // the network, with the moved computations' new rates, instead of
  // building it afresh (TryStep says when that is exact). For that check,
  // from the last build: each computation's latest start, how far latest
  // starts may have fallen since (an upper bound), each dependency's place
  // (in dependency_arcs_ order), and the critical last computations whose
  // arc to the sink is not tight.
  enum DependencyKind : signed char { kOffNetwork, kLooseDependency, kTightDependency };
  bool reuse_networks_ = true;
  int reused_networks_ = 0;
  bool critical_set_current_ = false;
  bool network_tolerance_first_ = false;  // the last build used the first tolerance
  std::vector<double> latest_start_;
  double latest_start_drop_s_ = 0;
  std::vector<DependencyKind> dependency_kind_;
  std::vector<int> loose_sinks_;
  // For PathLimit's last trial: the least of (latest start - earliest
  // start) over computations off the network and (latest start of v -
  // finish of u) over loose dependencies u -> v between network
  // computations, latest starts as built; and whether a tight dependency
  // crosses the cut backward.
  double trial_least_slack_s_ = 0;
  bool trial_crosses_back_ = false;
  MinCut cut_;
  std::vector<double> step_times_s_;
  std::vector<std::size_t> step_first_change_;
  std::vector<Change> changes_;
};

}  // namespace perseus::optimizer
