// RankPlan: what the server tells one rank to run (GET
// /jobs/{id}/ranks/{rank}/plan, docs/http_api.md), once: the struct, the
// server's writer and the rank client's parser.
//
// `steps` is the rank's stage schedule in execution order with the SM clock of
// each computation. Kinds: "frontier" (an optimised plan), "profiling" (a
// measurement window: forwards at one clock and backwards at another; run
// `warmup_iterations`, then measure `iterations` and report), "max" (every
// computation at the GPU's highest clock), "reset" (unlock the clocks; the job
// is done), "pause" (the carbon policy paused the job, docs/carbon.md, "Pausing
// in the server": wait at the next iteration boundary holding `pause.hold_clock_mhz`,
// or with `pause.release` stop the job, from iteration `pause.from_iteration`
// on; `steps` are the frontier plan the job runs until then and resumes with). Thread safety: plain values and pure functions.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "common/json_fields.h"
#include "perseus/profile.h"
#include "perseus/status.h"

namespace perseus::protocol {

struct PlanStep {
  Instruction instruction = Instruction::kForward;
  int microbatch = 0;
  int chunk = 0;
  int sm_clock_mhz = 0;
  bool operator==(const PlanStep&) const = default;
};

enum class PlanKind { kMax, kProfiling, kFrontier, kReset, kPause };
const char* PlanKindName(PlanKind kind);

// A profiling window (docs/http_api.md, "Online profiling").
struct PlanWindow {
  int64_t id = -1;
  int warmup_iterations = 1;
  int iterations = 2;
  int forward_clock_mhz = 0;
  int backward_clock_mhz = 0;
  std::string purpose;  // why the server asks for it ("sweep", "repeat", ...); informational
  bool operator==(const PlanWindow&) const = default;
};

// A pause (pause plans only).
struct PlanPause {
  int hold_clock_mhz = 0;  // the SM clock a waiting rank holds (its GPU's lowest)
  bool release = false;    // stop the job (checkpoint and exit) instead of waiting
  // The pause takes effect at the boundary before this iteration (the rank's
  // own count): every rank pauses before the same iteration.
  int64_t from_iteration = 0;
  // A waiting rank resumes on its own once the server has not answered for
  // this long (its next decision is due well before: a lost server does not
  // hold the job forever).
  double max_s = 0;
  std::string reason;      // the carbon decision's explanation; informational
  bool operator==(const PlanPause&) const = default;
};

// A job's warning as plans, job summaries and the stored state carry it.
struct JobWarning {
  std::string code, message;
  int stage = -1, rank = -1;  // -1: the whole job
  // "code/stage/rank": unique per warning within a job.
  std::string Key() const;
  bool operator==(const JobWarning&) const = default;
};
Json JobWarningsToJson(const std::vector<JobWarning>& warnings);
// `path` names the array in errors ("warnings").
Result<std::vector<JobWarning>> ParseJobWarnings(const Json& list, const std::string& path);

struct RankPlan {
  int64_t version = -1;
  PlanKind kind = PlanKind::kMax;
  std::string job;                 // informational
  int rank = -1;                   // informational
  std::string phase;
  int plan_index = -1;             // frontier and pause plans: the index into the job's frontier
  double predicted_time_s = 0;     // frontier and pause plans
  PlanWindow window;               // profiling plans only
  int sm_clock_mhz = 0;            // max plans only: the clock of every step
  PlanPause pause;                 // pause plans only
  std::vector<JobWarning> warnings;
  std::vector<PlanStep> steps;
  // The clock of every step when they all share one, else -1.
  int UniformClockMhz() const;
  bool operator==(const RankPlan&) const = default;
};

// The server's replies. A stage's step list is by far the largest part and
// the server caches it as text (StepsJson), so the writer takes it as text.
std::string StepsJson(const std::vector<PlanStep>& steps);
// `plan` without its steps, then `steps_json` (StepsJson) as "instructions".
std::string RankPlanJson(const RankPlan& plan, const std::string& steps_json);
inline std::string RankPlanJson(const RankPlan& plan) { return RankPlanJson(plan, StepsJson(plan.steps)); }
// The reply when the rank already runs version `version`.
std::string UnchangedPlanJson(int64_t version);

// The parsed plan, or nothing when the server said {"changed": false}; errors
// name the field ("plan: field 'instructions[3].microbatch': ...").
Result<std::optional<RankPlan>> ParseRankPlan(const std::string& json_text);

}  // namespace perseus::protocol
