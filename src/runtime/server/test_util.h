// Helpers for the server's tests: temporary databases, and the synthetic job
// of synthetic_job.h.
#pragma once

#include <algorithm>
#include <cmath>
#include <string>
#include <unistd.h>

#include "runtime/server/synthetic_job.h"

namespace perseus::server::testing {

inline std::string TempDbPath(const std::string& name) {
  std::string path = ::testing::TempDir() + "/perseus_" + name + "_" + std::to_string(getpid()) + ".db";
  for (const char* suffix : {"", "-wal", "-shm"}) std::remove((path + suffix).c_str());
  return path;
}

}  // namespace perseus::server::testing
