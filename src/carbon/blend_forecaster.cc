// The seasonal RLS forecaster.
#include "carbon/blend_forecaster.h"

#include <algorithm>

namespace perseus::carbon {
namespace {

constexpr double kPriorVariance = 1e-2;  // weak prior towards persistence (w = 0)
constexpr double kMinRatio = 0.2, kMaxRatio = 5;

int FeatureCount(const BlendOptions& o) { return o.ratio_feature ? 8 : 7; }

}  // namespace

BlendForecaster::BlendForecaster(int horizon_h, int first_hour_of_week, BlendOptions options)
    : Forecaster(horizon_h, first_hour_of_week),
      options_(options),
      models_(options.per_hour_of_day ? 24 : 1, RlsRegression(FeatureCount(options), options.forgetting, kPriorVariance)) {}

std::string BlendForecaster::Name() const {
  std::string name = "ours (RLS blend";
  if (options_.per_hour_of_day) name += ", per hour of day";
  if (options_.ratio_feature) name += ", ratio";
  return name + ")";
}

BlendForecaster::Example BlendForecaster::Features(int t) const {
  const int h = horizon_h();
  auto change = [&](int lag) { return t - lag >= 0 && t + h - lag < size() ? At(t + h - lag) - At(t - lag) : 0.0; };
  const double tod_target = TimeOfDayMean(t + h, 14);
  const double tod_now = TimeOfDayMean(t, 14);
  const double weekend_change = static_cast<double>(IsWeekend(t + h)) - static_cast<double>(IsWeekend(t));
  Example e{{1.0, change(24), change(168), tod_target - At(t), t >= 1 ? At(t) - At(t - 1) : 0.0, tod_target - tod_now,
             weekend_change},
            options_.per_hour_of_day ? HourOfDay(t + h) : 0};
  if (options_.ratio_feature) {
    double scaled = 0;
    if (t - 24 >= 0 && t + h - 24 < size() && At(t - 24) > 1) {
      const double ratio = std::clamp(At(t) / At(t - 24), kMinRatio, kMaxRatio);
      scaled = At(t + h - 24) * ratio - At(t);
    }
    e.x.push_back(scaled);
  }
  return e;
}

void BlendForecaster::Observe(double value) {
  Forecaster::Observe(value);
  const int t = size() - 1;
  // The example whose target is window t has origin t - h.
  if (static_cast<int>(pending_.size()) == horizon_h()) {
    const Example& e = pending_.front();
    models_[e.model].Update(e.x, value - At(t - horizon_h()));
    pending_.pop_front();
  }
  pending_.push_back(Features(t));
}

double BlendForecaster::Predict() const {
  const Example& e = pending_.back();
  const double y = At(size() - 1) + models_[e.model].Predict(e.x);
  return y > 0 ? y : 0;
}

}  // namespace perseus::carbon
