// Zeus-style global knob: one SM clock for every GPU of the job, the one that
// minimises the job's energy within the slowdown budget. It is re-chosen for
// the job's conditions (a straggler slows under every setting, so the choice
// rarely changes), which is what re-profiling the knob online would find.
#include <cstdio>

#include "emulator/policies/clock_knob.h"
#include "emulator/policy.h"

namespace perseus::emulator {
namespace {

class ZeusGlobalPolicy : public Policy {
 public:
  ZeusGlobalPolicy(const Problem& problem, double budget)
      : problem_(problem), budget_(budget), clocks_(CandidateClocks(problem)) {}
  std::string name() const override { return "zeus-global"; }
  std::string description() const override {
    char buf[160];
    std::snprintf(buf, sizeof buf, "one SM clock for all GPUs, least energy within a %.3g%% slowdown budget",
                  100 * budget_);
    return buf;
  }

  Decision Decide(const JobConditions& conditions) override {
    std::vector<int> all_max(problem_.num_stages(), clocks_.front());
    BudgetedBest tracker(EvaluateStageClocks(problem_, conditions, all_max), budget_);
    std::vector<int> best = BestUniformClocks(problem_, conditions, clocks_, tracker);
    return SamePlanEverywhere(conditions, PlanForStageClocks(problem_, best));
  }

 private:
  const Problem& problem_;
  double budget_;
  std::vector<int> clocks_;
};

}  // namespace

std::unique_ptr<Policy> MakeZeusGlobalPolicy(const Problem& problem, double slowdown_budget) {
  return std::make_unique<ZeusGlobalPolicy>(problem, slowdown_budget);
}

}  // namespace perseus::emulator
