// Markdown helpers.
#include "emulator/markdown.h"

#include <cmath>
#include <cstdio>

namespace perseus::emulator {

std::string Fixed(double value, int decimals) {
  if (!std::isfinite(value)) return "n/a";
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*f", decimals, value);
  std::string s = buf;
  if (s.find_first_not_of("-0.") == std::string::npos && s[0] == '-') s.erase(0, 1);  // no "-0.00"
  return s;
}

std::string Percent(double fraction, int decimals) { return Fixed(100 * fraction, decimals) + "%"; }

std::string Thousands(long value) {
  std::string digits = std::to_string(value < 0 ? -value : value), out;
  for (size_t i = 0; i < digits.size(); ++i) {
    if (i > 0 && (digits.size() - i) % 3 == 0) out += ',';
    out += digits[i];
  }
  return value < 0 ? "-" + out : out;
}

std::string MarkdownTable::Render() const {
  auto line = [](const std::vector<std::string>& cells) {
    std::string s = "|";
    for (const std::string& c : cells) s += " " + c + " |";
    return s + "\n";
  };
  std::string out = line(header_) + "|";
  for (size_t i = 0; i < header_.size(); ++i) out += i == 0 ? "---|" : "---:|";
  out += "\n";
  for (const auto& row : rows_) out += line(row);
  return out;
}

}  // namespace perseus::emulator
