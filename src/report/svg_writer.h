// A tiny SVG document builder for perseus's plots.
//
// SvgWriter appends shapes (rect, line, polyline, circle, text) in paint order
// and returns the finished document from Finish(). All text, attribute values
// and tooltips are XML-escaped, and numbers are written compactly ("12.5", not
// "12.500000"); non-finite coordinates are written as 0 so a bad input can
// never put "nan" into a file. Layout helpers (EstimateTextWidthPx) are
// approximations for sans-serif fonts, good enough to avoid overlaps.
// Not thread-safe; use one writer per document.
#pragma once

#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace perseus::report {

// Paint for shapes. Empty strings leave the attribute out.
struct ShapeStyle {
  std::string fill = "none";
  std::string stroke = "";  // initialisers keep -Wmissing-field-initializers quiet
  double stroke_width_px = 1;
  std::string dash = "";  // stroke-dasharray, e.g. "6 4"
  double opacity = 1;   // applies to fill and stroke
};

enum class TextAnchor { kStart, kMiddle, kEnd };

struct TextStyle {
  double size_px = 12;
  std::string fill = "#222222";
  TextAnchor anchor = TextAnchor::kStart;
  bool bold = false;
  double rotate_deg = 0;      // rotation about the anchor point
  bool center_vertically = false;  // y is the middle of the text, not its baseline
};

// One colour stop of a gradient: offset in [0, 1] and a colour.
struct GradientStop {
  double offset;
  std::string color;
};

class SvgWriter {
 public:
  SvgWriter(double width_px, double height_px);

  // The document's <title> (shown by viewers and screen readers).
  void SetTitle(std::string_view title);
  // A clip rectangle to reference from BeginGroup(clip_id).
  void DefineClipRect(std::string_view id, double x, double y, double w, double h);
  // A left-to-right linear gradient usable as fill "url(#id)".
  void DefineHorizontalGradient(std::string_view id, const std::vector<GradientStop>& stops);

  // Shapes. A non-empty tooltip becomes a <title> child shown on hover.
  void Rect(double x, double y, double w, double h, const ShapeStyle& style,
            std::string_view tooltip = {});
  void Line(double x1, double y1, double x2, double y2, const ShapeStyle& style);
  void Polyline(const std::vector<std::pair<double, double>>& points, const ShapeStyle& style);
  void Circle(double cx, double cy, double r, const ShapeStyle& style, std::string_view tooltip = {});
  void Text(double x, double y, std::string_view text, const TextStyle& style);

  // Groups nest; `css_class` and `clip_id` may be empty.
  void BeginGroup(std::string_view css_class = {}, std::string_view clip_id = {});
  // Closes the innermost open group; does nothing when none is open.
  void EndGroup();

  // The complete document; closes any groups still open.
  std::string Finish();

 private:
  void OpenTag(std::string_view name);
  void Attr(std::string_view name, double value);
  void Attr(std::string_view name, std::string_view value);
  void StyleAttrs(const ShapeStyle& style);
  void CloseTag(std::string_view name, std::string_view tooltip);

  double width_px_, height_px_;
  std::string title_;
  std::string defs_;
  std::string body_;
  int open_groups_ = 0;
};

// Escapes & < > " ' for text and attribute values; drops control characters
// that XML 1.0 forbids.
std::string EscapeXml(std::string_view text);

// Compact decimal: at most two decimals, trailing zeros trimmed, "-0" as "0";
// NaN and infinities become "0".
std::string FormatNumber(double value);

// Approximate rendered width of `text` in a sans-serif font of `size_px`
// (DejaVu Sans metrics; non-ASCII characters count 0.8 em).
double EstimateTextWidthPx(std::string_view text, double size_px, bool bold = false);

// `text` shortened with a trailing "..." so its estimated width fits
// `max_width_px`; unchanged when it already fits.
std::string EllipsizeToWidth(std::string_view text, double size_px, double max_width_px,
                             bool bold = false);

}  // namespace perseus::report
