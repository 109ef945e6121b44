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

}  // namespace perseus::protocol
