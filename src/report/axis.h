// "Nice" ticks for a linear axis.
//
// MakeLinearAxis picks a step of 1, 2 or 5 times a power of ten so that
// [lo, hi] is covered by at most about `target_intervals` intervals, widens
// the range to whole steps, and lists the tick values (computed as integer
// multiples of the step, so 0.1 + 0.2 drift never shows up as 0.30000000004).
// Degenerate input is repaired rather than rejected: lo > hi is swapped,
// lo == hi is widened around the value, non-finite bounds (or a span that
// overflows) become [0, 1].
// Pure functions; thread-safe.
#pragma once

#include <string>
#include <vector>

namespace perseus::report {

struct LinearAxis {
  double min = 0;             // first tick (<= lo)
  double max = 1;             // last tick (>= hi)
  double step = 0.2;          // distance between ticks, 1/2/5 x 10^k
  std::vector<double> ticks;  // min, min + step, ..., max
};

// The smallest 1-2-5 step >= span / target_intervals (target clamped to
// [1, 100]); 1 for a span that is not positive and finite.
double NiceStep(double span, int target_intervals);

// A nice axis covering [lo, hi]. target_intervals below 1 is treated as 1.
LinearAxis MakeLinearAxis(double lo, double hi, int target_intervals = 5);

// A nice axis for a horizontal run of `length_px` pixels: about one interval
// per `px_per_interval`, coarsened until tick labels of `label_size_px` no
// longer overlap (widths estimated, see EstimateTextWidthPx).
LinearAxis FitLinearAxis(double lo, double hi, double length_px, double label_size_px,
                         double px_per_interval = 90);

// A tick label with just enough decimals to tell ticks `step` apart
// ("0.25" for step 0.05, "1200" for step 200), scientific for very large or
// very small magnitudes ("2.5e+09"); never "-0".
std::string FormatTick(double value, double step);

}  // namespace perseus::report
