// Zeus-style knob per stage: one SM clock per pipeline stage (the same in
// every pipeline). Starting from the best single clock (so it never does
// worse than the global knob), coordinate descent tries every clock for each
// stage in turn and keeps the least-energy setting whose job iteration time
// stays within the budget, until a pass changes nothing.
#include <cstdio>

#include "emulator/policies/clock_knob.h"
#include "emulator/policy.h"

namespace perseus::emulator {
namespace {

constexpr int kMaxPasses = 8;

class ZeusPerStagePolicy : public Policy {
 public:
  ZeusPerStagePolicy(const Problem& problem, double budget)
      : problem_(problem), budget_(budget), clocks_(CandidateClocks(problem)) {}
  std::string name() const override { return "zeus-per-stage"; }
  std::string description() const override {
    char buf[160];
    std::snprintf(buf, sizeof buf, "one SM clock per stage, least energy within a %.3g%% slowdown budget",
                  100 * budget_);
    return buf;
  }

  Decision Decide(const JobConditions& conditions) override {
    std::vector<int> all_max(problem_.num_stages(), clocks_.front());
    BudgetedBest tracker(EvaluateStageClocks(problem_, conditions, all_max), budget_);
    std::vector<int> best = BestUniformClocks(problem_, conditions, clocks_, tracker);
    for (int pass = 0; pass < kMaxPasses; ++pass) {
      bool improved = false;
      for (int s = 0; s < problem_.num_stages(); ++s) {
        std::vector<int> trial = best;
        for (int clock : clocks_) {
          trial[s] = clock;
          if (tracker.Offer(EvaluateStageClocks(problem_, conditions, trial))) {
            best = trial;
            improved = true;
          }
        }
      }
      if (!improved) break;
    }
    return SamePlanEverywhere(conditions, PlanForStageClocks(problem_, best));
  }

 private:
  const Problem& problem_;
  double budget_;
  std::vector<int> clocks_;
};

}  // namespace

std::unique_ptr<Policy> MakeZeusPerStagePolicy(const Problem& problem, double slowdown_budget) {
  return std::make_unique<ZeusPerStagePolicy>(problem, slowdown_budget);
}

}  // namespace perseus::emulator
