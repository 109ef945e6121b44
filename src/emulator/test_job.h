// Small synthetic jobs for the emulator's tests: a profile with a few clocks
// whose time falls and power rises with the clock, stages of uneven weight
// (the last one heaviest, as with an LM head), and helpers to build the
// Problem. Test-only; deterministic.
#pragma once

#include <string>
#include <vector>

#include "perseus/emulator.h"
#include "perseus/problem.h"

namespace perseus::emulator {

// `stages` stages; stage s is (1 + 0.1 s) times as heavy as stage 0, the
// last one 1.3x. Clocks 1410, 1260, 1110, 960 MHz.
Profile SmallProfile(int stages);

// A 1F1B problem on SmallProfile with the given shape and 80 W blocking power per GPU.
Problem SmallProblem(int stages, int microbatches, int gpus_per_stage);

// An EmulationSpec for SmallProfile (1F1B, 80 W), no events.
EmulationSpec SmallSpec(int stages, int microbatches, int gpus_per_stage, int pipelines, int iterations);

// An EmulationSpec for a bundled example (FindExample; a test failure and an
// empty profile if unknown) at its own shape, no events, sweep factor 1 only.
EmulationSpec ExampleSpec(const std::string& example, int pipelines, int iterations);

// The named policy's result (a test failure, and the first policy, if absent).
const PolicyResult& FindPolicy(const EmulationResult& result, const std::string& name);

double Sum(const std::vector<double>& values);

}  // namespace perseus::emulator
