// Checks on numeric options whose errors read as sentences: CLI11's own
// PositiveNumber and NonNegativeNumber print the largest double as the range.
#pragma once

#include <CLI/CLI.hpp>

#include <charconv>
#include <climits>
#include <cmath>
#include <string>
#include <system_error>

#include "common/strings.h"

namespace perseus::cli {

// "expected a number <what>, got <text>" unless the text is a finite number
// for which `ok` holds.
template <typename Ok>
CLI::Validator NumberCheck(const std::string& what, Ok ok) {
  return CLI::Validator(
      [what, ok](std::string& text) -> std::string {
        double value = 0;
        if (!CLI::detail::lexical_cast(text, value) || !std::isfinite(value) || !ok(value)) {
          return "expected a number " + what + ", got " + text;
        }
        return "";
      },
      "NUMBER " + what);
}

// "expected a whole number <what>, got <text>" unless the text is a base-10
// integer that fits an int and for which `ok` holds; the text is rewritten
// to plain decimal, so "010" means ten (CLI11 itself would read octal).
// Attach with ->transform(): ->check() would discard the rewrite.
template <typename Ok>
CLI::Validator WholeNumberCheck(const std::string& what, Ok ok) {
  return CLI::Validator(
      [what, ok](std::string& text) -> std::string {
        long long value = 0;
        const char* end = text.data() + text.size();
        const auto [stop, error] = std::from_chars(text.data(), end, value);
        if (text.empty() || error != std::errc() || stop != end || value < INT_MIN || value > INT_MAX || !ok(value)) {
          return "expected a whole number " + what + ", got " + text;
        }
        text = std::to_string(value);
        return "";
      },
      "INT " + what);
}

// A finite number in [lo, hi] (CLI::Range lets NaN through: every comparison
// with it is false).
inline CLI::Validator NumberIn(double lo, double hi) {
  return NumberCheck(Format("in [%g, %g]", lo, hi),
                     [lo, hi](double v) { return v >= lo && v <= hi; });
}

inline const CLI::Validator kPositive = NumberCheck("> 0", [](double v) { return v > 0; });
inline const CLI::Validator kNonNegative = NumberCheck(">= 0", [](double v) { return v >= 0; });
inline const CLI::Validator kPositiveInt = WholeNumberCheck("> 0", [](long long v) { return v > 0; });
inline const CLI::Validator kNonNegativeInt = WholeNumberCheck(">= 0", [](long long v) { return v >= 0; });

}  // namespace perseus::cli
