// Perseus, intrinsic bloat only: every pipeline runs the fastest frontier
// plan (the least-energy plan no slower than all-maximum), stragglers or not.
#include "emulator/policy.h"

namespace perseus::emulator {
namespace {

class PerseusIntrinsicPolicy : public Policy {
 public:
  PerseusIntrinsicPolicy(const Problem& /*problem*/, const Frontier& frontier) : fastest_(*frontier.NoSlowdownPlan()) {}
  std::string name() const override { return "perseus-intrinsic"; }
  std::string description() const override { return "Perseus: every pipeline runs the fastest frontier plan"; }

  Decision Decide(const JobConditions& conditions) override {
    Decision d = SamePlanEverywhere(conditions, fastest_.choice);
    for (const PipelineConditions& c : conditions.classes) {
      d.lower_bound_j.push_back(c.caps.empty() ? fastest_.lower_bound_j * c.slowdown : -1);
    }
    return d;
  }

 private:
  const FrontierPlan& fastest_;
};

}  // namespace

std::unique_ptr<Policy> MakePerseusIntrinsicPolicy(const Problem& problem, const Frontier& frontier) {
  return std::make_unique<PerseusIntrinsicPolicy>(problem, frontier);
}

}  // namespace perseus::emulator
