// PlanBook: a job's frontier and, for every frontier plan and stage, the
// ordered (instruction, microbatch, chunk, SM clock) list a rank runs.
//
// Built once when the optimisation finishes (or when a restarted server
// reloads the stored frontier) and then only read, so it is shared between
// request threads without locking. The per-stage lists are serialised once
// here; the plan endpoint only concatenates them.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "perseus/optimizer.h"
#include "perseus/problem.h"
#include "runtime/server/job_spec.h"
#include "runtime/server/json_fields.h"

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
  // The JSON array of stage `stage`'s instructions under plan `plan_index`.
  const std::string& StagePlanJson(int plan_index, int stage) const { return stage_json_[plan_index][stage]; }
  // Frontier::PlanForTime as an index; 0 (the fastest plan) when none fits.
  int PlanIndexForTime(double time_s) const;

 private:
  PlanBook() = default;
  Problem problem_;
  Frontier frontier_;
  std::vector<std::vector<std::string>> stage_json_;  // [plan][stage]
};

// The problem of a job: its schedule, tp GPUs per stage and blocking power.
ProblemSpec JobProblemSpec(const JobSpec& spec, double blocking_power_w);

// A stage's instruction list with forwards at one clock and backwards at
// another (a profiling window, or one clock for all), as a JSON array.
std::string WindowStagePlanJson(const Schedule& schedule, int stage, int forward_clock_mhz, int backward_clock_mhz);

Json FrontierToJson(const Frontier& frontier);
Result<Frontier> FrontierFromJson(const Json& j);

}  // namespace perseus::server
