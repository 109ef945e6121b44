// Writing a frontier in the formats other tools read: plans.json (schema
// "perseus.frontier/v2"; v1 is still read), frontier.csv, and the Zeus
// frequency-plan files of the original Perseus runtime; choosing which plans
// to write. docs/formats.md specifies each. Pure functions; thread-safe.
#pragma once

#include <cstddef>
#include <ostream>
#include <string>
#include <vector>

#include "perseus/optimizer.h"
#include "perseus/problem.h"
#include "perseus/status.h"

namespace perseus {

// One computation of one stage in a plan, in execution order.
struct PlannedComputation {
  Instruction instruction = Instruction::kForward;
  int microbatch = 0;
  int chunk = 0;
  int freq_mhz = 0;
};

// The plan as each stage (GPU) runs it: [stage] -> computations in order.
using StagePlan = std::vector<std::vector<PlannedComputation>>;
StagePlan PlanByStage(const Problem& problem, const PlanChoice& choice);

// The plans users ask for by name, as indices into frontier.plans, ascending
// and distinct: the fastest, the no-slowdown (Frontier::NoSlowdownPlan) and
// the minimum-energy plan.
std::vector<size_t> KeyPlanIndices(const Frontier& frontier);
// Which plans to write when at most `max_plans` may be (0: all): every index
// in `keep` (sorted, distinct; for example KeyPlanIndices), the rest chosen
// nearest to iteration times spread evenly between the fastest and the
// minimum-energy plan. Ascending. Needs max_plans >= keep.size().
std::vector<size_t> ThinPlanIndices(const Frontier& frontier, size_t max_plans, const std::vector<size_t>& keep);
// The frontier with only plans[indices] (ascending).
Frontier SubFrontier(const Frontier& frontier, const std::vector<size_t>& indices);

// plans.json, schema "perseus.frontier/v2": the header, each stage's
// computations once, the first plan's clocks in full and every later plan as
// the clocks that changed from the plan before it. Streamed to `out`.
// `frontier_plans` is the frontier's size before thinning (0: plans.size()).
void WritePlansJson(const Problem& problem, const Frontier& frontier, std::ostream& out, size_t frontier_plans = 0);
std::string FrontierToJson(const Problem& problem, const Frontier& frontier);

// A plans.json read back (v1 or v2), every plan expanded.
struct PlansFilePlan {
  double time_s = 0;
  double energy_j = 0;
  double lower_bound_j = 0;  // 0 when absent
  StagePlan stages;
};
struct PlansFile {
  std::string schema;
  std::string schedule;
  int stages = 0;
  int microbatches = 0;
  int chunks = 1;
  int gpus_per_stage = 1;
  double blocking_power_w = 0;
  size_t frontier_plans = 0;  // v1: plans.size()
  PlansFilePlan all_max;      // without stages
  std::vector<PlansFilePlan> plans;
};
// Errors name `source` and the field, e.g. "plans.json: plans[3].changes[0]:
// position 40 out of range (stage 1 has 24 computations)".
Result<PlansFile> ParsePlansJson(const std::string& text, const std::string& source);
Result<PlansFile> ReadPlansJson(const std::string& path);

// frontier.csv: time_s,energy_j,lower_bound_j,savings_vs_all_max
std::string FrontierToCsv(const Frontier& frontier);
// One plan as a Zeus/Perseus frequency-plan file (a Python list per stage of
// (instruction, frequency) tuples in execution order, then comment lines).
std::string PlanToZeusPython(const Problem& problem, const FrontierPlan& plan, int index);

}  // namespace perseus
