// Rolling-origin MAE.
#include "carbon/forecast_evaluation.h"

#include <cmath>
#include <memory>

#include "carbon/blend_forecaster.h"
#include "carbon/iso_time.h"

namespace perseus::carbon {

std::vector<ForecastScore> EvaluateForecasters(const IntensityTrace& trace, int horizon_h, int warmup_h) {
  const int hod = HourOfDayUtc(trace.start_unix_s);
  std::vector<std::unique_ptr<Forecaster>> fs;
  fs.push_back(std::make_unique<PersistenceForecaster>(horizon_h, hod));
  fs.push_back(std::make_unique<TimeOfDayMeanForecaster>(horizon_h, hod, 7));
  fs.push_back(std::make_unique<BlendForecaster>(horizon_h, hod));
  std::vector<ForecastScore> scores(fs.size());
  for (size_t k = 0; k < fs.size(); ++k) scores[k].name = fs[k]->Name();
  for (int t = 0; t + horizon_h < trace.size(); ++t) {
    for (auto& f : fs) f->Observe(trace.carbon_g_per_kwh[t]);
    if (t < warmup_h) continue;
    const double actual = trace.carbon_g_per_kwh[t + horizon_h];
    for (size_t k = 0; k < fs.size(); ++k) {
      scores[k].mae_g_per_kwh += std::fabs(fs[k]->Predict() - actual);
      ++scores[k].origins;
    }
  }
  for (ForecastScore& s : scores) {
    if (s.origins > 0) s.mae_g_per_kwh /= s.origins;
  }
  return scores;
}

}  // namespace perseus::carbon
