// ISO-8601 UTC timestamps <-> Unix seconds, for carbon-intensity traces and
// the ElectricityMaps API. Accepts "2022-01-01T00:00:00Z",
// "2022-01-01 00:00:00+00:00", "2024-11-30T06:00:00.000Z" and a bare
// "2022-01-01 00:00:00" (taken as UTC). Any non-zero UTC offset is applied.
// Thread safety: pure functions.
#pragma once

#include <cstdint>
#include <string>

#include "perseus/status.h"

namespace perseus::carbon {

// Seconds since 1970-01-01T00:00:00Z, or an error quoting the text.
Result<int64_t> ParseIsoUtc(const std::string& text);
// "YYYY-MM-DDTHH:MM:SSZ".
std::string FormatIsoUtc(int64_t unix_s);
// Hour of day (0..23) in UTC.
int HourOfDayUtc(int64_t unix_s);
// Hour of the week (0..167) in UTC, 0 being Monday 00:00.
int HourOfWeekUtc(int64_t unix_s);

}  // namespace perseus::carbon
