// The wire protocol between perseusd and its clients (DaemonGpu), shared by
// both ends. docs/gpu_control.md has the full description.
//
// A client connects to a Unix stream socket and sends one JSON object per
// line; the daemon answers each with one JSON object per line, in order:
//   {"op":"hello","gpu":0}                      -> {"ok":true,"gpu":0,"name":...,"uuid":...}
//   {"op":"set_clock","gpu":0,"sm_clock_mhz":1200} -> {"ok":true,"gpu":0,"sm_clock_mhz":1200}
//   {"op":"reset","gpu":0}                      -> {"ok":true,"gpu":0}
//   {"op":"supported_clocks","gpu":0}           -> {"ok":true,"gpu":0,"sm_clocks_mhz":[1410,...]}
//   {"op":"energy","gpu":0}                     -> {"ok":true,"gpu":0,"energy_j":123.4}
//   {"op":"power","gpu":0}                      -> {"ok":true,"gpu":0,"power_w":250.0}
// Failures: {"ok":false,"error":"<message>","code":"<StatusCodeName>"}.
// Thread safety: pure functions.
#pragma once

#include <cstddef>
#include <string>

#include "perseus/status.h"

namespace perseus::runtime {

inline constexpr char kDefaultDaemonSocketPath[] = "/run/perseus/perseusd.sock";
// Longest request or reply line, newline excluded.
inline constexpr size_t kMaxDaemonLineBytes = 64 * 1024;

// "invalid_argument", "not_found", "io_error", "internal", "unavailable", "ok".
std::string StatusCodeName(Status::Code code);
// A Status with the code named by `code_name` (unknown names: kInternal).
Status StatusFromCodeName(const std::string& code_name, std::string message);

}  // namespace perseus::runtime
