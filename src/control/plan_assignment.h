// Which frontier plan each pipeline runs (docs/runtime.md, "Stragglers"):
// the one rule `perseus serve` applies whenever its stragglers or its carbon
// decision change, and that `perseus emulate`'s perseus policy applies to
// each iteration's conditions.
//
// Every pipeline starts from the no-slowdown plan (the least-energy frontier
// plan no slower than all-max; the fastest plan when none is), of time T_0.
// With pipeline p slowed by s_p >= 1 and the slowest by s_max, the job's
// iteration takes T_0 * s_max, so p runs the least-energy plan no slower than
// min(T_0 * s_max / s_p, T*) (T*: the minimum-energy plan's time): the
// stragglers keep the no-slowdown plan, the others slow down to meet them but
// never past T*. A floor (the carbon decision's plan) applies to every
// pipeline: each runs the slower of its straggler plan and the floor.
// A pinned pipeline (the emulator's throttled GPUs, re-planned elsewhere)
// counts towards s_max with its own slowdown and is assigned nothing.
// Thread safety: pure function.
#pragma once

#include <vector>

#include "perseus/optimizer.h"

namespace perseus::control {

// The index of the plan every pipeline runs when nothing straggles.
// REQUIRES: !frontier.plans.empty().
int NoSlowdownPlanIndex(const Frontier& frontier);

struct PipelinePace {
  double slowdown = 1;  // iteration time at the no-slowdown plan / T_0; values below 1 count as 1
  bool pinned = false;
};

inline constexpr int kPinnedPipeline = -1;

// Per pipeline, an index into frontier.plans (kPinnedPipeline for pinned
// ones). `floor_index` is clamped into the frontier.
// REQUIRES: !frontier.plans.empty().
std::vector<int> AssignPipelinePlans(const Frontier& frontier, const std::vector<PipelinePace>& pipelines,
                                     int floor_index = 0);

}  // namespace perseus::control
