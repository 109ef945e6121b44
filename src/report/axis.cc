// Nice linear-axis ticks.
#include "report/axis.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <utility>

#include "report/svg_writer.h"

namespace perseus::report {
namespace {

// Relative slack so that 0.30000000000000004 / 0.1 still counts as 3 steps.
constexpr double kEps = 1e-9;
// Bounds the tick count whatever the caller asks for.
constexpr int kMaxIntervals = 100;

// Makes [lo, hi] finite, ordered and of non-zero width.
std::pair<double, double> RepairRange(double lo, double hi) {
  if (!std::isfinite(lo) || !std::isfinite(hi) || !std::isfinite(hi - lo)) return {0, 1};
  if (lo > hi) std::swap(lo, hi);
  if (hi - lo > std::max(std::fabs(lo), std::fabs(hi)) * kEps) return {lo, hi};
  if (lo == 0) return {0, 1};
  double pad = std::fabs(lo) * 0.1;
  return {lo - pad, hi + pad};
}

// Rounds values within a tiny fraction of a step to zero (no "-0", no 1e-17).
double SnapZero(double value, double step) {
  return std::fabs(value) < step * kEps ? 0.0 : value;
}

}  // namespace

double NiceStep(double span, int target_intervals) {
  if (!(span > 0) || !std::isfinite(span)) return 1;
  double raw = span / std::clamp(target_intervals, 1, kMaxIntervals);
  double magnitude = std::pow(10.0, std::floor(std::log10(raw)));
  double norm = raw / magnitude;
  for (double m : {1.0, 2.0, 5.0}) {
    if (norm <= m * (1 + kEps)) return m * magnitude;
  }
  return 10 * magnitude;
}

LinearAxis MakeLinearAxis(double lo, double hi, int target_intervals) {
  auto [a, b] = RepairRange(lo, hi);
  LinearAxis axis;
  axis.step = NiceStep(b - a, target_intervals);
  double first = std::floor(a / axis.step + kEps);
  double last = std::ceil(b / axis.step - kEps);
  // The count bound is a backstop; with a repaired range there are at most
  // target + 2 ticks.
  for (double i = first; i <= last && axis.ticks.size() <= std::size_t{kMaxIntervals}; ++i) {
    axis.ticks.push_back(SnapZero(i * axis.step, axis.step));
  }
  axis.min = axis.ticks.front();
  axis.max = axis.ticks.back();
  return axis;
}

LinearAxis FitLinearAxis(double lo, double hi, double length_px, double label_size_px,
                         double px_per_interval) {
  double ratio = px_per_interval > 0 ? length_px / px_per_interval : 0;
  int target = std::isfinite(ratio) ? static_cast<int>(std::clamp(std::round(ratio), 2.0, double{kMaxIntervals})) : 2;
  LinearAxis axis = MakeLinearAxis(lo, hi, target);
  while (target > 1) {
    double spacing_px = length_px * axis.step / (axis.max - axis.min);
    double widest_px = 0;
    for (double t : axis.ticks) {
      widest_px = std::max(widest_px, EstimateTextWidthPx(FormatTick(t, axis.step), label_size_px));
    }
    if (widest_px + 12 <= spacing_px) break;
    axis = MakeLinearAxis(lo, hi, --target);
  }
  return axis;
}

std::string FormatTick(double value, double step) {
  if (!std::isfinite(value)) return "0";
  if (!(step > 0) || !std::isfinite(step)) step = 1;
  value = SnapZero(value, step);
  char buf[64];
  double step_exp = std::floor(std::log10(step) + kEps);
  if (std::fabs(value) >= 1e7 || step < 1e-6) {
    // Mantissa decimals down to the step, so labels on one axis line up: 2.5e+09, 3.0e+09.
    double value_exp = value == 0 ? step_exp : std::floor(std::log10(std::fabs(value)) + kEps);
    int decimals = static_cast<int>(std::clamp(value_exp - step_exp, 0.0, 15.0));
    std::snprintf(buf, sizeof buf, "%.*e", decimals, value);
    return buf;
  }
  int decimals = static_cast<int>(std::clamp(-step_exp, 0.0, 15.0));
  std::snprintf(buf, sizeof buf, "%.*f", decimals, value);
  std::string s = buf;
  // A value that is not a multiple of the step may still round to "-0.0".
  if (s[0] == '-' && s.find_first_of("123456789") == std::string::npos) s.erase(0, 1);
  return s;
}

}  // namespace perseus::report
