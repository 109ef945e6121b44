// Recursive least squares (e.g. Haykin, Adaptive Filter Theory, ch. 10).
#include "carbon/blend_forecaster.h"

namespace perseus::carbon {

BlendForecaster::BlendForecaster(int horizon_h, int first_hour_of_day, double forgetting)
    : Forecaster(horizon_h, first_hour_of_day), forgetting_(forgetting) {
  for (int i = 0; i < kFeatures; ++i) p_[i][i] = 1e-2;  // weak prior towards persistence (w = 0)
}

BlendForecaster::Vec BlendForecaster::Features(int t) const {
  const int h = horizon_h();
  auto change = [&](int lag) { return t - lag >= 0 && t + h - lag < size() ? At(t + h - lag) - At(t - lag) : 0.0; };
  const double tod_target = TimeOfDayMean(t + h, 14);
  const double tod_now = TimeOfDayMean(t, 14);
  return {1.0, change(24), change(168), tod_target - At(t), t >= 1 ? At(t) - At(t - 1) : 0.0, tod_target - tod_now};
}

void BlendForecaster::Update(const Vec& x, double target) {
  Vec px{};
  for (int i = 0; i < kFeatures; ++i)
    for (int j = 0; j < kFeatures; ++j) px[i] += p_[i][j] * x[j];
  double denom = forgetting_;
  double pred = 0;
  for (int i = 0; i < kFeatures; ++i) {
    denom += x[i] * px[i];
    pred += w_[i] * x[i];
  }
  const double err = target - pred;
  for (int i = 0; i < kFeatures; ++i) w_[i] += px[i] / denom * err;
  for (int i = 0; i < kFeatures; ++i)
    for (int j = 0; j < kFeatures; ++j) p_[i][j] = (p_[i][j] - px[i] * px[j] / denom) / forgetting_;
}

void BlendForecaster::Observe(double carbon_g_per_kwh) {
  Forecaster::Observe(carbon_g_per_kwh);
  const int t = size() - 1;
  // The example whose target is window t has origin t - h.
  if (static_cast<int>(pending_.size()) == horizon_h()) {
    Update(pending_.front(), carbon_g_per_kwh - At(t - horizon_h()));
    pending_.pop_front();
  }
  pending_.push_back(Features(t));
}

double BlendForecaster::Predict() const {
  const Vec& x = pending_.back();
  double delta = 0;
  for (int i = 0; i < kFeatures; ++i) delta += w_[i] * x[i];
  const double y = At(size() - 1) + delta;
  return y > 0 ? y : 0;
}

}  // namespace perseus::carbon
