// A job's power caps over time, from a CSV file (the spec's
// "power_cap_schedule", docs/power.md):
//
//   timestamp,average_w,peak_w
//   2026-07-01T14:00:00Z,250000,
//   2026-07-01T18:00:00Z,180000,200000
//   2026-07-01T21:00:00Z,0,
//
// From each row's time (ISO-8601 UTC, ascending) until the next row's, that
// cap is in force; average_w 0 lifts it; peak_w may be empty. A cap set or
// lifted through the API overrides the schedule. Thread safety: values.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "perseus/status.h"
#include "runtime/protocol/job_requests.h"

namespace perseus::server {

struct PowerCapSchedule {
  struct Row {
    int64_t from_unix_s = 0;
    std::optional<protocol::PowerCapRequest> cap;  // nullopt: no cap from then on
  };
  std::vector<Row> rows;  // ascending in time
  // The cap in force at `unix_s` (nullopt before the first row or when lifted).
  std::optional<protocol::PowerCapRequest> At(int64_t unix_s) const;
};

// The averaging window of a scheduled cap.
inline constexpr double kScheduledCapWindowS = 60;

// Errors name the file, line and column ("caps.csv:3: column 'average_w': ...").
// `window_s` is every row's averaging window.
Result<PowerCapSchedule> LoadPowerCapSchedule(const std::string& path, double window_s);

}  // namespace perseus::server
