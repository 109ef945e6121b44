// SVG document builder.
#include "report/svg_writer.h"

#include <array>
#include <cmath>
#include <cstdio>

namespace perseus::report {
namespace {

const char* AnchorName(TextAnchor anchor) {
  switch (anchor) {
    case TextAnchor::kStart: return "start";
    case TextAnchor::kMiddle: return "middle";
    case TextAnchor::kEnd: return "end";
  }
  return "start";
}

// Advance widths of ASCII 32..126 in DejaVu Sans, in 1/1000 em. DejaVu is
// the default sans-serif on Linux and wider than Helvetica or Arial, so
// layouts sized with it also fit where browsers pick a narrower font.
constexpr std::array<short, 95> kRegularWidths = {
    318, 401, 460, 838, 636, 950, 780, 275, 390, 390, 500, 838, 318, 361, 318, 337,
    636, 636, 636, 636, 636, 636, 636, 636, 636, 636, 337, 337, 838, 838, 838, 531,
    1000, 684, 686, 698, 770, 632, 575, 775, 752, 295, 295, 656, 557, 863, 748, 787,
    603, 787, 695, 635, 611, 732, 684, 989, 685, 611, 685, 390, 337, 390, 838, 500,
    500, 613, 635, 550, 635, 615, 352, 635, 634, 278, 278, 579, 278, 974, 634, 612,
    635, 635, 411, 521, 392, 634, 592, 818, 592, 592, 525, 636, 337, 636, 838,
};
constexpr std::array<short, 95> kBoldWidths = {
    348, 456, 521, 838, 696, 1002, 872, 306, 457, 457, 523, 838, 380, 415, 380, 365,
    696, 696, 696, 696, 696, 696, 696, 696, 696, 696, 400, 400, 838, 838, 838, 580,
    1000, 774, 762, 734, 830, 683, 683, 821, 837, 372, 372, 775, 637, 995, 837, 850,
    733, 850, 770, 720, 682, 812, 774, 1103, 771, 724, 725, 457, 365, 457, 838, 500,
    500, 675, 716, 593, 716, 678, 435, 716, 712, 343, 343, 665, 343, 1042, 712, 687,
    716, 716, 493, 595, 478, 712, 652, 924, 645, 652, 582, 712, 365, 712, 838,
};

// Width of one byte of UTF-8 text in 1/1000 em.
int CharWidthMilliEm(unsigned char c, bool bold) {
  if (c >= 0x80) return (c & 0xC0) == 0x80 ? 0 : 800;  // count a sequence once, at its lead byte
  if (c < 32 || c > 126) return 0;
  return (bold ? kBoldWidths : kRegularWidths)[c - 32];
}

}  // namespace

std::string EscapeXml(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (char c : text) {
    switch (c) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      case '\'': out += "&apos;"; break;
      default:
        if (static_cast<unsigned char>(c) >= 0x20 || c == '\t' || c == '\n' || c == '\r') out += c;
    }
  }
  return out;
}

std::string FormatNumber(double value) {
  if (!std::isfinite(value)) return "0";
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.2f", value);
  std::string s = buf;
  while (s.back() == '0') s.pop_back();
  if (s.back() == '.') s.pop_back();
  return s == "-0" ? "0" : s;
}

double EstimateTextWidthPx(std::string_view text, double size_px, bool bold) {
  int milli_em = 0;
  for (char c : text) milli_em += CharWidthMilliEm(static_cast<unsigned char>(c), bold);
  return milli_em * size_px / 1000;
}

std::string EllipsizeToWidth(std::string_view text, double size_px, double max_width_px,
                             bool bold) {
  if (EstimateTextWidthPx(text, size_px, bold) <= max_width_px) return std::string(text);
  double budget = max_width_px - EstimateTextWidthPx("...", size_px, bold);
  std::size_t n = 0;
  double used = 0;
  while (n < text.size()) {
    std::size_t next = n + 1;  // keep UTF-8 sequences whole
    while (next < text.size() && (static_cast<unsigned char>(text[next]) & 0xC0) == 0x80) ++next;
    double w = EstimateTextWidthPx(text.substr(n, next - n), size_px, bold);
    if (used + w > budget) break;
    used += w;
    n = next;
  }
  return std::string(text.substr(0, n)) + "...";
}

SvgWriter::SvgWriter(double width_px, double height_px)
    : width_px_(width_px), height_px_(height_px) {}

void SvgWriter::SetTitle(std::string_view title) { title_ = EscapeXml(title); }

void SvgWriter::DefineClipRect(std::string_view id, double x, double y, double w, double h) {
  defs_ += "<clipPath id=\"" + EscapeXml(id) + "\"><rect x=\"" + FormatNumber(x) + "\" y=\"" +
           FormatNumber(y) + "\" width=\"" + FormatNumber(w) + "\" height=\"" + FormatNumber(h) +
           "\"/></clipPath>";
}

void SvgWriter::DefineHorizontalGradient(std::string_view id,
                                         const std::vector<GradientStop>& stops) {
  defs_ += "<linearGradient id=\"" + EscapeXml(id) + "\" x1=\"0\" y1=\"0\" x2=\"1\" y2=\"0\">";
  for (const GradientStop& s : stops) {
    defs_ += "<stop offset=\"" + FormatNumber(s.offset * 100) + "%\" stop-color=\"" +
             EscapeXml(s.color) + "\"/>";
  }
  defs_ += "</linearGradient>";
}

