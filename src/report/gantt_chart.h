// Gantt charts of pipeline schedules as SVG: one row per stage, one box per
// forward/backward computation, coloured by a value such as SM frequency.
//
// Box fill comes from the viridis ColorScale over [value_min, value_max]
// (derived from the boxes when that range is missing or non-finite); a colour
// bar with value_label explains it. Short labels ("F3", "B3") are written
// inside boxes wide enough to hold them, in black or white for contrast.
// Every box carries a hover tooltip (its own, or label, span and value).
// Boxes with a row outside [0, 4096) or non-finite times are skipped. Thread-safe
// (pure function).
#pragma once

#include <string>
#include <vector>

namespace perseus::report {

struct GanttBox {
  int row = 0;                // 0-based; rows beyond row_names are named "row N"
  double start = 0, end = 0;  // in x-axis units, e.g. seconds
  std::string label;          // short, e.g. "F3"
  double value = 0;           // coloured on the scale, e.g. frequency in MHz
  std::string tooltip;        // empty: generated from label, span and value
};

struct GanttChart {
  std::string title, x_label;
  std::vector<std::string> row_names;  // e.g. "stage 0"
  std::vector<GanttBox> boxes;
  std::string value_label;             // e.g. "SM frequency (MHz)"
  double value_min = 0, value_max = 0;
  double width_px = 1200;
};

// The chart as a standalone SVG document; the height follows the row count.
std::string RenderGanttChart(const GanttChart& chart);

}  // namespace perseus::report
