// AllMax: every GPU at its maximum SM clock, the default of training today.
#include "emulator/policy.h"

namespace perseus::emulator {
namespace {

class AllMaxPolicy : public Policy {
 public:
  explicit AllMaxPolicy(const Problem& problem) : plan_(AllMaxPlan(problem)) {}
  std::string name() const override { return "allmax"; }
  std::string description() const override { return "every computation at the maximum SM clock (today's default)"; }
  Decision Decide(const JobConditions& conditions) override { return SamePlanEverywhere(conditions, plan_); }

 private:
  PlanChoice plan_;
};

}  // namespace

std::unique_ptr<Policy> MakeAllMaxPolicy(const Problem& problem) { return std::make_unique<AllMaxPolicy>(problem); }

}  // namespace perseus::emulator
