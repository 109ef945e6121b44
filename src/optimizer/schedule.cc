// The pipeline schedules' per-GPU orders.
#include "perseus/schedule.h"

#include <algorithm>
#include <deque>
#include <utility>

namespace perseus {

const char* ScheduleName(ScheduleKind kind) {
  switch (kind) {
    case ScheduleKind::k1F1B: return "1f1b";
    case ScheduleKind::kGPipe: return "gpipe";
    case ScheduleKind::kInterleaved1F1B: return "interleaved-1f1b";
    case ScheduleKind::kZBH1: return "zb-h1";
    case ScheduleKind::kDualPipeV: return "dualpipev";
    case ScheduleKind::kZBV: return "zb-v";
  }
  return "?";
}

Result<ScheduleKind> ParseScheduleKind(const std::string& name) {
  if (name == "1f1b") return ScheduleKind::k1F1B;
  if (name == "gpipe") return ScheduleKind::kGPipe;
  if (name == "interleaved-1f1b" || name == "interleaved") return ScheduleKind::kInterleaved1F1B;
  if (name == "zb-h1") return ScheduleKind::kZBH1;
  if (name == "dualpipev") return ScheduleKind::kDualPipeV;
  if (name == "zb-v") return ScheduleKind::kZBV;
  return Status::InvalidArgument(
      "schedule: expected '1f1b', 'gpipe', 'interleaved-1f1b', 'zb-h1', 'dualpipev' or 'zb-v', got '" + name + "'");
}

bool SplitsBackward(ScheduleKind kind) {
  return kind == ScheduleKind::kZBH1 || kind == ScheduleKind::kDualPipeV || kind == ScheduleKind::kZBV;
}

bool VShaped(ScheduleKind kind) { return kind == ScheduleKind::kDualPipeV || kind == ScheduleKind::kZBV; }

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
  if (VShaped(s.kind)) {
    if (s.chunks != 2) {
      return Status::InvalidArgument(std::string("chunks: ") + ScheduleName(s.kind) +
                                     " runs 2 model chunks per GPU (a V), got " + std::to_string(s.chunks));
    }
    if (s.kind == ScheduleKind::kDualPipeV && s.microbatches < 2 * s.stages) {
      return Status::InvalidArgument("microbatches: dualpipev needs at least twice the stages (" +
                                     std::to_string(2 * s.stages) + "), got " + std::to_string(s.microbatches));
    }
  } else if (s.kind != ScheduleKind::kInterleaved1F1B && s.chunks != 1) {
    return Status::InvalidArgument(
        "chunks: only the interleaved-1f1b, dualpipev and zb-v schedules take model chunks, got " +
        std::to_string(s.chunks));
  }
  if (s.kind == ScheduleKind::kInterleaved1F1B) {
    if (s.chunks < 1 || s.chunks > 64) return Status::InvalidArgument("chunks: expected 1..64, got " + std::to_string(s.chunks));
    if (s.microbatches % s.stages != 0) {
      return Status::InvalidArgument("microbatches: interleaved-1f1b needs a multiple of stages (" +
                                     std::to_string(s.stages) + "), got " + std::to_string(s.microbatches));
    }
  }
  // Computations per microbatch, stage and chunk: forward and backward, or
  // forward and the backward's two halves.
  const long long per_microbatch = SplitsBackward(s.kind) ? 3 : 2;
  if (static_cast<long long>(s.stages) * s.chunks * s.microbatches * per_microbatch > 50'000'000LL) {
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

// ZB-H1: at step x, F(x), Bi(x-(S-1-s)), W(x-(S-1)) where in range.
std::vector<Computation> ZeroBubbleH1(int s, int S, int M) {
  std::vector<Computation> order;
  for (int x = 0; x <= M + S - 2; ++x) {
    if (x < M) order.push_back({Instruction::kForward, x, 0});
    const int b = x - (S - 1 - s), w = x - (S - 1);
    if (b >= 0 && b < M) order.push_back({Instruction::kBackwardInput, b, 0});
    if (w >= 0 && w < M) order.push_back({Instruction::kBackwardWeight, w, 0});
  }
  return order;
}

// DualPipeV on GPU i: DeepSeek's dualpipev.py steps 1-8. Each chunk's
// forwards and backwards go in microbatch order; a split backward leaves its
// weight gradient in a queue that W() runs oldest first.
class DualPipeVOrder {
 public:
  std::vector<Computation> Build(int i, int S, int M) {
    for (int k = 0; k < 2 * (S - i - 1); ++k) F(0);  // 1: nF0
    for (int k = 0; k < i + 1; ++k) {                  // 2: nF0F1
      F(0);
      F(1);
    }
    for (int k = 0; k < S - i - 1; ++k) {  // 3: nB1W1F1
      B(1, true);
      W();
      F(1);
    }
    for (int k = 0; k < M - 2 * S + i + 1; ++k) {  // 4: nF0B1F1B0, the steady state
      F(0);
      B(1, false);
      F(1);
      B(0, false);
    }
    for (int k = 0; k < S - i - 1; ++k) {  // 5: nB1F1B0
      B(1, false);
      F(1);
      B(0, false);
    }
    bool split = false;  // 6: nB1B0, the second half split
    for (int k = 0; k < i + 1; ++k) {
      if (k == (i + 1) / 2 && i % 2 == 1) split = true;
      B(1, split);
      if (k == (i + 1) / 2 && i % 2 == 0) split = true;
      B(0, split);
    }
    for (int k = 0; k < S - i - 1; ++k) {  // 7: nWB0
      W();
      B(0, true);
    }
    for (int k = 0; k < i + 1; ++k) W();  // 8: nW
    return std::move(order_);
  }

 private:
  void F(int chunk) { order_.push_back({Instruction::kForward, next_forward_[chunk]++, chunk}); }
  void B(int chunk, bool split) {
    const int m = next_backward_[chunk]++;
    order_.push_back({split ? Instruction::kBackwardInput : Instruction::kBackward, m, chunk});
    if (split) weights_.push_back({chunk, m});
  }
  void W() {
    order_.push_back({Instruction::kBackwardWeight, weights_.front().second, weights_.front().first});
    weights_.pop_front();
  }

  std::vector<Computation> order_;
  int next_forward_[2] = {0, 0}, next_backward_[2] = {0, 0};
  std::deque<std::pair<int, int>> weights_;  // (chunk, microbatch) of split backwards
};

// ZB-V on GPU r (Qi et al., section 6), in the order of PyTorch's
// ScheduleZBVZeroBubble: laid out for n = max(2S-1, M) microbatches, of
// which those >= M are left out. Each chunk's forwards, input gradients and
// weight gradients go in microbatch order.
class ZeroBubbleVOrder {
 public:
  explicit ZeroBubbleVOrder(int M) : M_(M) {}

  std::vector<Computation> Build(int r, int S) {
    const int n = std::max(2 * S - 1, M_);
    for (int k = 0; k < 2 * (S - r) - 1; ++k) F(0);  // warm-up: chunk 0 fills the pipeline
    for (int k = 0; k < r; ++k) {
      F(1);
      F(0);
    }
    for (int k = 0; k < S - r; ++k) {  // the turn of the V: chunk 1's first backwards
      F(1);
      BW(1);
    }
    while (next_[1][0] < next_[0][0] || next_[0][0] < n) {  // steady state
      if (next_[0][0] < n) F(0);
      BW(0);
      F(1);
      BW(1);
    }
    for (int k = 0; k < r; ++k) {  // cool-down: input gradients first,
      Add(Instruction::kBackwardInput, 0);
      Add(Instruction::kBackwardInput, 1);
    }
    for (int k = 0; k < S - r; ++k) {
      Add(Instruction::kBackwardInput, 0);
      Add(Instruction::kBackwardWeight, 0);
    }
    while (next_[1][2] < next_[1][1]) Add(Instruction::kBackwardWeight, 1);  // then the deferred weights
    while (next_[0][2] < next_[0][1]) Add(Instruction::kBackwardWeight, 0);
    return std::move(order_);
  }

 private:
  void F(int chunk) { Add(Instruction::kForward, chunk); }
  void BW(int chunk) {
    Add(Instruction::kBackwardInput, chunk);
    Add(Instruction::kBackwardWeight, chunk);
  }
  void Add(Instruction instruction, int chunk) {
    const int kind = instruction == Instruction::kForward ? 0 : instruction == Instruction::kBackwardInput ? 1 : 2;
    const int m = next_[chunk][kind]++;
    if (m < M_) order_.push_back({instruction, m, chunk});
  }

  const int M_;
  std::vector<Computation> order_;
  int next_[2][3] = {{0, 0, 0}, {0, 0, 0}};  // [chunk][forward, input gradient, weight gradient]
};

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
      case ScheduleKind::kZBH1: sched.per_stage[s] = ZeroBubbleH1(s, spec.stages, spec.microbatches); break;
      case ScheduleKind::kDualPipeV:
        sched.per_stage[s] = DualPipeVOrder().Build(s, spec.stages, spec.microbatches);
        break;
      case ScheduleKind::kZBV: sched.per_stage[s] = ZeroBubbleVOrder(spec.microbatches).Build(s, spec.stages); break;
    }
  }
  return sched;
}

}  // namespace perseus
