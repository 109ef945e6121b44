// Rolling-origin evaluation of forecasters on an hourly trace: at every origin
// t >= warmup_h, each forecaster has seen windows 0..t (and, where the trace
// has it, their fuel mix) and predicts window t + horizon_h; the errors are
// over all such origins.
// Thread safety: pure function.
#pragma once

#include <string>
#include <vector>

#include "carbon/intensity_trace.h"

namespace perseus::carbon {

struct ForecastScore {
  std::string name;
  double mae_g_per_kwh = 0;
  double mape_percent = 0;  // mean absolute error relative to the actual value (actual 0: skipped)
  int origins = 0;
};

// Scores persistence, the 7-day time-of-day mean, the intensity's RLS blend,
// our ensemble on intensity alone and, when the trace has the fuel mix, our
// ensemble with it, in that order (the last row is what the runtime would
// use with such a source).
std::vector<ForecastScore> EvaluateForecasters(const IntensityTrace& trace, int horizon_h = 1, int warmup_h = 24);

// The protocol for the figures in docs/carbon.md: the first 30 days
// only train.
inline constexpr int kForecastWarmupH = 30 * 24;

}  // namespace perseus::carbon
