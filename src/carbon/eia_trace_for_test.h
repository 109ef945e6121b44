// Tests' access to the shared EIA 2022 traces (../shared/data/carbon).
#pragma once

#include <gtest/gtest.h>

#include <fstream>
#include <optional>
#include <string>

#include "carbon/intensity_trace.h"

namespace perseus::carbon {

// The shared trace of `region` (CISO or NYIS); nullopt when ../shared/data
// is absent (the caller skips: scripts/test.sh makes that an error in CI) or
// when it cannot be read (a failure is recorded).
inline std::optional<IntensityTrace> SharedEiaTrace(const std::string& region) {
  const std::string path = *EiaTracePath(PERSEUS_SHARED_DATA, region);
  if (!std::ifstream(path)) return std::nullopt;
  Result<IntensityTrace> trace = LoadEiaTrace(path);
  if (!trace.ok()) {
    ADD_FAILURE() << trace.status().ToString();
    return std::nullopt;
  }
  return std::move(*trace);
}

}  // namespace perseus::carbon
