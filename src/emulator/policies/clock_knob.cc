// Clock knobs.
#include "emulator/policies/clock_knob.h"

#include <algorithm>
#include <functional>
#include <set>

namespace perseus::emulator {

std::vector<int> CandidateClocks(const Problem& problem) {
  std::set<int, std::greater<int>> clocks;
  for (const ProblemNode& n : problem.nodes) {
    for (const FreqPoint& o : n.options) clocks.insert(o.freq_mhz);
  }
  return std::vector<int>(clocks.begin(), clocks.end());
}

PlanChoice PlanForStageClocks(const Problem& problem, const std::vector<int>& stage_clock_mhz) {
  PlanChoice plan(problem.nodes.size(), 0);
  for (size_t i = 0; i < problem.nodes.size(); ++i) {
    const std::vector<FreqPoint>& options = problem.nodes[i].options;
    const int clock = stage_clock_mhz[problem.nodes[i].stage];
    int k = 0;
    while (k + 1 < static_cast<int>(options.size()) && options[k].freq_mhz > clock) ++k;
    plan[i] = k;
  }
  return plan;
}

JobOutcome EvaluateStageClocks(const Problem& problem, const JobConditions& conditions,
                               const std::vector<int>& stage_clock_mhz) {
  const PlanChoice plan = PlanForStageClocks(problem, stage_clock_mhz);
  return EvaluateJob(problem, conditions, std::vector<PlanChoice>(conditions.classes.size(), plan));
}

std::vector<int> BestUniformClocks(const Problem& problem, const JobConditions& conditions,
                                   const std::vector<int>& clocks, BudgetedBest& tracker) {
  std::vector<int> best(problem.num_stages(), clocks.front());
  for (int clock : clocks) {
    std::vector<int> trial(problem.num_stages(), clock);
    if (tracker.Offer(EvaluateStageClocks(problem, conditions, trial))) best = trial;
  }
  return best;
}

}  // namespace perseus::emulator
