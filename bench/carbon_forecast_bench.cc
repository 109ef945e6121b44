// Prints the 1-hour-ahead rolling-origin MAE of our forecaster, persistence
// and the 7-day time-of-day mean on the 2022 CAISO and NYISO traces (and 3
// and 6 hours ahead), the figures in docs/carbon.md.
#include <cstdio>
#include <fstream>

#include "carbon/forecast_evaluation.h"

int main() {
  using namespace perseus::carbon;
  std::printf("%-6s %-8s %-20s %12s %8s\n", "grid", "horizon", "forecaster", "MAE g/kWh", "origins");
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
    for (int h : {1, 3, 6}) {
      for (const ForecastScore& s : EvaluateForecasters(*trace, h)) {
        std::printf("%-6s %-8d %-20s %12.2f %8d\n", region, h, s.name.c_str(), s.mae_g_per_kwh, s.origins);
      }
    }
  }
  return 0;
}
