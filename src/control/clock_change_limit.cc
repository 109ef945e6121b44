#include "control/clock_change_limit.h"

#include <algorithm>
#include <cmath>

namespace perseus::control {

bool IsSlowClockSwitch(double latency_s, double mean_computation_s) {
  return latency_s > std::max(kSlowClockSwitchS, 0.25 * mean_computation_s);
}

int ClockChangeLimit(int spec_limit, double clock_switch_latency_s, double all_max_time_s) {
  if (spec_limit >= 0 || !(clock_switch_latency_s > kSlowClockSwitchS) || !(all_max_time_s > 0)) return spec_limit;
  const double changes = kSwitchTimeShare * all_max_time_s / clock_switch_latency_s;
  return static_cast<int>(std::clamp(std::floor(changes), 1.0, 1e6));
}

}  // namespace perseus::control
