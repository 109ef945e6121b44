// Walks a finished FrontierSweep's trajectory backwards, from its fastest
// time toward its slowest, and reconstructs the relaxation's optimal
// durations at any time in between (linear within a step). Replaying in this
// direction lets the caller stop as soon as slower plans cannot matter.
// Not thread-safe.
#pragma once

#include <vector>

#include "optimizer/frontier_sweep.h"

namespace perseus::optimizer {

class SweepReplay {
 public:
  // `sweep` must outlive the replay and not step any more.
  explicit SweepReplay(const FrontierSweep& sweep);

  // REQUIRES: time_s >= the previous call's time_s (if any). Times past the
  // sweep's slowest give its starting durations.
  void DurationsAt(double time_s, std::vector<double>& out);

 private:
  const FrontierSweep& sweep_;
  std::vector<double> duration_s_;  // after step `step_` (before it once undone)
  int step_;                        // the step being interpolated; -1: before the first
};

}  // namespace perseus::optimizer
