// Earliest starts and latest finishes of computations with continuous
// durations: the critical-path arithmetic the solver runs every step.
// (EvaluatePlan in evaluate.cc is the independent referee for final plans.)
#pragma once

#include <vector>

#include "perseus/problem.h"

namespace perseus::optimizer {

// Fills `earliest_start` and returns the longest path length.
double ForwardPass(const Problem& problem, const std::vector<double>& duration_s,
                   std::vector<double>& earliest_start);
// Fills `latest_finish` for a given deadline.
void BackwardPass(const Problem& problem, const std::vector<double>& duration_s, double deadline_s,
                  std::vector<double>& latest_finish);

}  // namespace perseus::optimizer
