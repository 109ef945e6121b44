// The arithmetic behind `perseus doctor`'s timing checks, kept apart from the
// GPU so it can be tested on synthetic samples: the energy counter's update
// period and resolution from a series of polled readings, and how long a
// clock change took to show in the achieved clock.
// Thread safety: pure functions.
#pragma once

#include <optional>
#include <vector>

#include "perseus/status.h"

namespace perseus::cli {

// One reading of the energy counter, at `time_s` on any steady clock.
struct EnergySample {
  double time_s = 0;
  double energy_j = 0;
};

// What a series of energy readings says about the counter.
struct CounterEstimate {
  int samples = 0;
  int changes = 0;               // readings whose value differs from the previous one
  double median_poll_s = 0;      // median time between consecutive readings
  // Intervals between consecutive changes (changes - 1 of them); 0 when fewer than 2.
  int intervals = 0;
  double median_period_s = 0;
  double min_period_s = 0;
  double max_period_s = 0;
  double resolution_j = 0;       // smallest nonzero change; 0 when none
  // Energy between the first and the last change over the time between them;
  // 0 when fewer than 2 changes.
  double mean_power_w = 0;
  // The counter changed on (nearly) every reading: its period is no longer
  // than the polling interval, so only an upper bound is known.
  bool continuous = false;
};

// REQUIRES: samples in time order. kInvalidArgument when there are fewer than
// 2 samples, times do not increase, or the counter decreases ("the energy
// counter went backwards: 12.5 J at 0.310 s after 13.0 J").
// A change is dated at the reading that first shows it, so each period is
// known to about one polling interval; the median over many is much better.
Result<CounterEstimate> EstimateCounter(const std::vector<EnergySample>& samples);

// One reading of the achieved SM clock.
struct ClockSample {
  double time_s = 0;
  int sm_clock_mhz = 0;
};

// Seconds from `start_s` (the lock call) to the first reading at or after it
// that shows `target_mhz`; nullopt when none does.
std::optional<double> FindClockSettleTime(const std::vector<ClockSample>& samples, double start_s, int target_mhz);

}  // namespace perseus::cli
