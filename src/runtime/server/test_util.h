// Helpers for the server's tests: temporary databases, and the synthetic job
// of synthetic_job.h.
#pragma once

#include <algorithm>
#include <cmath>
#include <string>

#include <nlohmann/json.hpp>
#include <unistd.h>

#include "runtime/server/synthetic_job.h"

namespace perseus::server::testing {

inline std::string TempDbPath(const std::string& name) {
  std::string path = ::testing::TempDir() + "/perseus_" + name + "_" + std::to_string(getpid()) + ".db";
  for (const char* suffix : {"", "-wal", "-shm"}) std::remove((path + suffix).c_str());
  return path;
}

// A job summary without the pipelines' totals, which count since the server
// started: what a restart must restore exactly.
inline nlohmann::json WithoutTotals(nlohmann::json summary) {
  for (nlohmann::json& p : summary["pipelines"]) p.erase("totals");
  return summary;
}

}  // namespace perseus::server::testing
