// Earliest starts and latest finishes of computations with continuous
// durations: the critical-path arithmetic the solver runs every step.
// (EvaluatePlan in evaluate.cc is the independent referee for final plans.)
#pragma once

#include <span>
#include <vector>

#include "perseus/problem.h"

namespace perseus::optimizer {

// A problem's dependencies in compressed rows. The passes below run at every
// step of the sweep and for every plan; a Problem keeps each node's
// neighbours in a vector of its own, scattered over memory.
class Dag {
 public:
  explicit Dag(const Problem& problem);
  int num_nodes() const { return static_cast<int>(succ_start_.size()) - 1; }
  std::span<const int> succs(int i) const { return Row(succ_start_, succ_, i); }
  std::span<const int> preds(int i) const { return Row(pred_start_, pred_, i); }
  // Dependencies are numbered in succs order: i -> succs(i)[k] is first_succ(i) + k.
  int first_succ(int i) const { return succ_start_[i]; }
  int num_dependencies() const { return static_cast<int>(succ_.size()); }

 private:
  static std::span<const int> Row(const std::vector<int>& start, const std::vector<int>& ids, int i) {
    return {ids.data() + start[i], ids.data() + start[i + 1]};
  }
  std::vector<int> succ_start_, succ_, pred_start_, pred_;
};

// Fills `earliest_start` and returns the longest path length.
double ForwardPass(const Dag& dag, const std::vector<double>& duration_s, std::vector<double>& earliest_start);
// Fills `latest_finish` for a given deadline.
void BackwardPass(const Dag& dag, const std::vector<double>& duration_s, double deadline_s,
                  std::vector<double>& latest_finish);

}  // namespace perseus::optimizer
