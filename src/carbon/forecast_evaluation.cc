// Rolling-origin MAE and MAPE.
#include "carbon/forecast_evaluation.h"

#include <cmath>
#include <memory>

#include "carbon/blend_forecaster.h"
#include "carbon/ensemble_forecaster.h"
#include "carbon/iso_time.h"

namespace perseus::carbon {

std::vector<ForecastScore> EvaluateForecasters(const IntensityTrace& trace, int horizon_h, int warmup_h) {
  const int how = HourOfWeekUtc(trace.start_unix_s);
  std::vector<std::unique_ptr<Forecaster>> fs;
  fs.push_back(std::make_unique<PersistenceForecaster>(horizon_h, how));
  fs.push_back(std::make_unique<TimeOfDayMeanForecaster>(horizon_h, how, 7));
  fs.push_back(std::make_unique<BlendForecaster>(horizon_h, how));
  fs.push_back(std::make_unique<EnsembleForecaster>(horizon_h, how));
  EnsembleForecaster* with_mix = nullptr;
  std::vector<double> factors;
  for (const FuelGeneration& g : trace.generation) factors.push_back(g.lifecycle_g_per_kwh);
  if (!factors.empty()) {
    fs.push_back(std::make_unique<EnsembleForecaster>(horizon_h, how, factors));
    with_mix = static_cast<EnsembleForecaster*>(fs.back().get());
  }
  std::vector<ForecastScore> scores(fs.size());
  for (size_t k = 0; k < fs.size(); ++k) scores[k].name = fs[k]->Name();
  std::vector<double> mw(factors.size());
  std::vector<int> mape_origins(fs.size(), 0);
  for (int t = 0; t + horizon_h < trace.size(); ++t) {
    const double now = trace.carbon_g_per_kwh[t];
    for (size_t f = 0; f < mw.size(); ++f) mw[f] = trace.generation[f].mw[t];
    for (auto& f : fs) {
      if (f.get() == with_mix) with_mix->ObserveWithMix(now, mw);
      else f->Observe(now);
    }
    if (t < warmup_h) continue;
    const double actual = trace.carbon_g_per_kwh[t + horizon_h];
    for (size_t k = 0; k < fs.size(); ++k) {
      const double err = std::fabs(fs[k]->Predict() - actual);
      scores[k].mae_g_per_kwh += err;
      ++scores[k].origins;
      if (actual > 0) {
        scores[k].mape_percent += 100 * err / actual;
        ++mape_origins[k];
      }
    }
  }
  for (size_t k = 0; k < scores.size(); ++k) {
    if (scores[k].origins > 0) scores[k].mae_g_per_kwh /= scores[k].origins;
    if (mape_origins[k] > 0) scores[k].mape_percent /= mape_origins[k];
  }
  return scores;
}

}  // namespace perseus::carbon
