// Line and scatter charts as SVG, e.g. the time-energy frontier of a plan.
//
// RenderLineChart draws axes with nice ticks and light gridlines, one line
// (and/or markers) per series, a legend on the right, and annotations as a
// ringed point with a label placed where it does not collide with other
// annotation labels. Series without a colour get the categorical palette by
// position. Non-finite points are skipped; empty charts and single points
// render without NaNs or divisions by zero. Thread-safe (pure function).
#pragma once

#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace perseus::report {

struct Series {
  std::string name;
  std::vector<std::pair<double, double>> points;  // (x, y) in data units, drawn in order
  std::string color;  // any SVG colour; empty: CategoricalColor(series index)
  bool markers = false;
  bool line = true;
  bool dashed = false;
};

// A highlighted data point, e.g. "min energy" or "chosen plan".
struct Annotation {
  double x, y;
  std::string label;
};

struct LineChart {
  std::string title, x_label, y_label;
  std::vector<Series> series;
  std::vector<Annotation> annotations;
  double width_px = 800, height_px = 500;
  // Fixed y range; unset bounds follow the data (widened to nice ticks).
  std::optional<double> y_min, y_max;
};

// The chart as a standalone SVG document.
std::string RenderLineChart(const LineChart& chart);

}  // namespace perseus::report
