// RankPlan: what the server tells one rank to run, parsed from
// GET /jobs/{id}/ranks/{rank}/plan (docs/http_api.md).
//
// `steps` is the rank's stage schedule in execution order with the SM clock of
// each computation. Kinds: "frontier" (an optimised plan), "profiling" (every
// computation at the clock being profiled; measure and report), "max" (every
// computation at the GPU's highest clock), "reset" (unlock the clocks; the job
// is done). Thread safety: plain values.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "perseus/profile.h"
#include "perseus/status.h"

namespace perseus::client {

struct PlanStep {
  Instruction instruction = Instruction::kForward;
  int microbatch = 0;
  int chunk = 0;
  int sm_clock_mhz = 0;
};

enum class PlanKind { kMax, kProfiling, kFrontier, kReset };
const char* PlanKindName(PlanKind kind);

struct RankPlan {
  int64_t version = -1;
  PlanKind kind = PlanKind::kMax;
  std::string phase;
  int plan_index = -1;             // frontier plans only
  double predicted_time_s = 0;     // frontier plans only
  int profiling_clock_mhz = 0;     // profiling plans only
  std::vector<PlanStep> steps;
};

// The parsed plan, or nothing when the server said {"changed": false}.
Result<std::optional<RankPlan>> ParseRankPlan(const std::string& json_text);

}  // namespace perseus::client
