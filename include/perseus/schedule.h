// Pipeline schedules: the order in which each GPU runs its forward and
// backward computations in one training iteration.
//
// Supported: synchronous 1F1B in the DeepSpeed/Megatron order (stage s runs
// min(S-s-1, M) warm-up forwards, then alternates forward/backward, then
// cool-down backwards), GPipe (all forwards, then all backwards) and
// Megatron's interleaved 1F1B with v model chunks per GPU (virtual stage
// chunk*S + s lives on GPU s; requires M to be a multiple of S).
#pragma once

#include <string>
#include <vector>

#include "perseus/profile.h"
#include "perseus/status.h"

namespace perseus {

enum class ScheduleKind { k1F1B, kGPipe, kInterleaved1F1B };
const char* ScheduleName(ScheduleKind kind);  // "1f1b", "gpipe", "interleaved-1f1b"
Result<ScheduleKind> ParseScheduleKind(const std::string& name);

struct ScheduleSpec {
  ScheduleKind kind = ScheduleKind::k1F1B;
  int stages = 0;        // GPUs (pipeline stages) in one pipeline
  int microbatches = 0;  // microbatches per iteration
  int chunks = 1;        // model chunks per GPU (interleaved only)
  int virtual_stages() const { return stages * chunks; }
};

// One computation in one GPU's execution order.
struct Computation {
  Instruction instruction = Instruction::kForward;
  int microbatch = 0;
  int chunk = 0;  // model chunk on this GPU (0 unless interleaved)
};

struct Schedule {
  ScheduleSpec spec;
  std::vector<std::vector<Computation>> per_stage;  // [stage] -> execution order
};

// Validates `spec` (errors name the field) and builds the execution orders.
Result<Schedule> BuildSchedule(const ScheduleSpec& spec);

}  // namespace perseus
