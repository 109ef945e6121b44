// Gantt chart layout and drawing.
#include "report/gantt_chart.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>
#include <limits>
#include <utility>

#include "report/axis.h"
#include "report/color_scale.h"
#include "report/svg_writer.h"

namespace perseus::report {
namespace {

constexpr double kTitleSizePx = 16;
constexpr double kLabelSizePx = 13;
constexpr double kTickSizePx = 11;
constexpr double kRowNameSizePx = 12;
constexpr double kBoxLabelSizePx = 11;
constexpr double kSmallBoxLabelSizePx = 8;
constexpr double kRowPitchPx = 30;
constexpr double kBoxHeightPx = 24;
constexpr double kTickLengthPx = 5;
constexpr double kColorBarHeightPx = 12;
constexpr double kColorBarMaxWidthPx = 320;
constexpr double kMaxRowNamePx = 200;
// A bad row index must not produce a gigabyte of empty rows.
constexpr int kMaxRows = 4096;
constexpr const char* kAxisColor = "#444444";
constexpr const char* kGridColor = "#dddddd";
constexpr const char* kGradientId = "perseus-color-bar";

bool IsDrawable(const GanttBox& b) {
  return b.row >= 0 && b.row < kMaxRows && std::isfinite(b.start) && std::isfinite(b.end);
}

// A value for tooltips; "n/a" rather than "nan" or "inf".
std::string FormatValue(double v) {
  if (!std::isfinite(v)) return "n/a";
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.4g", v);
  return buf;
}

int RowCount(const GanttChart& chart) {
  int rows = static_cast<int>(std::min(chart.row_names.size(), std::size_t{kMaxRows}));
  for (const GanttBox& b : chart.boxes) {
    if (IsDrawable(b)) rows = std::max(rows, b.row + 1);
  }
  return std::max(rows, 1);
}

std::string RowName(const GanttChart& chart, int row) {
  if (row < static_cast<int>(chart.row_names.size())) return chart.row_names[row];
  return "row " + std::to_string(row);
}

// [lo, hi] of `get` over drawable boxes; {0, 1} when there are none.
template <typename Get>
std::pair<double, double> BoxRange(const GanttChart& chart, Get get) {
  double lo = std::numeric_limits<double>::infinity(), hi = -lo;
  for (const GanttBox& b : chart.boxes) {
    if (!IsDrawable(b)) continue;
    for (double v : get(b)) {
      if (!std::isfinite(v)) continue;
      lo = std::min(lo, v);
      hi = std::max(hi, v);
    }
  }
  return lo <= hi ? std::pair{lo, hi} : std::pair{0.0, 1.0};
}

// The chart's value range if usable, else the range of the box values.
ColorScale MakeColorScale(const GanttChart& chart) {
  double lo = chart.value_min, hi = chart.value_max;
  if (std::isfinite(lo) && std::isfinite(hi) && lo < hi) return ColorScale(lo, hi);
  auto [a, b] = BoxRange(chart, [](const GanttBox& g) { return std::array{g.value}; });
  return ColorScale(a, b);
}

struct Layout {
  double width_px, height_px;
  double plot_x, plot_y, plot_w, plot_h;
  double color_bar_y;
  LinearAxis time;
  std::string axis_text;  // the x label, and how many box labels did not fit
  double Px(double t) const { return plot_x + (t - time.min) / (time.max - time.min) * plot_w; }
  double RowY(int row) const { return plot_y + row * kRowPitchPx; }
};

double RowNameWidthPx(const GanttChart& chart, int rows) {
  double w = 0;
  for (int r = 0; r < rows; ++r) w = std::max(w, EstimateTextWidthPx(RowName(chart, r), kRowNameSizePx));
  return std::min(w, kMaxRowNamePx);
}

struct BoxLabel {
  std::string text;  // empty: nothing fits
  double size_px = kBoxLabelSizePx;
};

// The label at full size, else smaller, else only its digits ("F12" -> "12"),
// else nothing: a narrow box never loses its label silently (see HiddenLabelNote).
BoxLabel FitLabel(const std::string& label, double width_px) {
  auto fits = [&](const std::string& t, double size) { return EstimateTextWidthPx(t, size) + 4 <= width_px; };
  if (label.empty()) return {};
  if (fits(label, kBoxLabelSizePx)) return {label, kBoxLabelSizePx};
  if (fits(label, kSmallBoxLabelSizePx)) return {label, kSmallBoxLabelSizePx};
  std::string digits;
  for (char c : label) {
    if (c >= '0' && c <= '9') digits += c;
  }
  if (!digits.empty() && digits != label && fits(digits, kSmallBoxLabelSizePx)) return {digits, kSmallBoxLabelSizePx};
  return {};
}

double BoxWidthPx(const Layout& l, const GanttBox& b) {
  return std::max(l.Px(std::max(b.start, b.end)) - l.Px(std::min(b.start, b.end)), 1.0);
}

// "" when every label shows; else how many are hidden, for the x-axis label.
std::string HiddenLabelNote(const GanttChart& chart, const Layout& l) {
  size_t labelled = 0, hidden = 0;
  for (const GanttBox& b : chart.boxes) {
    if (!IsDrawable(b) || b.label.empty()) continue;
    ++labelled;
    if (FitLabel(b.label, BoxWidthPx(l, b)).text.empty()) ++hidden;
  }
  if (hidden == 0) return "";
  return std::to_string(hidden) + " of " + std::to_string(labelled) + " box labels hidden (too narrow; hover a box)";
}

Layout MakeLayout(const GanttChart& chart) {
  Layout l;
  l.width_px = std::isfinite(chart.width_px) && chart.width_px >= 300
                   ? std::min(chart.width_px, 20000.0) : 1200;
  int rows = RowCount(chart);
  l.plot_x = 12 + RowNameWidthPx(chart, rows) + 10;
  l.plot_y = chart.title.empty() ? 16 : 46;
  l.plot_w = l.width_px - l.plot_x - 24;
  l.plot_h = rows * kRowPitchPx;
  auto [t0, t1] = BoxRange(chart, [](const GanttBox& g) { return std::array{g.start, g.end}; });
  l.time = FitLinearAxis(t0, t1, l.plot_w, kTickSizePx);
  l.axis_text = chart.x_label;
  const std::string note = HiddenLabelNote(chart, l);
  if (!note.empty()) l.axis_text += (l.axis_text.empty() ? "" : "; ") + note;
  double axis_h = kTickLengthPx + 8 + kTickSizePx + (l.axis_text.empty() ? 0 : kLabelSizePx + 12);
  l.color_bar_y = l.plot_y + l.plot_h + axis_h + 22;
  l.height_px = l.color_bar_y + kColorBarHeightPx + kTickLengthPx + 6 + kTickSizePx + 12;
  return l;
}

void DrawRows(SvgWriter& svg, const GanttChart& chart, const Layout& l) {
  int rows = RowCount(chart);
  TextStyle name{.size_px = kRowNameSizePx, .anchor = TextAnchor::kEnd, .center_vertically = true};
  for (int r = 0; r < rows; ++r) {
    if (r % 2 == 0) svg.Rect(l.plot_x, l.RowY(r), l.plot_w, kRowPitchPx, {.fill = "#f4f4f4"});
    svg.Text(l.plot_x - 8, l.RowY(r) + kRowPitchPx / 2,
             EllipsizeToWidth(RowName(chart, r), kRowNameSizePx, kMaxRowNamePx), name);
  }
}

void DrawTimeAxis(SvgWriter& svg, const Layout& l) {
  double bottom = l.plot_y + l.plot_h;
  ShapeStyle axis{.stroke = kAxisColor};
  TextStyle label{.size_px = kTickSizePx, .fill = kAxisColor, .anchor = TextAnchor::kMiddle};
  for (double t : l.time.ticks) {
    double px = l.Px(t);
    svg.Line(px, l.plot_y, px, bottom, {.stroke = kGridColor});
    svg.Line(px, bottom, px, bottom + kTickLengthPx, axis);
    svg.Text(px, bottom + kTickLengthPx + 4 + kTickSizePx, FormatTick(t, l.time.step), label);
  }
  svg.Line(l.plot_x, bottom, l.plot_x + l.plot_w, bottom, axis);
  if (l.axis_text.empty()) return;
  double y = bottom + kTickLengthPx + 8 + kTickSizePx + kLabelSizePx + 6;
  svg.Text(l.plot_x + l.plot_w / 2, y, EllipsizeToWidth(l.axis_text, kLabelSizePx, l.plot_w),
           {.size_px = kLabelSizePx, .anchor = TextAnchor::kMiddle});
}

std::string DefaultTooltip(const GanttChart& chart, const GanttBox& b) {
  std::string tip = b.label.empty() ? "" : b.label + "\n";
  tip += (chart.x_label.empty() ? "span" : chart.x_label) + ": " + FormatValue(b.start) + " to " +
         FormatValue(b.end) + "\n";
  return tip + (chart.value_label.empty() ? "value" : chart.value_label) + ": " + FormatValue(b.value);
}

void DrawBox(SvgWriter& svg, const GanttChart& chart, const Layout& l, const ColorScale& scale,
             const GanttBox& b) {
  double x0 = l.Px(std::min(b.start, b.end));
  double w = BoxWidthPx(l, b);
  double y = l.RowY(b.row) + (kRowPitchPx - kBoxHeightPx) / 2;
  Rgb fill = scale.ColorFor(b.value);
  svg.Rect(x0, y, w, kBoxHeightPx,
           {.fill = fill.Hex(), .stroke = "#ffffff", .stroke_width_px = w > 4 ? 0.75 : 0},
           b.tooltip.empty() ? DefaultTooltip(chart, b) : b.tooltip);
  BoxLabel label = FitLabel(b.label, w);
  if (label.text.empty()) return;
  svg.Text(x0 + w / 2, y + kBoxHeightPx / 2, label.text,
           {.size_px = label.size_px, .fill = TextColorOn(fill), .anchor = TextAnchor::kMiddle,
            .center_vertically = true});
}

void DrawBoxes(SvgWriter& svg, const GanttChart& chart, const Layout& l) {
  ColorScale scale = MakeColorScale(chart);
  svg.BeginGroup("boxes");
  for (const GanttBox& b : chart.boxes) {
    if (IsDrawable(b)) DrawBox(svg, chart, l, scale, b);
  }
  svg.EndGroup();
}

// Ticks of the colour bar, inside the scale's range; the lone value when degenerate.
LinearAxis ColorBarTicks(const ColorScale& scale, double bar_w_px) {
  // Denser than a time axis: the outer ticks usually fall outside the range.
  LinearAxis axis = FitLinearAxis(scale.min(), scale.max(), bar_w_px, kTickSizePx, 45);
  if (!(scale.min() < scale.max())) return {scale.min(), scale.min(), axis.step, {scale.min()}};
  double eps = (scale.max() - scale.min()) * 1e-9;
  std::erase_if(axis.ticks, [&](double t) { return t < scale.min() - eps || t > scale.max() + eps; });
  return axis;
}

void DrawColorBar(SvgWriter& svg, const GanttChart& chart, const Layout& l) {
  ColorScale scale = MakeColorScale(chart);
  double bar_w = std::min(kColorBarMaxWidthPx, l.plot_w * 0.5);
  double x = l.plot_x + l.plot_w - bar_w, y = l.color_bar_y;
  std::vector<GradientStop> stops;
  for (int i = 0; i <= 16; ++i) stops.push_back({i / 16.0, Viridis(i / 16.0).Hex()});
  svg.DefineHorizontalGradient(kGradientId, stops);
  svg.BeginGroup("color-bar");
  svg.Rect(x, y, bar_w, kColorBarHeightPx,
           {.fill = std::string("url(#") + kGradientId + ")", .stroke = "#888888", .stroke_width_px = 0.5});
  LinearAxis ticks = ColorBarTicks(scale, bar_w);
  TextStyle label{.size_px = kTickSizePx, .fill = kAxisColor, .anchor = TextAnchor::kMiddle};
  for (double t : ticks.ticks) {
    double px = x + scale.Normalize(t) * bar_w;
    svg.Line(px, y + kColorBarHeightPx, px, y + kColorBarHeightPx + kTickLengthPx, {.stroke = kAxisColor});
    svg.Text(px, y + kColorBarHeightPx + kTickLengthPx + 4 + kTickSizePx, FormatTick(t, ticks.step), label);
  }
  svg.Text(x - 10, y + kColorBarHeightPx / 2,
           EllipsizeToWidth(chart.value_label, kLabelSizePx, l.plot_w - bar_w - 10),
           {.size_px = kLabelSizePx, .anchor = TextAnchor::kEnd, .center_vertically = true});
  svg.EndGroup();
}

}  // namespace

std::string RenderGanttChart(const GanttChart& chart) {
  Layout l = MakeLayout(chart);
  SvgWriter svg(l.width_px, l.height_px);
  svg.SetTitle(chart.title);
  if (!chart.title.empty()) {
    svg.Text(l.width_px / 2, 28, EllipsizeToWidth(chart.title, kTitleSizePx, l.width_px - 24, true),
             {.size_px = kTitleSizePx, .anchor = TextAnchor::kMiddle, .bold = true});
  }
  DrawRows(svg, chart, l);
  DrawTimeAxis(svg, l);
  DrawBoxes(svg, chart, l);
  DrawColorBar(svg, chart, l);
  return svg.Finish();
}

}  // namespace perseus::report
