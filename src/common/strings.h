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

// `text` safe to print on a terminal: control characters become visible
// escapes ("\x1b", "\n", "\t"; U+0080-U+009F, which some terminals read as
// escape sequences, and the bidirectional overrides U+061C, U+200E-U+200F,
// U+202A-U+202E, U+2066-U+2069 as "\u009b"), a backslash is doubled (so
// "\x1b" in the text stays distinguishable from an escaped ESC) and a byte
// that is not part of valid UTF-8 becomes "\xNN". For text from elsewhere (a
// server's reply, an API's error body) before it reaches a person.
inline std::string EscapeControlChars(const std::string& text) {
  std::string out;
  out.reserve(text.size());
  const auto byte = [&](size_t k) { return static_cast<unsigned char>(text[k]); };
  for (size_t i = 0; i < text.size();) {
    const unsigned char c = byte(i);
    if (c < 0x80) {
      if (c == '\n') out += "\\n";
      else if (c == '\t') out += "\\t";
      else if (c == '\\') out += "\\\\";
      else if (c < 0x20 || c == 0x7f) out += Format("\\x%02x", c);
      else out += static_cast<char>(c);
      ++i;
      continue;
    }
    // A UTF-8 sequence: its length from the lead byte, then its code point.
    const size_t length = c >= 0xf0 && c <= 0xf4 ? 4 : c >= 0xe0 && c <= 0xef ? 3 : c >= 0xc2 && c <= 0xdf ? 2 : 0;
    char32_t code = length == 2 ? c & 0x1f : length == 3 ? c & 0x0f : c & 0x07;
    bool valid = length > 0 && i + length <= text.size();
    for (size_t k = 1; valid && k < length; ++k) {
      valid = (byte(i + k) & 0xc0) == 0x80;
      code = (code << 6) | (byte(i + k) & 0x3f);
    }
    valid = valid && !(length == 3 && (code < 0x800 || (code >= 0xd800 && code <= 0xdfff))) &&
            !(length == 4 && (code < 0x10000 || code > 0x10ffff));
    if (!valid) {
      out += Format("\\x%02x", c);
      ++i;
      continue;
    }
    const bool control = code <= 0x9f || code == 0x61c || code == 0x200e || code == 0x200f ||
                         (code >= 0x202a && code <= 0x202e) || (code >= 0x2066 && code <= 0x2069);
    if (control) out += Format("\\u%04x", static_cast<unsigned>(code));
    else out.append(text, i, length);
    i += length;
  }
  return out;
}

// `text` cut to at most `keep_bytes` bytes, never inside a UTF-8 character,
// with "..." when anything was cut.
inline std::string CutText(const std::string& text, size_t keep_bytes) {
  if (text.size() <= keep_bytes) return text;
  size_t cut = keep_bytes;
  while (cut > 0 && (static_cast<unsigned char>(text[cut]) & 0xC0) == 0x80) --cut;
  return text.substr(0, cut) + "...";
}

// Text from elsewhere as a message shows it: cut (CutText) and escaped
// (EscapeControlChars).
inline std::string ShownText(const std::string& text, size_t keep_bytes) {
  return EscapeControlChars(CutText(text, keep_bytes));
}

}  // namespace perseus
