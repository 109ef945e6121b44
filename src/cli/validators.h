// Checks on numeric options whose errors read as sentences: CLI11's own
// PositiveNumber and NonNegativeNumber print the largest double as the range.
#pragma once

#include <CLI/CLI.hpp>

#include <cmath>
#include <string>

namespace perseus::cli {

// "expected a number <what>, got <text>" unless `ok` holds for the parsed value.
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

inline const CLI::Validator kPositive = NumberCheck("> 0", [](double v) { return v > 0; });
inline const CLI::Validator kNonNegative = NumberCheck(">= 0", [](double v) { return v >= 0; });

}  // namespace perseus::cli
