// Line chart layout and drawing.
#include "report/line_chart.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>

#include "report/axis.h"
#include "report/color_scale.h"
#include "report/svg_writer.h"

namespace perseus::report {
namespace {

constexpr double kTitleSizePx = 16;
constexpr double kLabelSizePx = 13;
constexpr double kTickSizePx = 11;
constexpr double kLegendSizePx = 12;
constexpr double kTickLengthPx = 5;
constexpr double kLegendMaxTextPx = 220;
constexpr double kLegendRowPx = 18;
constexpr double kLegendSwatchPx = 24;
constexpr const char* kAxisColor = "#444444";
constexpr const char* kGridColor = "#e3e3e3";

// Range of the finite values seen so far; empty until the first Add.
struct Bounds {
  double lo = std::numeric_limits<double>::infinity();
  double hi = -std::numeric_limits<double>::infinity();
  void Add(double v) {
    if (!std::isfinite(v)) return;
    lo = std::min(lo, v);
    hi = std::max(hi, v);
  }
  bool empty() const { return lo > hi; }
};

struct Box {
  double x, y, w, h;
  double right() const { return x + w; }
  double bottom() const { return y + h; }
  bool Overlaps(const Box& o) const {
    return x < o.right() && o.x < right() && y < o.bottom() && o.y < bottom();
  }
  bool Contains(const Box& o) const {
    return o.x >= x && o.right() <= right() && o.y >= y && o.bottom() <= bottom();
  }
};

// The plot area in pixels and the axes that map data onto it.
struct Frame {
  Box plot;
  LinearAxis x, y;
  double Px(double v) const { return plot.x + (v - x.min) / (x.max - x.min) * plot.w; }
  double Py(double v) const { return plot.bottom() - (v - y.min) / (y.max - y.min) * plot.h; }
};

bool IsFinitePoint(const std::pair<double, double>& p) {
  return std::isfinite(p.first) && std::isfinite(p.second);
}

// A value for tooltips; "n/a" rather than "nan" or "inf".
std::string FormatValue(double v) {
  if (!std::isfinite(v)) return "n/a";
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.4g", v);
  return buf;
}

std::string SeriesColor(const LineChart& chart, std::size_t i) {
  const std::string& c = chart.series[i].color;
  return c.empty() ? CategoricalColor(i) : c;
}

void AddDataBounds(const LineChart& chart, Bounds& xs, Bounds& ys) {
  for (const Series& s : chart.series) {
    for (const auto& p : s.points) {
      if (!IsFinitePoint(p)) continue;
      xs.Add(p.first);
      ys.Add(p.second);
    }
  }
  for (const Annotation& a : chart.annotations) {
    if (!std::isfinite(a.x) || !std::isfinite(a.y)) continue;
    xs.Add(a.x);
    ys.Add(a.y);
  }
}

// Nice ticks for [lo, hi], or [0, 1] when nothing was seen.
LinearAxis AxisFor(const Bounds& b, int target_intervals) {
  return b.empty() ? MakeLinearAxis(0, 1, target_intervals)
                   : MakeLinearAxis(b.lo, b.hi, target_intervals);
}

// Clamps the axis to the chart's fixed y bounds, keeping the ticks inside.
void ApplyFixedYRange(const LineChart& chart, LinearAxis& axis) {
  double lo = chart.y_min.value_or(axis.min), hi = chart.y_max.value_or(axis.max);
  if (!std::isfinite(lo) || !std::isfinite(hi) || !(lo < hi)) return;
  double eps = (hi - lo) * 1e-9;
  std::erase_if(axis.ticks, [&](double t) { return t < lo - eps || t > hi + eps; });
  axis.min = lo;
  axis.max = hi;
}

LinearAxis MakeYAxis(const LineChart& chart, const Bounds& ys, double plot_h_px) {
  Bounds b = ys;
  if (chart.y_min) b.Add(*chart.y_min);
  if (chart.y_max) b.Add(*chart.y_max);
  int target = std::max(2, static_cast<int>(std::lround(plot_h_px / 60)));
  LinearAxis axis = AxisFor(b, target);
  ApplyFixedYRange(chart, axis);
  return axis;
}

double MaxTickLabelWidthPx(const LinearAxis& axis) {
  double w = 0;
  for (double t : axis.ticks) w = std::max(w, EstimateTextWidthPx(FormatTick(t, axis.step), kTickSizePx));
  return w;
}

bool HasLegend(const LineChart& chart) {
  return std::any_of(chart.series.begin(), chart.series.end(),
                     [](const Series& s) { return !s.name.empty(); });
}

double LegendWidthPx(const LineChart& chart) {
  double text_px = 0;
  for (const Series& s : chart.series) {
    text_px = std::max(text_px, EstimateTextWidthPx(s.name, kLegendSizePx));
  }
  return std::min(text_px, kLegendMaxTextPx) + kLegendSwatchPx + 32;
}

Frame Layout(const LineChart& chart, double width_px, double height_px) {
  Bounds xs, ys;
  AddDataBounds(chart, xs, ys);
  double top = chart.title.empty() ? 16 : 46;
  double bottom = kTickLengthPx + 8 + kTickSizePx + (chart.x_label.empty() ? 0 : kLabelSizePx + 14) + 12;
  Frame f;
  f.plot.y = top;
  f.plot.h = std::max(20.0, height_px - top - bottom);
  f.y = MakeYAxis(chart, ys, f.plot.h);
  f.plot.x = 14 + (chart.y_label.empty() ? 0 : kLabelSizePx + 10) + MaxTickLabelWidthPx(f.y) +
             kTickLengthPx + 6;
  double right = HasLegend(chart) ? LegendWidthPx(chart) + 20 : 24;
  f.plot.w = std::max(20.0, width_px - f.plot.x - right);
  f.x = xs.empty() ? FitLinearAxis(0, 1, f.plot.w, kTickSizePx)
                   : FitLinearAxis(xs.lo, xs.hi, f.plot.w, kTickSizePx);
  return f;
}

void DrawGridAndAxes(SvgWriter& svg, const Frame& f) {
  ShapeStyle grid{.stroke = kGridColor};
  ShapeStyle axis{.stroke = kAxisColor};
  TextStyle label{.size_px = kTickSizePx, .fill = kAxisColor};
  label.anchor = TextAnchor::kMiddle;
  for (double t : f.x.ticks) {
    double px = f.Px(t);
    svg.Line(px, f.plot.y, px, f.plot.bottom(), grid);
    svg.Line(px, f.plot.bottom(), px, f.plot.bottom() + kTickLengthPx, axis);
    svg.Text(px, f.plot.bottom() + kTickLengthPx + 4 + kTickSizePx, FormatTick(t, f.x.step), label);
  }
  label.anchor = TextAnchor::kEnd;
  label.center_vertically = true;
  for (double t : f.y.ticks) {
    double py = f.Py(t);
    svg.Line(f.plot.x, py, f.plot.right(), py, grid);
    svg.Line(f.plot.x - kTickLengthPx, py, f.plot.x, py, axis);
    svg.Text(f.plot.x - kTickLengthPx - 4, py, FormatTick(t, f.y.step), label);
  }
  svg.Line(f.plot.x, f.plot.y, f.plot.x, f.plot.bottom(), axis);
  svg.Line(f.plot.x, f.plot.bottom(), f.plot.right(), f.plot.bottom(), axis);
}

void DrawTitles(SvgWriter& svg, const LineChart& chart, const Frame& f, double width_px,
                double height_px) {
  TextStyle style{.size_px = kTitleSizePx, .anchor = TextAnchor::kMiddle, .bold = true};
  if (!chart.title.empty()) {
    svg.Text(width_px / 2, 28, EllipsizeToWidth(chart.title, kTitleSizePx, width_px - 24, true), style);
  }
  style = {.size_px = kLabelSizePx, .anchor = TextAnchor::kMiddle};
  if (!chart.x_label.empty()) {
    svg.Text(f.plot.x + f.plot.w / 2, height_px - 12,
             EllipsizeToWidth(chart.x_label, kLabelSizePx, f.plot.w), style);
  }
  if (!chart.y_label.empty()) {
    style.rotate_deg = -90;
    svg.Text(14 + kLabelSizePx * 0.8, f.plot.y + f.plot.h / 2,
             EllipsizeToWidth(chart.y_label, kLabelSizePx, f.plot.h), style);
  }
}

void DrawMarkers(SvgWriter& svg, const Frame& f, const Series& s, const std::string& color) {
  ShapeStyle dot{.fill = color, .stroke = "#ffffff", .stroke_width_px = 1};
  for (const auto& p : s.points) {
    if (!IsFinitePoint(p)) continue;
    std::string tip = (s.name.empty() ? "" : s.name + ": ") + "(" + FormatValue(p.first) + ", " +
                      FormatValue(p.second) + ")";
    svg.Circle(f.Px(p.first), f.Py(p.second), 3.5, dot, tip);
  }
}

bool HasFinitePoint(const LineChart& chart) {
  return std::any_of(chart.series.begin(), chart.series.end(), [](const Series& s) {
    return std::any_of(s.points.begin(), s.points.end(), IsFinitePoint);
  });
}

void DrawSeries(SvgWriter& svg, const LineChart& chart, const Frame& f) {
  if (!HasFinitePoint(chart)) {
    svg.Text(f.plot.x + f.plot.w / 2, f.plot.y + f.plot.h / 2, "no data",
             {.size_px = kLabelSizePx, .fill = "#888888", .anchor = TextAnchor::kMiddle});
  }
  // The id names the rectangle, so two charts inlined into one HTML page can
  // only share an id when their clip rectangles are identical anyway.
  std::string clip_id = "perseus-clip-" + FormatNumber(f.plot.x) + "-" + FormatNumber(f.plot.y) +
                        "-" + FormatNumber(f.plot.w) + "-" + FormatNumber(f.plot.h);
  svg.DefineClipRect(clip_id, f.plot.x, f.plot.y, f.plot.w, f.plot.h);
  svg.BeginGroup("series", clip_id);
  for (std::size_t i = 0; i < chart.series.size(); ++i) {
    const Series& s = chart.series[i];
    std::string color = SeriesColor(chart, i);
    std::vector<std::pair<double, double>> px;
    for (const auto& p : s.points) {
      if (IsFinitePoint(p)) px.emplace_back(f.Px(p.first), f.Py(p.second));
    }
    if (s.line && px.size() > 1) {
      svg.Polyline(px, {.stroke = color, .stroke_width_px = 2, .dash = s.dashed ? "6 4" : ""});
    }
    // A lone point has no line to show, so it always gets a marker.
    if (s.markers || px.size() == 1) DrawMarkers(svg, f, s, color);
  }
  svg.EndGroup();
}

// Label box for candidate position `k` around the point (px, py): right then
// left of the point, above then below, moving further out as k grows.
constexpr int kLabelCandidates = 12;
Box LabelBoxAt(int k, double px, double py, double w, double h) {
  static constexpr double kDy[] = {-8, 8, -24, 24, -40, 40};
  double dy = kDy[k / 2];
  double x = k % 2 == 0 ? px + 8 : px - 8 - w;
  double y = dy < 0 ? py + dy - h : py + dy;
  return {x, y, w, h};
}

int CountOverlaps(const Box& b, const std::vector<Box>& obstacles) {
  return static_cast<int>(
      std::count_if(obstacles.begin(), obstacles.end(), [&](const Box& o) { return o.Overlaps(b); }));
}

// The candidate inside the plot that overlaps the fewest obstacles (data
// points, annotation rings, earlier labels), nearest first on ties;
// above-right when none fits inside.
Box PlaceLabel(const Frame& f, double px, double py, double w, double h,
               const std::vector<Box>& obstacles) {
  int best = 0, best_overlaps = -1;
  for (int k = 0; k < kLabelCandidates; ++k) {
    Box b = LabelBoxAt(k, px, py, w, h);
    if (!f.plot.Contains(b)) continue;
    int n = CountOverlaps(b, obstacles);
    if (best_overlaps < 0 || n < best_overlaps) best = k, best_overlaps = n;
    if (n == 0) break;
  }
  return LabelBoxAt(best, px, py, w, h);
}

bool InAxisRange(const LinearAxis& axis, double v) {
  double eps = (axis.max - axis.min) * 1e-9;
  return std::isfinite(v) && v >= axis.min - eps && v <= axis.max + eps;
}

// Boxes around every drawn data point and annotation ring, for label placement.
std::vector<Box> PointObstacles(const LineChart& chart, const Frame& f) {
  std::vector<Box> boxes;
  auto add = [&](double x, double y, double r) {
    if (std::isfinite(x) && std::isfinite(y)) boxes.push_back({f.Px(x) - r, f.Py(y) - r, 2 * r, 2 * r});
  };
  for (const Series& s : chart.series) {
    for (const auto& p : s.points) add(p.first, p.second, 4);
  }
  for (const Annotation& a : chart.annotations) add(a.x, a.y, 7);
  return boxes;
}

void DrawAnnotations(SvgWriter& svg, const LineChart& chart, const Frame& f) {
  constexpr double kSizePx = 11;
  std::vector<Box> placed = PointObstacles(chart, f);
  svg.BeginGroup("annotations");
  for (const Annotation& a : chart.annotations) {
    if (!InAxisRange(f.x, a.x) || !InAxisRange(f.y, a.y)) continue;
    double px = f.Px(a.x), py = f.Py(a.y);
    std::string tip = a.label + " (" + FormatValue(a.x) + ", " + FormatValue(a.y) + ")";
    svg.Circle(px, py, 6, {.stroke = "#111111", .stroke_width_px = 1.5}, tip);
    svg.Circle(px, py, 2, {.fill = "#111111"});
    if (a.label.empty()) continue;
    Box b = PlaceLabel(f, px, py, EstimateTextWidthPx(a.label, kSizePx) + 6, kSizePx + 6, placed);
    placed.push_back(b);
    svg.Rect(b.x, b.y, b.w, b.h, {.fill = "#ffffff", .stroke = "#bbbbbb", .opacity = 0.85});
    svg.Text(b.x + 3, b.y + b.h / 2, a.label,
             {.size_px = kSizePx, .fill = "#111111", .center_vertically = true});
  }
  svg.EndGroup();
}

void DrawLegendEntry(SvgWriter& svg, const Series& s, const std::string& color, double x, double y) {
  ShapeStyle stroke{.stroke = color, .stroke_width_px = 2, .dash = s.dashed ? "6 4" : ""};
  if (s.line) svg.Line(x, y, x + kLegendSwatchPx, y, stroke);
  if (s.markers || !s.line) svg.Circle(x + kLegendSwatchPx / 2, y, 3.5, {.fill = color});
  svg.Text(x + kLegendSwatchPx + 6, y, EllipsizeToWidth(s.name, kLegendSizePx, kLegendMaxTextPx),
           {.size_px = kLegendSizePx, .center_vertically = true});
}

// Named series in legend order; past `max_rows`, the last row becomes "+N more".
std::vector<std::size_t> LegendRows(const LineChart& chart, int max_rows, int& hidden) {
  std::vector<std::size_t> rows;
  for (std::size_t i = 0; i < chart.series.size(); ++i) {
    if (!chart.series[i].name.empty()) rows.push_back(i);
  }
  hidden = 0;
  if (static_cast<int>(rows.size()) > max_rows) {
    std::size_t keep = static_cast<std::size_t>(std::max(max_rows - 1, 0));
    hidden = static_cast<int>(rows.size() - keep);
    rows.resize(keep);
  }
  return rows;
}

void DrawLegend(SvgWriter& svg, const LineChart& chart, const Frame& f, double height_px) {
  if (!HasLegend(chart)) return;
  double x = f.plot.right() + 12, y = f.plot.y;
  int hidden = 0;
  int max_rows = std::max(1, static_cast<int>((height_px - y - 20) / kLegendRowPx));
  std::vector<std::size_t> rows = LegendRows(chart, max_rows, hidden);
  double rows_shown = static_cast<double>(rows.size()) + (hidden > 0 ? 1 : 0);
  svg.BeginGroup("legend");
  svg.Rect(x, y, LegendWidthPx(chart) - 4, rows_shown * kLegendRowPx + 8,
           {.fill = "#ffffff", .stroke = "#cccccc"});
  double row_y = y + 4 + kLegendRowPx / 2;
  for (std::size_t i : rows) {
    DrawLegendEntry(svg, chart.series[i], SeriesColor(chart, i), x + 8, row_y);
    row_y += kLegendRowPx;
  }
  if (hidden > 0) {
    svg.Text(x + 8, row_y, "+" + std::to_string(hidden) + " more",
             {.size_px = kLegendSizePx, .fill = "#666666", .center_vertically = true});
  }
  svg.EndGroup();
}

double SaneSize(double px, double fallback) {
  return std::isfinite(px) && px >= 100 ? std::min(px, 20000.0) : fallback;
}

}  // namespace

std::string RenderLineChart(const LineChart& chart) {
  double width_px = SaneSize(chart.width_px, 800), height_px = SaneSize(chart.height_px, 500);
  Frame f = Layout(chart, width_px, height_px);
  SvgWriter svg(width_px, height_px);
  svg.SetTitle(chart.title);
  DrawGridAndAxes(svg, f);
  DrawTitles(svg, chart, f, width_px, height_px);
  DrawSeries(svg, chart, f);
  DrawAnnotations(svg, chart, f);
  DrawLegend(svg, chart, f, height_px);
  return svg.Finish();
}

}  // namespace perseus::report
