// Viridis and the categorical palette.
#include "report/color_scale.h"

#include <array>
#include <cmath>
#include <cstdio>

namespace perseus::report {
namespace {

// Viridis (matplotlib's 256-entry table) sampled at 17 evenly spaced points;
// linear interpolation between them is visually indistinguishable from the full map.
constexpr std::array<Rgb, 17> kViridis = {{
    {0x44, 0x01, 0x54}, {0x48, 0x18, 0x6a}, {0x47, 0x2d, 0x7b}, {0x42, 0x40, 0x86},
    {0x3b, 0x52, 0x8b}, {0x33, 0x63, 0x8d}, {0x2c, 0x72, 0x8e}, {0x26, 0x82, 0x8e},
    {0x21, 0x91, 0x8c}, {0x1f, 0x9f, 0x88}, {0x27, 0xad, 0x81}, {0x3d, 0xbc, 0x74},
    {0x5c, 0xc8, 0x63}, {0x81, 0xd3, 0x4d}, {0xaa, 0xdc, 0x32}, {0xd5, 0xe2, 0x1a},
    {0xfd, 0xe7, 0x25},
}};

// matplotlib's tab10.
constexpr std::array<const char*, 10> kCategorical = {
    "#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd",
    "#8c564b", "#e377c2", "#7f7f7f", "#bcbd22", "#17becf",
};

std::uint8_t Lerp(std::uint8_t a, std::uint8_t b, double f) {
  return static_cast<std::uint8_t>(std::lround(a + (b - a) * f));
}

double LinearChannel(std::uint8_t c) {
  double v = c / 255.0;
  return v <= 0.04045 ? v / 12.92 : std::pow((v + 0.055) / 1.055, 2.4);
}

}  // namespace

std::string Rgb::Hex() const {
  char buf[8];
  std::snprintf(buf, sizeof buf, "#%02x%02x%02x", r, g, b);
  return buf;
}

double Rgb::Luminance() const {
  return 0.2126 * LinearChannel(r) + 0.7152 * LinearChannel(g) + 0.0722 * LinearChannel(b);
}

Rgb Viridis(double t) {
  if (!(t > 0)) return kViridis.front();  // also catches NaN
  if (t >= 1) return kViridis.back();
  double pos = t * (kViridis.size() - 1);
  std::size_t i = static_cast<std::size_t>(pos);
  double f = pos - static_cast<double>(i);
  const Rgb& a = kViridis[i];
  const Rgb& b = kViridis[i + 1];
  return {Lerp(a.r, b.r, f), Lerp(a.g, b.g, f), Lerp(a.b, b.b, f)};
}

ColorScale::ColorScale(double min, double max) : min_(min), max_(max) {}

double ColorScale::Normalize(double value) const {
  double span = max_ - min_;
  if (!std::isfinite(span) || span == 0 || std::isnan(value)) return 0.5;
  double t = (value - min_) / span;
  return t < 0 ? 0 : (t > 1 ? 1 : t);
}

std::string CategoricalColor(std::size_t index) {
  return kCategorical[index % kCategorical.size()];
}

std::string TextColorOn(const Rgb& background) {
  // Contrast against black vs. white; the crossover is at luminance ~0.18.
  return background.Luminance() > 0.18 ? "#000000" : "#ffffff";
}

}  // namespace perseus::report
