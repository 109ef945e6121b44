// The three pipeline schedules.
#include "perseus/schedule.h"

#include <algorithm>

namespace perseus {

const char* ScheduleName(ScheduleKind kind) {
  switch (kind) {
    case ScheduleKind::k1F1B: return "1f1b";
    case ScheduleKind::kGPipe: return "gpipe";
    case ScheduleKind::kInterleaved1F1B: return "interleaved-1f1b";
  }
  return "?";
}

Result<ScheduleKind> ParseScheduleKind(const std::string& name) {
  if (name == "1f1b") return ScheduleKind::k1F1B;
  if (name == "gpipe") return ScheduleKind::kGPipe;
  if (name == "interleaved-1f1b" || name == "interleaved") return ScheduleKind::kInterleaved1F1B;
  return Status::InvalidArgument("schedule: expected '1f1b', 'gpipe' or 'interleaved-1f1b', got '" + name + "'");
}

namespace {

constexpr int kMaxStages = 4096;
constexpr int kMaxMicrobatches = 1 << 16;

Status Validate(const ScheduleSpec& s) {
  if (s.stages < 1 || s.stages > kMaxStages) {
    return Status::InvalidArgument("stages: expected 1.." + std::to_string(kMaxStages) + ", got " + std::to_string(s.stages));
  }
  if (s.microbatches < 1 || s.microbatches > kMaxMicrobatches) {
    return Status::InvalidArgument("microbatches: expected 1.." + std::to_string(kMaxMicrobatches) + ", got " +
                                   std::to_string(s.microbatches));
  }
  if (s.kind != ScheduleKind::kInterleaved1F1B && s.chunks != 1) {
    return Status::InvalidArgument("chunks: only the interleaved-1f1b schedule takes model chunks, got " +
                                   std::to_string(s.chunks));
  }
  if (s.kind == ScheduleKind::kInterleaved1F1B) {
    if (s.chunks < 1 || s.chunks > 64) return Status::InvalidArgument("chunks: expected 1..64, got " + std::to_string(s.chunks));
    if (s.microbatches % s.stages != 0) {
      return Status::InvalidArgument("microbatches: interleaved-1f1b needs a multiple of stages (" +
                                     std::to_string(s.stages) + "), got " + std::to_string(s.microbatches));
    }
  }
  if (static_cast<long long>(s.stages) * s.chunks * s.microbatches * 2 > 50'000'000LL) {
    return Status::InvalidArgument("stages x microbatches x chunks: too many computations (over 50 million)");
  }
  return Status::Ok();
}

std::vector<Computation> OneFOneB(int s, int S, int M) {
  std::vector<Computation> order;
  int warmup = std::min(S - s - 1, M);
  for (int m = 0; m < warmup; ++m) order.push_back({Instruction::kForward, m, 0});
  for (int i = 0; i < M - warmup; ++i) {
    order.push_back({Instruction::kForward, warmup + i, 0});
    order.push_back({Instruction::kBackward, i, 0});
  }
  for (int m = M - warmup; m < M; ++m) order.push_back({Instruction::kBackward, m, 0});
  return order;
}

std::vector<Computation> GPipe(int M) {
  std::vector<Computation> order;
  for (int m = 0; m < M; ++m) order.push_back({Instruction::kForward, m, 0});
  for (int m = 0; m < M; ++m) order.push_back({Instruction::kBackward, m, 0});
  return order;
}

// Megatron-LM's interleaved schedule (forward_backward_pipelining_with_interleaving).
Computation InterleavedStep(int k, int S, int v, bool forward) {
  int group = k % (S * v);
  int chunk = group / S;
  if (!forward) chunk = v - 1 - chunk;
  int microbatch = (k / (S * v)) * S + k % S;
  return {forward ? Instruction::kForward : Instruction::kBackward, microbatch, chunk};
}

std::vector<Computation> Interleaved(int s, int S, int M, int v) {
  int total = M * v;
  int warmup = (M == S) ? total : std::min((S - s - 1) * 2 + (v - 1) * S, total);
  std::vector<Computation> order;
  for (int k = 0; k < warmup; ++k) order.push_back(InterleavedStep(k, S, v, true));
  for (int i = 0; i < total - warmup; ++i) {
    order.push_back(InterleavedStep(warmup + i, S, v, true));
    order.push_back(InterleavedStep(i, S, v, false));
  }
  for (int k = total - warmup; k < total; ++k) order.push_back(InterleavedStep(k, S, v, false));
  return order;
}

}  // namespace

Result<Schedule> BuildSchedule(const ScheduleSpec& spec) {
  PERSEUS_RETURN_IF_ERROR(Validate(spec));
  Schedule sched;
  sched.spec = spec;
  sched.per_stage.resize(spec.stages);
  for (int s = 0; s < spec.stages; ++s) {
    switch (spec.kind) {
      case ScheduleKind::k1F1B: sched.per_stage[s] = OneFOneB(s, spec.stages, spec.microbatches); break;
      case ScheduleKind::kGPipe: sched.per_stage[s] = GPipe(spec.microbatches); break;
      case ScheduleKind::kInterleaved1F1B:
        sched.per_stage[s] = Interleaved(s, spec.stages, spec.microbatches, spec.chunks);
        break;
    }
  }
  return sched;
}

}  // namespace perseus
