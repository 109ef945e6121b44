// An online recursive-least-squares (RLS) linear model of the change from the
// last value, on seasonal features.
//
// For origin t and target t+h it predicts y(t+h) - y(t) from
//   [1, y(t+h-24) - y(t-24)     (yesterday's change over the same hours),
//       y(t+h-168) - y(t-168)   (last week's change),
//       tod14(t+h) - y(t)       (14-day time-of-day mean of the target hour, minus now),
//       y(t) - y(t-1)           (recent slope),
//       tod14(t+h) - tod14(t),  (the diurnal profile's change)
//       weekend(t+h) - weekend(t)]  (+1 from a weekday into Saturday or Sunday,
//                                    -1 back, UTC days: the calendar is known ahead)
// and, with `ratio_feature`, y(t+h-24) * y(t)/y(t-24) - y(t) (yesterday's
// value at the target hour scaled by today's level against yesterday's: a
// sunny or windy day's ramp).
// Missing lags (the first week) contribute 0. Each new observation completes
// the example whose target it is and updates the weights with forgetting
// factor `forgetting` (effective memory ~1/(1-forgetting) examples), so the
// model follows seasons. With `per_hour_of_day` each target hour of day has
// its own weights (24 models, each learning from one example a day: morning
// and evening ramps differ). With all weights 0 it is persistence; with only
// the fourth at 1 it is the time-of-day mean, so it can learn to beat both.
// The series may be any non-negative hourly quantity (intensity, a fuel's
// generation or share): forecasts are clipped at 0.
// Thread safety: not thread-safe.
#pragma once

#include <deque>
#include <string>
#include <vector>

#include "carbon/forecaster.h"
#include "carbon/rls_regression.h"

namespace perseus::carbon {

struct BlendOptions {
  double forgetting = 0.998;    // ~3 weeks of hourly examples
  bool per_hour_of_day = false;
  bool ratio_feature = false;
};

class BlendForecaster : public Forecaster {
 public:
  BlendForecaster(int horizon_h, int first_hour_of_week, BlendOptions options = {});
  std::string Name() const override;
  void Observe(double value) override;
  double Predict() const override;

 private:
  struct Example {
    std::vector<double> x;
    int model;  // which weights: the target's hour of day, or 0
  };
  Example Features(int origin) const;
  BlendOptions options_;
  std::vector<RlsRegression> models_;  // 1, or 24 (per target hour of day)
  std::deque<Example> pending_;        // the last horizon_h origins, oldest first
};

}  // namespace perseus::carbon
