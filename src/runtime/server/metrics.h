// Prometheus text exposition of the jobs' state (GET /metrics).
// Thread safety: pure.
#pragma once

#include <string>
#include <vector>

#include "runtime/server/json_fields.h"

namespace perseus::server {

// Renders job summaries (JobService::AllSummaries) as Prometheus text format 0.0.4.
std::string RenderMetrics(const std::vector<Json>& summaries);

}  // namespace perseus::server
