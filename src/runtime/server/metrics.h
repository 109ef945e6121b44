// Prometheus text exposition of the jobs' state (GET /metrics).
// Thread safety: pure.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "common/json_fields.h"

namespace perseus::server {

// Renders job summaries (JobService::AllSummaries), the server's own
// counters and its power cap (JobService::ServerPowerCapJson; null: none)
// as Prometheus text format 0.0.4. Jobs that ended (done, failed) have no
// per-job series; deleted ones are not in `summaries`.
std::string RenderMetrics(const std::vector<Json>& summaries, int64_t unknown_rank_requests,
                          const Json& server_power_cap = nullptr);

}  // namespace perseus::server
