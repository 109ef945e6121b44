// Energy-counter period and clock settle time from polled samples.
#include "cli/doctor_estimates.h"

#include <algorithm>
#include <cstdio>
#include <string>

#include "common/stats.h"

namespace perseus::cli {

Result<CounterEstimate> EstimateCounter(const std::vector<EnergySample>& samples) {
  if (samples.size() < 2) {
    return Status::InvalidArgument("need at least 2 energy readings, got " + std::to_string(samples.size()));
  }
  CounterEstimate e;
  e.samples = static_cast<int>(samples.size());
  std::vector<double> polls, change_times, steps;
  for (size_t i = 1; i < samples.size(); ++i) {
    const EnergySample& prev = samples[i - 1];
    const EnergySample& cur = samples[i];
    if (!(cur.time_s > prev.time_s)) {
      return Status::InvalidArgument("energy readings must be in increasing time order (reading " +
                                     std::to_string(i) + ")");
    }
    if (cur.energy_j < prev.energy_j) {
      char msg[160];
      std::snprintf(msg, sizeof(msg), "the energy counter went backwards: %.3f J at %.3f s after %.3f J",
                    cur.energy_j, cur.time_s - samples.front().time_s, prev.energy_j);
      return Status::InvalidArgument(msg);
    }
    polls.push_back(cur.time_s - prev.time_s);
    if (cur.energy_j > prev.energy_j) {
      change_times.push_back(cur.time_s);
      steps.push_back(cur.energy_j - prev.energy_j);
    }
  }
  e.median_poll_s = Median(polls);
  e.changes = static_cast<int>(change_times.size());
  if (!steps.empty()) e.resolution_j = *std::min_element(steps.begin(), steps.end());
  if (change_times.size() < 2) return e;

  std::vector<double> periods;
  for (size_t i = 1; i < change_times.size(); ++i) periods.push_back(change_times[i] - change_times[i - 1]);
  e.intervals = static_cast<int>(periods.size());
  e.median_period_s = Median(periods);
  e.min_period_s = *std::min_element(periods.begin(), periods.end());
  e.max_period_s = *std::max_element(periods.begin(), periods.end());
  double energy_j = 0;
  for (size_t i = 1; i < steps.size(); ++i) energy_j += steps[i];  // the energy after the first change
  e.mean_power_w = energy_j / (change_times.back() - change_times.front());
  e.continuous = e.median_period_s <= 1.5 * e.median_poll_s;
  return e;
}

std::optional<double> FindClockSettleTime(const std::vector<ClockSample>& samples, double start_s, int target_mhz) {
  for (const ClockSample& s : samples) {
    if (s.time_s >= start_s && s.sm_clock_mhz == target_mhz) return s.time_s - start_s;
  }
  return std::nullopt;
}

}  // namespace perseus::cli
