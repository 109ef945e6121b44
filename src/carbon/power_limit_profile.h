// Zeus power-limit profiles: the time and energy of one profiling window of a
// (data-parallel) training job at each GPU power limit, as measured by Zeus's
// GlobalPowerLimitOptimizer. Format: `start_time,window_name,elapsed_time,
// gpu<i>_energy...` with window names `__GlobalPowerLimitOptimizer_<watts>`,
// time in seconds, energy in joules per GPU (summed over GPUs here).
// Thread safety: pure functions.
#pragma once

#include <string>
#include <vector>

#include "carbon/knob_options.h"
#include "perseus/status.h"

namespace perseus::carbon {

struct PowerLimitPoint {
  int power_limit_w = 0;
  double time_s = 0;
  double energy_j = 0;  // all GPUs
};

struct PowerLimitProfile {
  std::string source;
  int num_gpus = 0;
  std::vector<PowerLimitPoint> points;  // power limit descending
};

// Errors name file:line and the column.
Result<PowerLimitProfile> LoadPowerLimitProfile(const std::string& path);
// Options per power limit; the reference is the highest power limit.
KnobSet PowerLimitKnobs(const PowerLimitProfile& profile);

}  // namespace perseus::carbon
