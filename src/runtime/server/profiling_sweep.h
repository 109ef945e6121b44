// Online profiling: which clock each stage measures next, and the Profile
// built from what the ranks measured.
//
// Each stage sweeps its clocks from the highest downward. A clock is covered
// when every rank of the stage has reported `iterations_per_clock` profiled
// iterations at it; the stage's energy there is forward + backward energy per
// microbatch, averaged over its ranks. A stage stops after its energy rose
// `max_energy_rises` times in a row, or at its lowest clock.
// Thread safety: pure functions.
#pragma once

#include <map>
#include <optional>
#include <utility>
#include <vector>

#include "perseus/profile.h"
#include "runtime/server/job_spec.h"
#include "runtime/server/job_state.h"

namespace perseus::server {

using MeasurementMap = std::map<std::pair<int, int>, Measurement>;  // (rank, freq_mhz) -> totals

// The clocks a stage sweeps: those every rank of the stage supports, at or
// above min_clock_mhz, every clock_stride-th from the top, plus the lowest.
// Empty when the ranks share no clock.
std::vector<int> SweepClocks(const std::vector<const RankInfo*>& stage_ranks, const ProfilingOptions& options);

// The stage's mean per-microbatch forward and backward point at `freq_mhz`,
// or nothing while some rank of the stage has fewer than `min_reports`.
struct StagePoint {
  FreqPoint forward, backward;
};
std::optional<StagePoint> MeasuredStagePoint(const std::vector<const RankInfo*>& stage_ranks,
                                             const MeasurementMap& measurements, int freq_mhz, int min_reports);

// Records the stage's energy at its current clock and moves to the next
// clock or marks the stage done. REQUIRES: !sweep->done.
void AdvanceSweep(StageSweep* sweep, double energy_j, const ProfilingOptions& options);

// The profile of every covered clock of every stage. For the interleaved
// schedule a measured instruction is one chunk, so times and energies are
// multiplied by `chunks` (BuildProblem splits a stage's work evenly again).
Result<Profile> BuildMeasuredProfile(const std::vector<std::vector<const RankInfo*>>& ranks_by_stage,
                                     const MeasurementMap& measurements, const std::vector<StageSweep>& sweeps,
                                     int min_reports, int chunks);

// Blocking power per GPU: energy drawn while waiting / time spent waiting,
// over all measurements; nothing when no waiting time was measured.
std::optional<double> MeasuredBlockingPowerW(const MeasurementMap& measurements);

}  // namespace perseus::server
