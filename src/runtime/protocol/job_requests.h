// The operator's requests about a running job, once: typed structs and their
// JSON codecs, shared by the server (which parses them), the Python module
// (which writes them) and docs/http_api.md. The job's registration is
// job_spec.h. Thread safety: plain values and pure functions.
#pragma once

#include "common/json_fields.h"
#include "perseus/status.h"

namespace perseus::protocol {

// POST /jobs/{id}/stragglers: pipeline `pipeline` runs `slowdown` times slower
// than planned (until DELETE /jobs/{id}/stragglers/{pipeline}).
struct StragglerDeclaration {
  int pipeline = 0;
  double slowdown = 1;
  bool operator==(const StragglerDeclaration&) const = default;
};
inline constexpr double kMaxStragglerSlowdown = 100;
Json StragglerDeclarationToJson(const StragglerDeclaration& d);
// Checks each field on its own (pipeline >= 0, slowdown in [1, 100]); the
// server checks the pipeline against its job.
Result<StragglerDeclaration> ParseStragglerDeclaration(const Json& body);

// A power cap for a whole job (docs/power.md): at registration (the spec's
// "power_cap") or at any time with PUT /jobs/{id}/power-cap (a demand-response
// event). The server mixes two frontier settings per window of `window_s`
// so that the job's average power stays within `average_w`, and never runs a
// setting predicted above `peak_w`.
struct PowerCapRequest {
  double average_w = 0;  // > 0
  double peak_w = 0;     // 0: none; else >= average_w
  double window_s = 60;  // the averaging window, [1, 3600] s
  bool operator==(const PowerCapRequest&) const = default;
};
Json PowerCapRequestToJson(const PowerCapRequest& r);
// `path` prefixes the fields' names in errors ("power_cap" in a spec, "" for the PUT body).
Result<PowerCapRequest> ParsePowerCapRequest(const Json& body, const std::string& path);

}  // namespace perseus::protocol
