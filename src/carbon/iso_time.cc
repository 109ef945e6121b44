// ISO-8601 parsing without the C library's locale and time-zone state.
#include "carbon/iso_time.h"

#include <cctype>
#include <cstdio>

#include "common/strings.h"

namespace perseus::carbon {
namespace {

// Days from 1970-01-01 to y-m-d (proleptic Gregorian; Howard Hinnant's algorithm).
int64_t DaysFromCivil(int64_t y, int m, int d) {
  y -= m <= 2;
  const int64_t era = (y >= 0 ? y : y - 399) / 400;
  const int64_t yoe = y - era * 400;
  const int64_t doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
  const int64_t doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
  return era * 146097 + doe - 719468;
}

int DaysInMonth(int y, int m) {
  static constexpr int kDays[] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
  const bool leap = (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;
  return m == 2 && leap ? 29 : kDays[m - 1];
}

// Reads exactly `n` digits at `pos`.
bool Digits(const std::string& s, size_t& pos, int n, int& out) {
  out = 0;
  for (int i = 0; i < n; ++i, ++pos) {
    if (pos >= s.size() || !std::isdigit(static_cast<unsigned char>(s[pos]))) return false;
    out = out * 10 + (s[pos] - '0');
  }
  return true;
}

bool Expect(const std::string& s, size_t& pos, const char* any_of) {
  if (pos >= s.size()) return false;
  for (const char* c = any_of; *c; ++c) {
    if (s[pos] == *c) { ++pos; return true; }
  }
  return false;
}

}  // namespace

Result<int64_t> ParseIsoUtc(const std::string& text) {
  // The text may come from a server (ElectricityMaps): shown escaped and cut.
  constexpr size_t kMaxShownBytes = 64;
  const Status bad =
      Status::InvalidArgument("expected an ISO-8601 UTC timestamp, got '" + ShownText(text, kMaxShownBytes) + "'");
  size_t p = 0;
  int y, mo, d, h, mi, s = 0;
  if (!Digits(text, p, 4, y) || !Expect(text, p, "-") || !Digits(text, p, 2, mo) || !Expect(text, p, "-") ||
      !Digits(text, p, 2, d) || !Expect(text, p, "T ") || !Digits(text, p, 2, h) || !Expect(text, p, ":") ||
      !Digits(text, p, 2, mi)) {
    return bad;
  }
  if (p < text.size() && text[p] == ':' && (++p, !Digits(text, p, 2, s))) return bad;
  if (p < text.size() && text[p] == '.') {
    ++p;
    while (p < text.size() && std::isdigit(static_cast<unsigned char>(text[p]))) ++p;
  }
  int64_t offset_s = 0;
  if (p < text.size() && text[p] == 'Z') {
    ++p;
  } else if (p < text.size() && (text[p] == '+' || text[p] == '-')) {
    const int sign = text[p++] == '-' ? -1 : 1;
    int oh, om = 0;
    if (!Digits(text, p, 2, oh)) return bad;
    if (p < text.size() && text[p] == ':') ++p;
    if (p < text.size() && !Digits(text, p, 2, om)) return bad;
    offset_s = sign * (oh * 3600 + om * 60);
  }
  if (p != text.size() || mo < 1 || mo > 12 || d < 1 || h > 23 || mi > 59 || s > 60) return bad;
  if (d > DaysInMonth(y, mo)) {
    return Status::InvalidArgument("no such date: " + text.substr(0, 10) + " in '" + text + "'");
  }
  return DaysFromCivil(y, mo, d) * 86400 + h * 3600 + mi * 60 + s - offset_s;
}

std::string FormatIsoUtc(int64_t unix_s) {
  int64_t days = unix_s >= 0 ? unix_s / 86400 : (unix_s - 86399) / 86400;
  int64_t secs = unix_s - days * 86400;
  // Inverse of DaysFromCivil.
  days += 719468;
  const int64_t era = (days >= 0 ? days : days - 146096) / 146097;
  const int64_t doe = days - era * 146097;
  const int64_t yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
  const int64_t doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
  const int64_t mp = (5 * doy + 2) / 153;
  const int d = static_cast<int>(doy - (153 * mp + 2) / 5 + 1);
  const int m = static_cast<int>(mp < 10 ? mp + 3 : mp - 9);
  const int64_t y = yoe + era * 400 + (m <= 2);
  char buf[40];
  std::snprintf(buf, sizeof buf, "%04lld-%02d-%02dT%02d:%02d:%02dZ", static_cast<long long>(y), m, d,
                static_cast<int>(secs / 3600), static_cast<int>(secs / 60 % 60), static_cast<int>(secs % 60));
  return buf;
}

int HourOfDayUtc(int64_t unix_s) { return HourOfWeekUtc(unix_s) % 24; }

int HourOfWeekUtc(int64_t unix_s) {
  constexpr int64_t kWeekS = 7 * 86400;
  constexpr int64_t kEpochWeekdayS = 3 * 86400;  // 1970-01-01 was a Thursday
  int64_t s = (unix_s + kEpochWeekdayS) % kWeekS;
  if (s < 0) s += kWeekS;
  return static_cast<int>(s / 3600);
}

}  // namespace perseus::carbon
