// Our forecaster: an online recursive-least-squares (RLS) linear model of the
// change from the last value, on seasonal features.
//
// For origin t and target t+h it predicts y(t+h) - y(t) from
//   [1, y(t+h-24) - y(t-24)     (yesterday's change over the same hours),
//       y(t+h-168) - y(t-168)   (last week's change),
//       tod14(t+h) - y(t)       (14-day time-of-day mean of the target hour, minus now),
//       y(t) - y(t-1)           (recent slope),
//       tod14(t+h) - tod14(t)]  (the diurnal profile's change)
// Missing lags (the first week) contribute 0. Each new observation completes
// the example whose target it is and updates the weights with forgetting
// factor `forgetting` (effective memory ~1/(1-forgetting) hours), so the model
// follows seasons. With all weights 0 it is persistence; with only the third
// at 1 it is the time-of-day mean, so it can learn to beat both.
// Thread safety: not thread-safe.
#pragma once

#include <array>
#include <deque>

#include "carbon/forecaster.h"

namespace perseus::carbon {

class BlendForecaster : public Forecaster {
 public:
  static constexpr int kFeatures = 6;
  BlendForecaster(int horizon_h, int first_hour_of_day, double forgetting = 0.998);
  std::string Name() const override { return "ours (RLS blend)"; }
  void Observe(double carbon_g_per_kwh) override;
  double Predict() const override;
  const std::array<double, kFeatures>& weights() const { return w_; }

 private:
  using Vec = std::array<double, kFeatures>;
  Vec Features(int origin) const;
  void Update(const Vec& x, double target);
  double forgetting_;
  Vec w_{};
  std::array<Vec, kFeatures> p_{};       // inverse covariance
  std::deque<Vec> pending_;              // features of the last horizon_h origins, oldest first
};

}  // namespace perseus::carbon
