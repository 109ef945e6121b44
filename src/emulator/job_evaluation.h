// One job iteration from its pipeline classes: the iteration ends when the
// slowest pipeline ends, and every GPU draws blocking power until then. Used
// by the emulation loop and by policies that search for a plan (Zeus knobs,
// Perseus' straggler response). Pure functions; thread-safe.
#pragma once

#include <vector>

#include "emulator/conditions.h"
#include "emulator/pipeline_run.h"
#include "perseus/problem.h"

namespace perseus::emulator {

struct JobOutcome {
  double time_s = 0;    // iteration time of the job
  double energy_j = 0;  // all GPUs of all pipelines
};

// Blocking power of one GPU (Problem stores it x gpus_per_stage).
inline double BlockingPowerPerGpuW(const Problem& problem) { return problem.blocking_power_w / problem.gpus_per_stage; }

// REQUIRES: runs has one entry per class of `conditions`.
JobOutcome CombineRuns(const Problem& problem, const JobConditions& conditions,
                       const std::vector<const PipelineRun*>& runs);

// Replays plans[c] for every class c and combines them.
JobOutcome EvaluateJob(const Problem& problem, const JobConditions& conditions, const std::vector<PlanChoice>& plans);

}  // namespace perseus::emulator
