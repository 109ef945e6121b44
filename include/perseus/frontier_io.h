// Writing a frontier in the formats other tools read: plans.json (schema
// "perseus.frontier/v1"), frontier.csv, and the Zeus frequency-plan files
// of the original Perseus runtime. docs/formats.md specifies each.
// Pure functions; thread-safe.
#pragma once

#include <string>
#include <vector>

#include "perseus/optimizer.h"
#include "perseus/problem.h"

namespace perseus {

// One computation of one stage in a plan, in execution order.
struct PlannedComputation {
  Instruction instruction = Instruction::kForward;
  int microbatch = 0;
  int chunk = 0;
  int freq_mhz = 0;
};

// The plan as each stage (GPU) runs it: [stage] -> computations in order.
std::vector<std::vector<PlannedComputation>> PlanByStage(const Problem& problem, const PlanChoice& choice);

// plans.json: {"schema": "perseus.frontier/v1", "schedule", "stages",
// "microbatches", "blocking_power_w", "all_max": {...}, "plans": [...]}.
std::string FrontierToJson(const Problem& problem, const Frontier& frontier);
// frontier.csv: time_s,energy_j,lower_bound_j,savings_vs_all_max
std::string FrontierToCsv(const Frontier& frontier);
// One plan as a Zeus/Perseus frequency-plan file (a Python list per stage of
// (instruction, frequency) tuples in execution order, then comment lines).
std::string PlanToZeusPython(const Problem& problem, const FrontierPlan& plan, int index);

}  // namespace perseus
