// The emulation's SVG plots: savings against the straggler factor, energy per
// GPU over iterations, the policies on the time-energy plane, and the
// timeline of one pipeline. Pure functions; thread-safe.
#pragma once

#include <string>
#include <vector>

#include "perseus/emulator.h"
#include "report/line_chart.h"

namespace perseus::emulator {

inline constexpr size_t kMaxPlotPoints = 2000;  // longer series are thinned evenly

// Savings (%) of each non-allmax policy, and the ideal bound, against the factor.
std::string SavingsVsStragglerSvg(const std::vector<SweepPoint>& sweep, const std::string& title,
                                  const std::vector<report::Annotation>& annotations);
// Energy of the tracked GPUs in each iteration, one line per policy.
std::string EnergyPerGpuSvg(const EmulationResult& r);
// Mean iteration time against energy per iteration of the whole job, a marker per policy.
std::string PoliciesSvg(const EmulationResult& r);
// A Gantt chart of the pipeline: a row per stage, boxes coloured by SM clock.
std::string TimelineSvg(const PipelineTimeline& t);

}  // namespace perseus::emulator
