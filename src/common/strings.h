// Small string helpers shared by the parsers (CSV, realism specs, HTTP
// headers, GPU names) and the messages, so each rule exists once.
// Thread safety: pure.
#pragma once

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>
#include <cstdarg>
#include <cstdio>
#include <optional>
#include <string>
#include <system_error>

namespace perseus {

// `s` without leading and trailing spaces, tabs and carriage returns.
inline std::string Trim(const std::string& s) {
  const size_t b = s.find_first_not_of(" \t\r");
  if (b == std::string::npos) return "";
  return s.substr(b, s.find_last_not_of(" \t\r") - b + 1);
}

// `s` in ASCII lower case.
inline std::string ToLower(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return s;
}

// The finite decimal number `text` is, or nothing: digits with an optional
// sign ('+' too), point and exponent ("-1.5", "+2", "3e-2"), and nothing
// else. Unlike strtod it takes no hexadecimal ("0x10"), "inf", "nan",
// surrounding spaces or a number too large for a double. Every number a user
// types or a file holds (flags, CSV fields, specs) is read here.
inline std::optional<double> ParseDecimal(const std::string& text) {
  const char* begin = text.data();
  const char* end = begin + text.size();
  if (begin != end && *begin == '+' && end - begin > 1 && begin[1] != '-') ++begin;
  double value = 0;
  const auto [stop, error] = std::from_chars(begin, end, value, std::chars_format::general);
  if (begin == end || error != std::errc() || stop != end || !std::isfinite(value)) return std::nullopt;
  return value;
}

// printf into a string, of any length (messages: warnings, reports).
inline std::string Format(const char* format, ...) __attribute__((format(printf, 1, 2)));
inline std::string Format(const char* format, ...) {
  va_list args;
  va_start(args, format);
  va_list copy;
  va_copy(copy, args);
  const int length = std::vsnprintf(nullptr, 0, format, copy);
  va_end(copy);
  std::string out(length > 0 ? static_cast<size_t>(length) : 0, '\0');
  if (length > 0) std::vsnprintf(out.data(), out.size() + 1, format, args);
  va_end(args);
  return out;
}

// `text` safe to print on a terminal: control characters (bytes 0-31 and
// 127, and U+0080-U+009F in UTF-8, which some terminals read as escape
// sequences) become visible escapes ("\x1b", "\n", "\u009b"). For text
// from elsewhere (a server's reply, an API's error body) before it reaches
// a person: an escape sequence in it could rewrite what the terminal shows.
inline std::string EscapeControlChars(const std::string& text) {
  std::string out;
  out.reserve(text.size());
  for (size_t i = 0; i < text.size(); ++i) {
    const unsigned char c = static_cast<unsigned char>(text[i]);
    if (c == '\n') {
      out += "\\n";
    } else if (c == '\t') {
      out += "\\t";
    } else if (c < 0x20 || c == 0x7f) {
      out += Format("\\x%02x", c);
    } else if (c == 0xc2 && i + 1 < text.size() && static_cast<unsigned char>(text[i + 1]) >= 0x80 &&
               static_cast<unsigned char>(text[i + 1]) <= 0x9f) {
      out += Format("\\u%04x", static_cast<unsigned char>(text[++i]));
    } else {
      out += static_cast<char>(c);
    }
  }
  return out;
}

}  // namespace perseus
