// The one rule for job ids, shared by the server (which registers them) and
// the rank client (which puts them in URL paths): 1-64 characters of
// [A-Za-z0-9._-], so an id never needs escaping and cannot change a path.
// Thread safety: pure.
#pragma once

#include <string>

namespace perseus {

inline constexpr const char* kJobIdRule = "1-64 characters of [A-Za-z0-9._-]";

inline bool IsValidJobId(const std::string& id) {
  if (id.empty() || id.size() > 64) return false;
  for (char c : id) {
    const bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.' ||
                    c == '_' || c == '-';
    if (!ok) return false;
  }
  return true;
}

}  // namespace perseus
