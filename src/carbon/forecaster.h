// Carbon-intensity forecasters: predict the intensity `horizon_h` hour windows
// after the last observed one from the hourly history.
//
// Observe() appends the value of the next hour window; Predict() forecasts
// the window horizon_h after the last observed one. Two baselines
// (persistence, time-of-day mean) and ours (blend_forecaster.h) share this
// interface so forecast_evaluation.h can compare them on equal footing.
// Thread safety: not thread-safe; one instance per series.
#pragma once

#include <memory>
#include <string>
#include <vector>

namespace perseus::carbon {

class Forecaster {
 public:
  // `first_hour_of_week`: UTC hour of the week (0..167, 0 being Monday 00:00;
  // iso_time.h's HourOfWeekUtc) of the first observed window.
  Forecaster(int horizon_h, int first_hour_of_week) : horizon_h_(horizon_h), first_hour_of_week_(first_hour_of_week) {}
  virtual ~Forecaster() = default;
  virtual std::string Name() const = 0;
  virtual void Observe(double carbon_g_per_kwh) { history_.push_back(carbon_g_per_kwh); }
  // REQUIRES: at least one observation.
  virtual double Predict() const = 0;
  int horizon_h() const { return horizon_h_; }

 protected:
  // Value of window `index` (0-based since construction). REQUIRES: 0 <= index < size.
  double At(int index) const { return history_[index]; }
  int size() const { return static_cast<int>(history_.size()); }
  int HourOfDay(int index) const { return HourOfWeek(index) % 24; }
  // Saturday or Sunday (UTC days): demand, and with it the intensity, is lower.
  bool IsWeekend(int index) const { return HourOfWeek(index) >= 5 * 24; }
  // Mean of the observed windows with the same hour of day as `index`, over
  // the last `days` days before `index` (at most index - 24k, k = 1..days);
  // falls back to the last value when there are none.
  double TimeOfDayMean(int index, int days) const;

 private:
  int HourOfWeek(int index) const { return ((first_hour_of_week_ + index) % 168 + 168) % 168; }
  int horizon_h_;
  int first_hour_of_week_;
  std::vector<double> history_;
};

// The last observed value.
class PersistenceForecaster : public Forecaster {
 public:
  using Forecaster::Forecaster;
  std::string Name() const override { return "persistence"; }
  double Predict() const override { return At(size() - 1); }
};

// The mean over the last `days` days of the target window's hour of day.
class TimeOfDayMeanForecaster : public Forecaster {
 public:
  TimeOfDayMeanForecaster(int horizon_h, int first_hour_of_week, int days = 7)
      : Forecaster(horizon_h, first_hour_of_week), days_(days) {}
  std::string Name() const override { return "time-of-day mean"; }
  double Predict() const override { return TimeOfDayMean(size() - 1 + horizon_h(), days_); }

 private:
  int days_;
};

}  // namespace perseus::carbon
