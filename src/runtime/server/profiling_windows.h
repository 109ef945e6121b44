// Online profiling in windows, the server's side: what its ranks' window
// reports say to the estimator (src/profiling/), and the Profile the
// estimates make. The sweep's decisions are control/profiling_sweep.h.
// Thread safety: pure functions.
#pragma once

#include <map>
#include <vector>

#include "perseus/profile.h"
#include "profiling/stage_estimator.h"
#include "runtime/server/job_state.h"

namespace perseus::server {

// (window, rank) -> what the rank measured in that window.
using WindowReportMap = std::map<std::pair<int, int>, WindowReport>;

// The estimator's observations of `stage`: one per (window, rank of the
// stage) whose energy was measured. Times are server seconds since profiling began.
std::vector<profiling::WindowObservation> StageObservations(const ProfilingState& state, int stage,
                                                            const std::vector<const RankInfo*>& stage_ranks,
                                                            const WindowReportMap& reports);

// The profile of every measured clock. A power outside what the stage can
// draw (noise; CheckStage warns) is clamped: below the stage's blocking power
// it is raised to it, above `max_power_w[stage]` (the GPU's power limit with
// a margin) lowered to it. For the interleaved schedule a
// measured instruction is one chunk, so times and energies are multiplied by
// `chunks` (BuildProblem splits a stage's work evenly again).
Result<Profile> ProfileFromEstimates(const std::vector<profiling::StageEstimate>& stages, int chunks,
                                     const std::vector<double>& max_power_w);

// The job time profiling has taken so far, estimated from the reports of
// the finished windows: each costs its warm-up, its measured iterations and
// one iteration for the switch.
double ProfilingJobTimeS(const ProfilingState& state, const WindowReportMap& reports, const ProfilingOptions& options);

// Blocking power per GPU: the median of the stages' estimates (the upper one of an even count).
double MedianBlockingPowerW(const std::vector<profiling::StageEstimate>& stages);

}  // namespace perseus::server
