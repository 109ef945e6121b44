// Prints the rolling-origin MAE and MAPE of persistence, the 7-day
// time-of-day mean, the intensity's RLS blend and our ensembles (on intensity
// alone and with the fuel mix) on the 2022 CAISO and NYISO traces, 1, 3, 6
// and 24 hours ahead, every origin after the first 30 days (which only
// train): the figures in docs/carbon.md.
#include <cstdio>
#include <fstream>

#include "carbon/forecast_evaluation.h"

int main() {
  using namespace perseus::carbon;
  std::printf("%-6s %-8s %-36s %10s %7s %8s\n", "grid", "horizon", "forecaster", "MAE g/kWh", "MAPE %", "origins");
  for (const char* region : {"CISO", "NYIS"}) {
    const std::string path = std::string(PERSEUS_SHARED_DATA) + "/carbon/eia2022_" + region + "_hourly_ci.csv";
    if (!std::ifstream(path)) {
      std::printf("skipped: shared data absent (%s)\n", path.c_str());
      return 0;
    }
    perseus::Result<IntensityTrace> trace = LoadEiaTrace(path);
    if (!trace.ok()) {
      std::fprintf(stderr, "%s\n", trace.status().ToString().c_str());
      return 1;
    }
    for (int h : {1, 3, 6, 24}) {
      for (const ForecastScore& s : EvaluateForecasters(*trace, h, kForecastWarmupH)) {
        std::printf("%-6s %-8d %-36s %10.3f %7.2f %8d\n", region, h, s.name.c_str(), s.mae_g_per_kwh, s.mape_percent,
                    s.origins);
      }
    }
  }
  return 0;
}
