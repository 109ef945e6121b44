// Our forecaster: the online-weighted mean of several seasonal RLS models
// (blend_forecaster.h), and, where the source publishes the fuel mix, of
// models that forecast every fuel's generation and compute the intensity of
// the forecast mix from the fuels' emission factors.
//
// Members, each a forecast of the intensity:
//   - the intensity's RLS blend, with one set of weights and with one per
//     target hour of day;
//   with the fuel mix (ObserveWithMix), the intensity of the forecast mix
//   when every fuel's generation is forecast by
//   - one RLS blend per fuel;
//   - one per fuel and target hour of day;
//   - one per fuel with the ratio feature (yesterday's profile scaled);
//   - one per fuel's share of the total, per target hour of day.
// The forecast is the members' mean plus a correction learnt online (RLS,
// forgetting 0.9995, a strong prior towards the plain mean) from each member's
// deviation from the mean: members that have been right lately count more.
// Every weight is learnt from the past only: each new hour completes the
// examples whose target it is.
// Thread safety: not thread-safe; copyable.
#pragma once

#include <deque>
#include <span>
#include <string>
#include <vector>

#include "carbon/blend_forecaster.h"
#include "carbon/forecaster.h"
#include "carbon/rls_regression.h"

namespace perseus::carbon {

class EnsembleForecaster : public Forecaster {
 public:
  // `lifecycle_g_per_kwh`: the emission factor of every fuel whose generation
  // ObserveWithMix will give, in that order; empty: intensity only (Observe).
  EnsembleForecaster(int horizon_h, int first_hour_of_week, std::vector<double> lifecycle_g_per_kwh = {});
  std::string Name() const override;
  // Intensity only. REQUIRES: constructed without fuels.
  void Observe(double carbon_g_per_kwh) override;
  // The hour's intensity and every fuel's generation (MW, >= 0).
  // REQUIRES: constructed with fuels; mw.size() equals their number.
  void ObserveWithMix(double carbon_g_per_kwh, std::span<const double> mw);
  // Persistence (the last value) until kLearningHours have been observed:
  // before that its models have seen too few examples to trust (on two
  // hours of noise they forecast 0 g/kWh). After that the forecast is kept
  // within the least and the most it has observed (on the 2022 traces it
  // binds 347 times, mostly in the first months, and lowers every MAE a
  // little: docs/carbon.md, "Forecaster").
  double Predict() const override;
  int members() const;
  static constexpr int kLearningHours = 48;
  double least_observed() const { return least_; }
  double most_observed() const { return most_; }

 private:
  // Forecasts every fuel (generation or share) and combines them.
  struct MixMember {
    bool shares = false;
    std::vector<BlendForecaster> fuels;
  };
  static std::vector<MixMember> MixMembers(int fuels, int horizon_h, int first_hour_of_week);
  struct Example {
    std::vector<double> deviations;  // member forecast minus the mean
    double mean = 0;
  };
  void Advance(double carbon_g_per_kwh);
  std::vector<double> lifecycle_g_per_kwh_;
  std::vector<BlendForecaster> intensity_members_;
  std::vector<MixMember> mix_members_;
  RlsRegression stack_;
  std::deque<Example> pending_;  // the last horizon_h origins, oldest first
  double least_ = 0, most_ = 0;   // of the intensities observed
};

}  // namespace perseus::carbon
