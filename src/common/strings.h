// Small string helpers shared by the parsers (CSV, realism specs, HTTP
// headers, GPU names), so each rule exists once.
// Thread safety: pure.
#pragma once

#include <algorithm>
#include <cctype>
#include <string>

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

}  // namespace perseus
