// PlanBook: a job's frontier and, for every frontier plan and stage, the
// ordered (instruction, microbatch, chunk, SM clock) list a rank runs.
//
// Built once when the optimisation finishes (or when a restarted server
// reloads the stored frontier) and then only read, so it is shared between
// request threads. A stage's list is serialised when a rank first asks for it
// and cached (bounded): serialising every plan up front took a 16 x 256 job
// gigabytes and made a restart wait for it, while ranks only ever run a few
// of the plans.
#pragma once

#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>
#include <vector>

#include "control/power_cap.h"
#include "perseus/optimizer.h"
#include "perseus/problem.h"
#include "runtime/server/job_state.h"
#include "common/json_fields.h"
#include "runtime/protocol/rank_plan.h"

namespace perseus::server {

class PlanBook {
 public:
  // REQUIRES: `frontier` was solved for the Problem BuildProblem makes of
  // `profile` and the job (or the plans' choices fit it; checked).
  static Result<std::shared_ptr<const PlanBook>> Create(const JobSpec& spec, const Profile& profile,
                                                        double blocking_power_w, Frontier frontier);

  const Frontier& frontier() const { return frontier_; }
  const Problem& problem() const { return problem_; }
  int num_plans() const { return static_cast<int>(frontier_.plans.size()); }
  // The minimum-energy plan under each clock ceiling (control::CeilingPlans),
  // for power caps below the frontier's least power.
  const std::vector<control::CeilingPlan>& ceilings() const { return ceilings_; }
  // A pipeline's plan's predicted time and energy: the frontier plan's, or,
  // with a clock ceiling, that ceiling plan's.
  PlanCost Cost(const PipelinePlan& plan) const;
  // Stage `stage`'s steps under plan `plan_index` (held at
  // `clock_ceiling_mhz` when > 0) as protocol::StepsJson text. Thread-safe.
  std::shared_ptr<const std::string> StagePlanJson(int plan_index, int stage, int clock_ceiling_mhz = 0) const;

 private:
  PlanBook() = default;
  Problem problem_;
  Frontier frontier_;
  std::vector<control::CeilingPlan> ceilings_;
  mutable std::mutex cache_mu_;
  // (plan, stage) -> its list; emptied when it reaches kMaxCachedLists.
  mutable std::unordered_map<int64_t, std::shared_ptr<const std::string>> cache_;
};

// The problem of a job: its schedule, tp GPUs per stage and blocking power.
ProblemSpec JobProblemSpec(const JobSpec& spec, double blocking_power_w);

// A stage's steps with forwards at one clock and backwards (all kinds) at
// another (a profiling window, or one clock for all), as protocol::StepsJson text.
std::string WindowStagePlanJson(const Schedule& schedule, int stage, int forward_clock_mhz, int backward_clock_mhz);

// The frontier as the server stores it: plan costs, the first plan's option
// per computation and, for each later plan, the [computation, option] pairs
// that differ from the plan before it (neighbouring plans differ in few; the
// encoding of plans.json v2, docs/formats.md). FrontierFromJson also reads
// the older form with every plan's full "choice".
Json StoredFrontierJson(const Frontier& frontier);
Result<Frontier> FrontierFromJson(const Json& j);

// At most `max_plans` of the frontier (0: all), chosen as `perseus optimize
// --max-plans` chooses: the fastest, no-slowdown and minimum-energy plans
// and the rest spread evenly in time.
Frontier ThinFrontier(Frontier frontier, size_t max_plans);

}  // namespace perseus::server
