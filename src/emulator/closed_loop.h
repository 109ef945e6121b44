// Closed-loop emulation (docs/emulator.md, "Closed loop"): perseus run the way
// `perseus serve` runs it, in virtual time, against emulated pipelines.
//
// Phases: online profiling (ClosedLoopOptions::profiling_s, its measured
// time and energy factors over all-max), the optimisation (all-max
// meanwhile), then running. While running, each iteration every pipeline
// runs the plan its ranks hold, under that iteration's conditions, with
// clock changes taking effect after a latency; the iteration's measured time
// per pipeline carries noise; the control library's detector
// (control/straggler_detection.h) reads them as the server reads rank
// reports, its rule (control/plan_assignment.h) reassigns plans, and a new
// plan reaches the ranks plan_delivery_s after the iteration that caused it.
// Energy and time are the noise-free replays (RunPipeline), so the
// comparison with the idealised policy shows what the loop itself costs.
// Deterministic for a given seed and optimization_s (perseus emulate's default
// optimisation time is the solve's measured wall time, which varies from run
// to run; --optimization-s fixes it). Not thread-safe.
#pragma once

#include "emulator/emulation_loop.h"
#include "perseus/emulator.h"
#include "perseus/optimizer.h"

namespace perseus::emulator {

// `loop` gives pipelines, iterations, events and tracked GPUs (its timeline
// fields are ignored); `optimization_s` is the time the optimisation takes.
// The report's savings fields are filled by the caller (they need all-max).
ClosedLoopReport RunClosedLoop(const Problem& problem, const Frontier& frontier, const LoopSpec& loop,
                               const ClosedLoopOptions& options, double optimization_s);

}  // namespace perseus::emulator