void SvgWriter::OpenTag(std::string_view name) {
  body_ += '<';
  body_ += name;
}

void SvgWriter::Attr(std::string_view name, double value) { Attr(name, FormatNumber(value)); }

void SvgWriter::Attr(std::string_view name, std::string_view value) {
  body_ += ' ';
  body_ += name;
  body_ += "=\"";
  body_ += EscapeXml(value);
  body_ += '"';
}

void SvgWriter::StyleAttrs(const ShapeStyle& style) {
  Attr("fill", style.fill.empty() ? "none" : style.fill);
  if (!style.stroke.empty()) {
    Attr("stroke", style.stroke);
    Attr("stroke-width", style.stroke_width_px);
  }
  if (!style.dash.empty()) Attr("stroke-dasharray", style.dash);
  if (style.opacity < 1) Attr("opacity", style.opacity);
}

// Ends an element: self-closing, or with a <title> child when there is a tooltip.
void SvgWriter::CloseTag(std::string_view name, std::string_view tooltip) {
  if (tooltip.empty()) {
    body_ += "/>\n";
    return;
  }
  body_ += "><title>" + EscapeXml(tooltip) + "</title></";
  body_ += name;
  body_ += ">\n";
}

void SvgWriter::Rect(double x, double y, double w, double h, const ShapeStyle& style,
                     std::string_view tooltip) {
  OpenTag("rect");
  Attr("x", x);
  Attr("y", y);
  Attr("width", std::isfinite(w) && w > 0 ? w : 0);
  Attr("height", std::isfinite(h) && h > 0 ? h : 0);
  StyleAttrs(style);
  CloseTag("rect", tooltip);
}

void SvgWriter::Line(double x1, double y1, double x2, double y2, const ShapeStyle& style) {
  OpenTag("line");
  Attr("x1", x1);
  Attr("y1", y1);
  Attr("x2", x2);
  Attr("y2", y2);
  StyleAttrs(style);
  CloseTag("line", {});
}

void SvgWriter::Polyline(const std::vector<std::pair<double, double>>& points,
                         const ShapeStyle& style) {
  std::string coords;
  for (const auto& [x, y] : points) {
    if (!coords.empty()) coords += ' ';
    coords += FormatNumber(x) + "," + FormatNumber(y);
  }
  OpenTag("polyline");
  Attr("points", coords);
  StyleAttrs(style);
  Attr("stroke-linejoin", "round");
  CloseTag("polyline", {});
}

void SvgWriter::Circle(double cx, double cy, double r, const ShapeStyle& style,
                       std::string_view tooltip) {
  OpenTag("circle");
  Attr("cx", cx);
  Attr("cy", cy);
  Attr("r", std::isfinite(r) && r > 0 ? r : 0);
  StyleAttrs(style);
  CloseTag("circle", tooltip);
}

void SvgWriter::Text(double x, double y, std::string_view text, const TextStyle& style) {
  // Shifting by ~0.35 em centres digits and capitals without relying on
  // dominant-baseline, which renderers support unevenly.
  if (style.center_vertically) y += 0.35 * style.size_px;
  OpenTag("text");
  Attr("x", x);
  Attr("y", y);
  Attr("font-size", style.size_px);
  Attr("fill", style.fill);
  if (style.anchor != TextAnchor::kStart) Attr("text-anchor", AnchorName(style.anchor));
  if (style.bold) Attr("font-weight", "bold");
  if (style.rotate_deg != 0) {
    Attr("transform", "rotate(" + FormatNumber(style.rotate_deg) + " " + FormatNumber(x) + " " +
                          FormatNumber(y) + ")");
  }
  body_ += '>' + EscapeXml(text) + "</text>\n";
}

void SvgWriter::BeginGroup(std::string_view css_class, std::string_view clip_id) {
  OpenTag("g");
  if (!css_class.empty()) Attr("class", css_class);
  if (!clip_id.empty()) Attr("clip-path", "url(#" + std::string(clip_id) + ")");
  body_ += ">\n";
  ++open_groups_;
}

void SvgWriter::EndGroup() {
  if (open_groups_ == 0) return;
  body_ += "</g>\n";
  --open_groups_;
}

std::string SvgWriter::Finish() {
  while (open_groups_ > 0) EndGroup();
  std::string w = FormatNumber(width_px_), h = FormatNumber(height_px_);
  std::string out = "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" + w + "\" height=\"" + h +
                    "\" viewBox=\"0 0 " + w + " " + h + "\" font-family=\"sans-serif\">\n";
  if (!title_.empty()) out += "<title>" + title_ + "</title>\n";
  if (!defs_.empty()) out += "<defs>" + defs_ + "</defs>\n";
  out += "<rect x=\"0\" y=\"0\" width=\"" + w + "\" height=\"" + h + "\" fill=\"#ffffff\"/>\n";
  return out + body_ + "</svg>\n";
}

}  // namespace perseus::report
