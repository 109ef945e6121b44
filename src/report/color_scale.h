// Colours for plots: a continuous viridis-like scale and a categorical palette.
//
// The continuous scale maps a number in [min, max] to a perceptually uniform,
// colour-blind-safe colour (viridis: dark purple at min, yellow at max); the
// Gantt chart uses it for SM frequency in MHz. The categorical palette gives
// distinct colours to line-chart series. Pure functions; thread-safe.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

namespace perseus::report {

struct Rgb {
  std::uint8_t r = 0, g = 0, b = 0;

  // "#rrggbb", lower case.
  std::string Hex() const;
  // Relative luminance in [0, 1] (sRGB, WCAG formula); picks a readable text colour.
  double Luminance() const;
};

// Viridis at t in [0, 1]; t is clamped, NaN maps to 0.
Rgb Viridis(double t);

// Maps values in [min, max] onto Viridis. A degenerate range (min == max, or a
// non-finite bound) maps every value to the middle of the scale.
class ColorScale {
 public:
  ColorScale(double min, double max);
  // Position of `value` in [0, 1], clamped; 0.5 for a degenerate range or NaN value.
  double Normalize(double value) const;
  Rgb ColorFor(double value) const { return Viridis(Normalize(value)); }
  double min() const { return min_; }
  double max() const { return max_; }

 private:
  double min_, max_;
};

// The index-th colour of a 10-colour categorical palette (wraps around).
std::string CategoricalColor(std::size_t index);

// "#000000" or "#ffffff", whichever reads better on `background`.
std::string TextColorOn(const Rgb& background);

}  // namespace perseus::report
