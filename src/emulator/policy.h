// A frequency policy: given the conditions of one iteration (which pipelines
// straggle, which GPUs are throttled), the plan every class of pipelines runs.
// One implementation per file under policies/. The emulator calls Decide once
// per distinct conditions and caches the answer.
// REQUIRES: the Problem (and Frontier) passed to a factory outlive the policy.
// Not thread-safe (policies may keep caches).
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "emulator/conditions.h"
#include "perseus/optimizer.h"
#include "perseus/problem.h"

namespace perseus::emulator {

struct Decision {
  std::vector<PlanChoice> plans;  // per class of the conditions
  // Per class: a lower bound on that pipeline's energy over its own run
  // (stretched by its slowdown); empty or -1 where not computable.
  std::vector<double> lower_bound_j;
};

class Policy {
 public:
  virtual ~Policy() = default;
  virtual std::string name() const = 0;         // "allmax", "zeus-global", ...
  virtual std::string description() const = 0;  // one sentence for reports
  virtual Decision Decide(const JobConditions& conditions) = 0;
};

// Every computation at its highest frequency: what jobs run today.
std::unique_ptr<Policy> MakeAllMaxPolicy(const Problem& problem);
// Zeus-style knobs: one SM clock for every GPU (or one per stage), the
// least-energy setting whose job iteration time is within the budget.
std::unique_ptr<Policy> MakeZeusGlobalPolicy(const Problem& problem, double slowdown_budget);
std::unique_ptr<Policy> MakeZeusPerStagePolicy(const Problem& problem, double slowdown_budget);
// EnvPipe (USENIX ATC '23): computations off the pipeline's outer envelope slowed, critical ones sped back up.
std::unique_ptr<Policy> MakeEnvPipePolicy(const Problem& problem);
// Perseus: every pipeline runs the fastest frontier plan.
std::unique_ptr<Policy> MakePerseusIntrinsicPolicy(const Problem& problem, const Frontier& frontier);
// Perseus with its straggler response: on-time pipelines slow to min(T_straggler, T*).
std::unique_ptr<Policy> MakePerseusPolicy(const Problem& problem, const Frontier& frontier);

// The same plan for every class.
inline Decision SamePlanEverywhere(const JobConditions& conditions, const PlanChoice& plan) {
  return Decision{std::vector<PlanChoice>(conditions.classes.size(), plan), {}};
}

}  // namespace perseus::emulator
