// report.json of an emulation (schema "perseus.emulation/v1", specified in
// docs/emulator.md) and energy_per_gpu.csv. Pure functions; thread-safe.
#pragma once

#include <string>

#include <nlohmann/json.hpp>

#include "perseus/emulator.h"

namespace perseus::emulator {

inline constexpr int kMaxSeriesInJson = 10'000;    // per-iteration arrays are left out above this
inline constexpr int kMaxPipelinesInJson = 4'096;  // per-pipeline arrays are left out above this
inline constexpr long kMaxGpusInCsv = 65'536;      // energy_per_gpu.csv is skipped above this

// The "job" object: the job's shape, the profile scaling, the events.
nlohmann::json JobJson(const EmulationResult& r);
// One entry of "policies".
nlohmann::json PolicyJson(const EmulationResult& r, const PolicyResult& p);
// The whole document.
std::string EmulationJson(const EmulationResult& r);
// policy,pipeline,stage,gpu,energy_j; empty when the job has more than kMaxGpusInCsv GPUs.
std::string GpuEnergyCsv(const EmulationResult& r);

}  // namespace perseus::emulator
