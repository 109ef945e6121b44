// Walks a sweep's trajectory backwards, from its fastest time toward its
// slowest, and reconstructs the relaxation's optimal durations at any time in
// between (linear within a step). Replaying in this direction lets the caller
// stop as soon as slower plans cannot matter. A replay reads either a
// finished sweep or a SweepStretch: a copy of the part of a running sweep's
// trajectory that some times need, which other threads may replay while the
// sweep goes on. Not thread-safe.
#pragma once

#include <cstddef>
#include <span>
#include <vector>

#include "optimizer/frontier_sweep.h"

namespace perseus::optimizer {

// The steps a sweep has taken since the last one that began above
// `max_time_s` (from its first if none did), and the durations after them:
// enough to replay every time from max_time_s down to where the sweep is.
// The replay at those times is the same, to the bit, as a finished sweep's.
struct SweepStretch {
  SweepStretch(const FrontierSweep& sweep, double max_time_s);

  std::vector<double> step_times_s;              // as FrontierSweep's, for these steps
  std::vector<std::size_t> step_first_change;    // into `changes`
  std::vector<FrontierSweep::Change> changes;
  std::vector<double> durations_s;               // after the last step
};

class SweepReplay {
 public:
  // `sweep` must outlive the replay and not step any more.
  explicit SweepReplay(const FrontierSweep& sweep);
  // REQUIRES: the replay's times <= the stretch's max_time_s; `stretch`
  // outlives the replay.
  explicit SweepReplay(const SweepStretch& stretch);

  // REQUIRES: time_s >= the previous call's time_s (if any). Times past the
  // sweep's slowest give its starting durations.
  void DurationsAt(double time_s, std::vector<double>& out);

 private:
  std::span<const double> step_times_s_;
  std::span<const std::size_t> step_first_change_;
  std::span<const FrontierSweep::Change> changes_;
  std::vector<double> duration_s_;  // after step `step_` (before it once undone)
  int step_;                        // the step being interpolated; -1: before the first
};

}  // namespace perseus::optimizer
