// Rolling-origin evaluation of forecasters on an hourly trace: at every origin
// t >= warmup_h, each forecaster has seen windows 0..t and predicts window
// t + horizon_h; the mean absolute error is over all such origins.
// Thread safety: pure function.
#pragma once

#include <string>
#include <vector>

#include "carbon/intensity_trace.h"

namespace perseus::carbon {

struct ForecastScore {
  std::string name;
  double mae_g_per_kwh = 0;
  int origins = 0;
};

// Scores persistence, the 7-day time-of-day mean and ours, in that order.
std::vector<ForecastScore> EvaluateForecasters(const IntensityTrace& trace, int horizon_h = 1, int warmup_h = 24);

}  // namespace perseus::carbon
