// Combining pipeline classes into a job iteration.
#include "emulator/job_evaluation.h"

#include <algorithm>

namespace perseus::emulator {

JobOutcome CombineRuns(const Problem& problem, const JobConditions& conditions,
                       const std::vector<const PipelineRun*>& runs) {
  JobOutcome out;
  for (size_t c = 0; c < runs.size(); ++c) {
    if (conditions.pipeline_count[c] > 0) out.time_s = std::max(out.time_s, runs[c]->time_s);
  }
  const double block_w = BlockingPowerPerGpuW(problem);
  for (size_t c = 0; c < runs.size(); ++c) {
    out.energy_j += conditions.pipeline_count[c] * PipelineEnergyJ(*runs[c], out.time_s, block_w);
  }
  return out;
}

JobOutcome EvaluateJob(const Problem& problem, const JobConditions& conditions, const std::vector<PlanChoice>& plans) {
  std::vector<PipelineRun> runs;
  runs.reserve(plans.size());
  for (size_t c = 0; c < plans.size(); ++c) runs.push_back(RunPipeline(problem, plans[c], conditions.classes[c]));
  std::vector<const PipelineRun*> ptrs;
  for (const PipelineRun& r : runs) ptrs.push_back(&r);
  return CombineRuns(problem, conditions, ptrs);
}

}  // namespace perseus::emulator
