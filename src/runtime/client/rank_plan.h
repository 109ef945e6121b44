// RankPlan: what the server tells one rank to run, parsed from
// GET /jobs/{id}/ranks/{rank}/plan (docs/http_api.md).
//
// `steps` is the rank's stage schedule in execution order with the SM clock of
// each computation. Kinds: "frontier" (an optimised plan), "profiling" (a
// measurement window: forwards at one clock and backwards at another; run
// `warmup_iterations`, then measure `iterations` and report), "max" (every
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

// A profiling window (docs/http_api.md, "Online profiling").
struct ProfilingWindow {
  int64_t id = -1;
  int warmup_iterations = 1;
  int iterations = 2;
  int forward_clock_mhz = 0;
  int backward_clock_mhz = 0;
};

struct RankPlan {
  int64_t version = -1;
  PlanKind kind = PlanKind::kMax;
  std::string phase;
  int plan_index = -1;             // frontier plans only
  double predicted_time_s = 0;     // frontier plans only
  ProfilingWindow window;          // profiling plans only
  // The job's warnings as the server sent them: (key, message); the key is
  // "code/stage/rank", unique per warning.
  std::vector<std::pair<std::string, std::string>> warnings;
  std::vector<PlanStep> steps;
  // The clock of every step when they all share one, else -1.
  int UniformClockMhz() const;
};

// The parsed plan, or nothing when the server said {"changed": false}.
Result<std::optional<RankPlan>> ParseRankPlan(const std::string& json_text);

}  // namespace perseus::client
