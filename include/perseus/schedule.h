// Pipeline schedules: the order in which each GPU runs its forward and
// backward computations in one training iteration.
//
// Supported: synchronous 1F1B in the DeepSpeed/Megatron order (stage s runs
// min(S-s-1, M) warm-up forwards, then alternates forward/backward, then
// cool-down backwards), GPipe (all forwards, then all backwards),
// Megatron's interleaved 1F1B with v model chunks per GPU (virtual stage
// chunk*S + s lives on GPU s; requires M to be a multiple of S), and two
// zero-bubble schedules that split backwards into an input-gradient half
// (kBackwardInput, passed on at once) and a weight-gradient half
// (kBackwardWeight, deferred into bubbles):
//  - ZB-H1 (Qi et al., ICLR '24): stage s runs, for x = 0 .. M+S-2, the
//    forward of microbatch x, the input gradient of x-(S-1-s) and the weight
//    gradient of x-(S-1), each when its microbatch is in 0..M-1. 1F1B's
//    memory, a third of its bubble.
//  - DualPipeV (DeepSeek's DualPipe cut in half): two chunks per GPU in a V,
//    virtual stage s (chunk 0) and 2S-1-s (chunk 1) on GPU s, in the order of
//    DeepSeek's dualpipev.py; some backwards whole, some split. M >= 2S.
//  - ZB-V (Qi et al., section 6; PyTorch's ScheduleZBVZeroBubble): the same
//    V of two chunks per GPU, every backward split, in PyTorch's order.
// docs/schedules.md draws each for small sizes.
#pragma once

#include <string>
#include <vector>

#include "perseus/profile.h"
#include "perseus/status.h"

namespace perseus {

enum class ScheduleKind { k1F1B, kGPipe, kInterleaved1F1B, kZBH1, kDualPipeV, kZBV };
// "1f1b", "gpipe", "interleaved-1f1b", "zb-h1", "dualpipev", "zb-v"
const char* ScheduleName(ScheduleKind kind);
Result<ScheduleKind> ParseScheduleKind(const std::string& name);
// Whether the schedule runs backward_input / backward_weight computations.
bool SplitsBackward(ScheduleKind kind);
// Whether the schedule places two model chunks per GPU in a V (dualpipev, zb-v).
bool VShaped(ScheduleKind kind);

struct ScheduleSpec {
  ScheduleKind kind = ScheduleKind::k1F1B;
  int stages = 0;        // GPUs (pipeline stages) in one pipeline
  int microbatches = 0;  // microbatches per iteration
  int chunks = 1;        // model chunks per GPU (interleaved: any; dualpipev, zb-v: 2)
  int virtual_stages() const { return stages * chunks; }
  // The position along the model of `chunk` on GPU `stage`.
  int VirtualStage(int stage, int chunk) const {
    if (VShaped(kind)) return chunk == 0 ? stage : 2 * stages - 1 - stage;
    return chunk * stages + stage;
  }
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
