// Helpers for the server's tests: opening a service over a store, and the
// synthetic job of synthetic_job.h. Databases on disk go in a ScopedTempDir
// (common/temp_dir_for_test.h).
#pragma once

#include <algorithm>
#include <cmath>
#include <functional>
#include <memory>
#include <string>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "runtime/server/synthetic_job.h"

namespace perseus::server::testing {

// Opens (or reopens: the old service and store close first) a service with
// the uniform-plans solver over the store at `path` (":memory:" or a file).
// With `clock`, the service keeps that time and runs no background thread
// (tests call CarbonTick/PowerCapTick themselves).
inline void OpenService(const std::string& path, std::function<int64_t()> clock, std::unique_ptr<Store>* store,
                        std::unique_ptr<JobService>* service, JsonLog* log = nullptr) {
  service->reset();
  store->reset();
  Result<std::unique_ptr<Store>> opened = Store::Open(path, false);
  ASSERT_TRUE(opened.ok()) << opened.status().ToString();
  *store = std::move(*opened);
  CarbonOptions options;
  if (clock) {
    options.clock = std::move(clock);
    options.background = false;
  }
  Result<std::unique_ptr<JobService>> created = JobService::Create(store->get(), log, UniformPlansSolver, options);
  ASSERT_TRUE(created.ok()) << created.status().ToString();
  *service = std::move(*created);
}

// A job summary without the pipelines' totals, which count since the server
// started: what a restart must restore exactly.
inline nlohmann::json WithoutTotals(nlohmann::json summary) {
  for (nlohmann::json& p : summary["pipelines"]) p.erase("totals");
  return summary;
}

}  // namespace perseus::server::testing
