// The iteration loop of one policy on one job: for every iteration, the
// conditions (stragglers, throttles), the policy's plans, each class of
// identical pipelines replayed once, the job's iteration time (slowest
// pipeline) and every GPU's energy (busy energy plus blocking power until the
// iteration ends). Conditions repeat, so each distinct one is decided and
// replayed once and its per-GPU energies are added in bulk when it ends:
// the cost is O(iterations + changes x GPUs), not O(iterations x GPUs x DAG).
// Not thread-safe (the policy may keep caches).
#pragma once

#include <vector>

#include "emulator/policy.h"
#include "perseus/emulator.h"
#include "perseus/problem.h"

namespace perseus::emulator {

struct LoopSpec {
  int pipelines = 1;
  int iterations = 1;
  std::vector<SlowPipelineEvent> stragglers;
  std::vector<GpuCapEvent> throttles;
  std::vector<GpuId> tracked;   // per-iteration energies are recorded for these GPUs
  bool per_gpu_totals = true;   // fill energy_per_gpu_j and energy_per_pipeline_j
  int timeline_iteration = -1;  // record this pipeline's timeline in this iteration (-1: none)
  int timeline_pipeline = 0;
};

struct LoopResult {
  PolicyResult result;  // savings and slowdown are left 0 (they need allmax)
  bool lower_bound_valid = false;
  PipelineTimeline timeline;  // when requested
};

LoopResult RunPolicyLoop(const Problem& problem, Policy& policy, const LoopSpec& spec);

}  // namespace perseus::emulator
