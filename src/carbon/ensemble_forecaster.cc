// The ensemble forecaster.
#include "carbon/ensemble_forecaster.h"

#include <algorithm>
#include <cassert>
#include <cmath>

#include "carbon/intensity_trace.h"

namespace perseus::carbon {
namespace {

constexpr double kPerHourForgetting = 0.99;  // one example a day per model: ~100 days
constexpr double kStackForgetting = 0.9995;  // ~3 months of hourly examples
constexpr double kStackPriorVariance = 1e-4;

const BlendOptions kGlobal;
const BlendOptions kPerHour{kPerHourForgetting, true, false};
const BlendOptions kRatio{kGlobal.forgetting, false, true};

std::vector<BlendForecaster> PerFuel(int n, int horizon_h, int first_hour_of_week, BlendOptions o) {
  return std::vector<BlendForecaster>(n, BlendForecaster(horizon_h, first_hour_of_week, o));
}

}  // namespace

std::vector<EnsembleForecaster::MixMember> EnsembleForecaster::MixMembers(int fuels, int horizon_h,
                                                                          int first_hour_of_week) {
  if (fuels == 0) return {};
  return {{false, PerFuel(fuels, horizon_h, first_hour_of_week, kGlobal)},
          {false, PerFuel(fuels, horizon_h, first_hour_of_week, kPerHour)},
          {false, PerFuel(fuels, horizon_h, first_hour_of_week, kRatio)},
          {true, PerFuel(fuels, horizon_h, first_hour_of_week, kPerHour)}};
}

EnsembleForecaster::EnsembleForecaster(int horizon_h, int first_hour_of_week, std::vector<double> lifecycle_g_per_kwh)
    : Forecaster(horizon_h, first_hour_of_week),
      lifecycle_g_per_kwh_(std::move(lifecycle_g_per_kwh)),
      intensity_members_{BlendForecaster(horizon_h, first_hour_of_week, kGlobal),
                         BlendForecaster(horizon_h, first_hour_of_week, kPerHour)},
      mix_members_(MixMembers(static_cast<int>(lifecycle_g_per_kwh_.size()), horizon_h, first_hour_of_week)),
      stack_(members(), kStackForgetting, kStackPriorVariance) {}

std::string EnsembleForecaster::Name() const {
  return mix_members_.empty() ? "ours (ensemble)" : "ours (ensemble, fuel mix)";
}

int EnsembleForecaster::members() const {
  return static_cast<int>(intensity_members_.size() + mix_members_.size());
}

void EnsembleForecaster::Observe(double carbon_g_per_kwh) {
  assert(mix_members_.empty());
  for (BlendForecaster& m : intensity_members_) m.Observe(carbon_g_per_kwh);
  Advance(carbon_g_per_kwh);
}

void EnsembleForecaster::ObserveWithMix(double carbon_g_per_kwh, std::span<const double> mw) {
  assert(mw.size() == lifecycle_g_per_kwh_.size() && !mix_members_.empty());
  for (BlendForecaster& m : intensity_members_) m.Observe(carbon_g_per_kwh);
  double total = 0;
  for (double v : mw) total += v;
  for (MixMember& m : mix_members_) {
    for (size_t f = 0; f < mw.size(); ++f) m.fuels[f].Observe(m.shares ? (total > 0 ? mw[f] / total : 0.0) : mw[f]);
  }
  Advance(carbon_g_per_kwh);
}

// Scores the example this hour completes, then records this origin's.
void EnsembleForecaster::Advance(double carbon_g_per_kwh) {
  least_ = size() == 0 ? carbon_g_per_kwh : std::min(least_, carbon_g_per_kwh);
  most_ = size() == 0 ? carbon_g_per_kwh : std::max(most_, carbon_g_per_kwh);
  Forecaster::Observe(carbon_g_per_kwh);
  if (static_cast<int>(pending_.size()) == horizon_h()) {
    const Example& e = pending_.front();
    stack_.Update(e.deviations, carbon_g_per_kwh - e.mean);
    pending_.pop_front();
  }
  std::vector<double> forecasts;
  for (const BlendForecaster& m : intensity_members_) forecasts.push_back(m.Predict());
  for (const MixMember& m : mix_members_) {
    std::vector<double> mw;
    for (const BlendForecaster& f : m.fuels) mw.push_back(f.Predict());
    const double mixed = MixIntensity(mw, lifecycle_g_per_kwh_);
    forecasts.push_back(std::isnan(mixed) ? carbon_g_per_kwh : mixed);  // nothing forecast to run: persistence
  }
  Example e;
  for (double f : forecasts) e.mean += f / static_cast<double>(forecasts.size());
  for (double f : forecasts) e.deviations.push_back(f - e.mean);
  pending_.push_back(std::move(e));
}

double EnsembleForecaster::Predict() const {
  if (size() < kLearningHours) return size() > 0 ? At(size() - 1) : 0;
  const Example& e = pending_.back();
  const double y = e.mean + stack_.Predict(e.deviations);
  return std::clamp(y, least_, most_);
}

}  // namespace perseus::carbon
