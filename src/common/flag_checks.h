// Checks on numeric flags of perseus and perseusd, whose errors read as
// sentences: CLI11's own PositiveNumber and NonNegativeNumber print the
// largest double as the range, CLI::Range lets NaN through, and CLI11 reads
// integers with strtoll's base 0 ("0x10" is 16, "010" is 8). Numbers are read
// by ParseDecimal and std::from_chars: decimal only. Header-only: include it
// only where CLI11 is linked.
#pragma once

#include <CLI/CLI.hpp>

#include <charconv>
#include <climits>
#include <cmath>
#include <string>
#include <system_error>

#include "common/strings.h"

namespace perseus {

// "expected a number <what>, got <text>" unless the text is a finite number
// for which `ok` holds.
template <typename Ok>
CLI::Validator NumberCheck(const std::string& what, Ok ok) {
  return CLI::Validator(
      [what, ok](std::string& text) -> std::string {
        std::optional<double> value = ParseDecimal(text);
        if (!value || !ok(*value)) return "expected a number" + (what.empty() ? "" : " " + what) + ", got " + text;
        return "";
      },
      what.empty() ? "NUMBER" : "NUMBER " + what);
}

// "expected a whole number <what>, got <text>" unless the text is a base-10
// integer for which `ok` holds (`ok` must bound it to the option's type);
// the text is rewritten to plain decimal, so "010" means ten (CLI11 itself
// would read octal). Attach with ->transform(): ->check() would discard the
// rewrite.
template <typename Ok>
CLI::Validator WholeNumberCheck(const std::string& what, Ok ok) {
  return CLI::Validator(
      [what, ok](std::string& text) -> std::string {
        long long value = 0;
        const char* begin = text.data() + (text.size() > 1 && text[0] == '+' && text[1] != '-');
        const char* end = text.data() + text.size();
        const auto [stop, error] = std::from_chars(begin, end, value);
        if (begin == end || error != std::errc() || stop != end || !ok(value)) {
          return "expected a whole number" + (what.empty() ? "" : " " + what) + ", got " + text;
        }
        text = std::to_string(value);
        return "";
      },
      what.empty() ? "INT" : "INT " + what);
}

// A finite number in [lo, hi] (CLI::Range lets NaN through: every comparison
// with it is false).
inline CLI::Validator NumberIn(double lo, double hi) {
  return NumberCheck(Format("in [%g, %g]", lo, hi),
                     [lo, hi](double v) { return v >= lo && v <= hi; });
}

// A base-10 integer in [lo, hi] (both within the option's type).
inline CLI::Validator IntegerIn(long long lo, long long hi) {
  return WholeNumberCheck(Format("in [%lld, %lld]", lo, hi), [lo, hi](long long v) { return v >= lo && v <= hi; });
}

// Decimal only; the range is the caller's to check (for its own message).
inline const CLI::Validator kAnyNumber = NumberCheck("", [](double) { return true; });
inline const CLI::Validator kAnyInt = WholeNumberCheck("", [](long long v) { return v >= INT_MIN && v <= INT_MAX; });
inline const CLI::Validator kPositive = NumberCheck("> 0", [](double v) { return v > 0; });
inline const CLI::Validator kNonNegative = NumberCheck(">= 0", [](double v) { return v >= 0; });
inline const CLI::Validator kPositiveInt = WholeNumberCheck("> 0", [](long long v) { return v > 0 && v <= INT_MAX; });
inline const CLI::Validator kNonNegativeInt =
    WholeNumberCheck(">= 0", [](long long v) { return v >= 0 && v <= INT_MAX; });

}  // namespace perseus
