// Clock knobs shared by the Zeus-style policies: the SM clocks a knob can be
// set to, the plan a setting of per-stage clocks means, and the budgeted
// comparison of settings on the job. Pure functions; thread-safe.
#pragma once

#include <vector>

#include "emulator/job_evaluation.h"
#include "perseus/problem.h"

namespace perseus::emulator {

// Every clock any computation lists, highest first.
std::vector<int> CandidateClocks(const Problem& problem);

// Each computation at the highest clock it lists that is <= its stage's
// clock (its lowest clock if none is).
PlanChoice PlanForStageClocks(const Problem& problem, const std::vector<int>& stage_clock_mhz);

// The job with every pipeline's stage s at stage_clock_mhz[s].
JobOutcome EvaluateStageClocks(const Problem& problem, const JobConditions& conditions,
                               const std::vector<int>& stage_clock_mhz);

// Tracks the least-energy job outcome whose time is within the budget.
class BudgetedBest {
 public:
  BudgetedBest(const JobOutcome& all_max, double slowdown_budget)
      : limit_s_(all_max.time_s * (1 + slowdown_budget) * (1 + 1e-12)), best_(all_max) {}
  // True when `o` is within the budget and uses less energy than the best so far.
  bool Offer(const JobOutcome& o) {
    if (o.time_s > limit_s_ || o.energy_j >= best_.energy_j * (1 - 1e-12)) return false;
    best_ = o;
    return true;
  }

 private:
  double limit_s_;
  JobOutcome best_;
};

// The least-energy setting with one clock for every stage that `tracker`
// accepts (the highest clock when none improves on all-max). `clocks` is
// CandidateClocks(problem).
std::vector<int> BestUniformClocks(const Problem& problem, const JobConditions& conditions,
                                   const std::vector<int>& clocks, BudgetedBest& tracker);

}  // namespace perseus::emulator
