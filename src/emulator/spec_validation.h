// Checks an EmulationSpec before anything runs, so a bad flag fails fast with
// a message that names it ("--straggler #1: pipeline 200 is outside 0..127
// (--pipelines 128)"). Pure function; thread-safe.
#pragma once

#include "perseus/emulator.h"

namespace perseus::emulator {

inline constexpr long kMaxGpus = 1L << 20;
inline constexpr int kMaxIterations = 100'000;

// Checks the scalar fields and the events against the job's shape.
Status ValidateSpec(const EmulationSpec& spec);

}  // namespace perseus::emulator
