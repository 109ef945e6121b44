// Tests of the pipeline schedules: exact 1F1B and GPipe orders, Megatron's
// interleaved 1F1B, the zero-bubble ZB-H1, DualPipeV and ZB-V orders, and
// validation of the schedule spec.
#include "perseus/schedule.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <set>
#include <string>
#include <tuple>
#include <vector>

namespace perseus {
namespace {

// A compact text form of an execution order: "F0 F1 B0 ..." or, with chunks,
// "F0.1" (chunk 0, microbatch 1); split backwards are "Bi" and "W".
std::string Render(const std::vector<Computation>& order, bool chunks = false) {
  std::string out;
  for (const Computation& c : order) {
    if (!out.empty()) out += ' ';
    out += InstructionSymbol(c.instruction);
    if (chunks) out += std::to_string(c.chunk) + ".";
    out += std::to_string(c.microbatch);
  }
  return out;
}

Schedule Build(ScheduleKind kind, int stages, int microbatches, int chunks = 1) {
  Result<Schedule> s = BuildSchedule(ScheduleSpec{kind, stages, microbatches, chunks});
  EXPECT_TRUE(s.ok()) << s.status().ToString();
  return s.ok() ? *s : Schedule{};
}

// Forwards before the first backward.
int WarmupCount(const std::vector<Computation>& order) {
  int n = 0;
  for (const Computation& c : order) {
    if (c.instruction == Instruction::kBackward) break;
    ++n;
  }
  return n;
}

std::string Error(const ScheduleSpec& spec) {
  Result<Schedule> s = BuildSchedule(spec);
  if (s.ok()) return "<built without error>";
  EXPECT_EQ(s.status().code(), Status::Code::kInvalidArgument);
  return s.status().message();
}

TEST(OneFOneB, FirstAndLastStageOrdersForFourStagesEightMicrobatches) {
  Schedule s = Build(ScheduleKind::k1F1B, 4, 8);
  ASSERT_EQ(s.per_stage.size(), 4u);
  EXPECT_EQ(Render(s.per_stage[0]), "F0 F1 F2 F3 B0 F4 B1 F5 B2 F6 B3 F7 B4 B5 B6 B7");
  EXPECT_EQ(Render(s.per_stage[1]), "F0 F1 F2 B0 F3 B1 F4 B2 F5 B3 F6 B4 F7 B5 B6 B7");
  EXPECT_EQ(Render(s.per_stage[3]), "F0 B0 F1 B1 F2 B2 F3 B3 F4 B4 F5 B5 F6 B6 F7 B7");
  for (const auto& order : s.per_stage) {
    for (const Computation& c : order) EXPECT_EQ(c.chunk, 0);
  }
}

TEST(OneFOneB, WarmupIsMinOfRemainingStagesAndMicrobatches) {
  for (int S : {1, 2, 3, 4, 7}) {
    for (int M : {1, 2, 3, 4, 8, 9}) {
      Schedule s = Build(ScheduleKind::k1F1B, S, M);
      ASSERT_EQ(static_cast<int>(s.per_stage.size()), S);
      for (int st = 0; st < S; ++st) {
        const auto& order = s.per_stage[st];
        SCOPED_TRACE("S=" + std::to_string(S) + " M=" + std::to_string(M) + " stage " + std::to_string(st) + ": " +
                     Render(order));
        ASSERT_EQ(static_cast<int>(order.size()), 2 * M);
        // The first backward follows warmup + 1 forwards, unless every forward is warm-up.
        const int warmup = std::min(S - st - 1, M);
        EXPECT_EQ(WarmupCount(order), warmup == M ? M : warmup + 1);
        // Forwards and backwards each appear in microbatch order, exactly once.
        int next_f = 0, next_b = 0;
        for (const Computation& c : order) {
          if (c.instruction == Instruction::kForward) {
            EXPECT_EQ(c.microbatch, next_f++);
          } else {
            EXPECT_EQ(c.microbatch, next_b++);
            EXPECT_LT(c.microbatch, next_f);  // a backward never precedes its forward
          }
        }
        EXPECT_EQ(next_f, M);
        EXPECT_EQ(next_b, M);
      }
    }
  }
}

TEST(OneFOneB, FewerMicrobatchesThanStages) {
  Schedule s = Build(ScheduleKind::k1F1B, 4, 2);
  EXPECT_EQ(Render(s.per_stage[0]), "F0 F1 B0 B1");  // warm-up min(3, 2) = 2
  EXPECT_EQ(Render(s.per_stage[1]), "F0 F1 B0 B1");  // min(2, 2) = 2
  EXPECT_EQ(Render(s.per_stage[2]), "F0 F1 B0 B1");  // min(1, 2) = 1: F0, then F1 B0, then B1
  EXPECT_EQ(Render(s.per_stage[3]), "F0 B0 F1 B1");
  Schedule one = Build(ScheduleKind::k1F1B, 3, 1);
  for (const auto& order : one.per_stage) EXPECT_EQ(Render(order), "F0 B0");
}

TEST(OneFOneB, SingleStageAlternates) {
  Schedule s = Build(ScheduleKind::k1F1B, 1, 3);
  EXPECT_EQ(Render(s.per_stage[0]), "F0 B0 F1 B1 F2 B2");
}

TEST(GPipe, AllForwardsThenAllBackwardsOnEveryStage) {
  Schedule s = Build(ScheduleKind::kGPipe, 3, 4);
  ASSERT_EQ(s.per_stage.size(), 3u);
  for (const auto& order : s.per_stage) EXPECT_EQ(Render(order), "F0 F1 F2 F3 B0 B1 B2 B3");
  EXPECT_EQ(s.spec.kind, ScheduleKind::kGPipe);
  EXPECT_EQ(s.spec.stages, 3);
  EXPECT_EQ(s.spec.microbatches, 4);
}

TEST(Interleaved, TwoStagesTwoChunksFourMicrobatchesExactOrder) {
  Schedule s = Build(ScheduleKind::kInterleaved1F1B, 2, 4, 2);
  ASSERT_EQ(s.per_stage.size(), 2u);
  // Megatron-LM: stage 0 warms up with (2-0-1)*2 + (2-1)*2 = 4 forwards, stage 1 with 2.
  EXPECT_EQ(Render(s.per_stage[0], true),
            "F0.0 F0.1 F1.0 F1.1 F0.2 B1.0 F0.3 B1.1 F1.2 B0.0 F1.3 B0.1 B1.2 B1.3 B0.2 B0.3");
  EXPECT_EQ(Render(s.per_stage[1], true),
            "F0.0 F0.1 F1.0 B1.0 F1.1 B1.1 F0.2 B0.0 F0.3 B0.1 F1.2 B1.2 F1.3 B1.3 B0.2 B0.3");
}

TEST(Interleaved, EveryComputationOnceWarmupAndChunkOrderFollowMegatron) {
  struct Case { int S, M, v; };
  for (Case c : {Case{2, 4, 2}, Case{2, 2, 2}, Case{2, 6, 3}, Case{4, 8, 2}, Case{4, 4, 2}, Case{3, 9, 2},
                 Case{1, 3, 2}}) {
    Schedule s = Build(ScheduleKind::kInterleaved1F1B, c.S, c.M, c.v);
    ASSERT_EQ(static_cast<int>(s.per_stage.size()), c.S);
    const int total = c.M * c.v;
    for (int st = 0; st < c.S; ++st) {
      const auto& order = s.per_stage[st];
      SCOPED_TRACE("S=" + std::to_string(c.S) + " M=" + std::to_string(c.M) + " v=" + std::to_string(c.v) +
                   " stage " + std::to_string(st) + ": " + Render(order, true));
      ASSERT_EQ(static_cast<int>(order.size()), 2 * total);
      // Every (chunk, microbatch, instruction) exactly once.
      std::set<std::tuple<int, int, int>> seen;
      for (const Computation& k : order) {
        EXPECT_GE(k.chunk, 0);
        EXPECT_LT(k.chunk, c.v);
        EXPECT_GE(k.microbatch, 0);
        EXPECT_LT(k.microbatch, c.M);
        EXPECT_TRUE(seen.insert({k.chunk, k.microbatch, static_cast<int>(k.instruction)}).second);
      }
      EXPECT_EQ(static_cast<int>(seen.size()), 2 * total);
      // Megatron's warm-up: all forwards when M == S, else
      // min((S - s - 1) * 2 + (v - 1) * S, M * v); then one more forward before the first backward.
      const int warmup = c.M == c.S ? total : std::min((c.S - st - 1) * 2 + (c.v - 1) * c.S, total);
      EXPECT_EQ(WarmupCount(order), warmup == total ? total : warmup + 1);
      // Forward k runs chunk (k mod S*v) / S on microbatch (k / (S*v)) * S + k mod S;
      // backward k the same microbatch on the mirrored chunk v - 1 - that.
      std::vector<Computation> fwd, bwd;
      for (const Computation& k : order) (k.instruction == Instruction::kForward ? fwd : bwd).push_back(k);
      for (int k = 0; k < total; ++k) {
        const int chunk = (k % (c.S * c.v)) / c.S;
        const int mb = (k / (c.S * c.v)) * c.S + k % c.S;
        EXPECT_EQ(fwd[k].chunk, chunk) << "forward " << k;
        EXPECT_EQ(fwd[k].microbatch, mb) << "forward " << k;
        EXPECT_EQ(bwd[k].chunk, c.v - 1 - chunk) << "backward " << k;
        EXPECT_EQ(bwd[k].microbatch, mb) << "backward " << k;
      }
    }
  }
}

TEST(Interleaved, MicrobatchesEqualStagesRunsAllForwardsFirst) {
  Schedule s = Build(ScheduleKind::kInterleaved1F1B, 2, 2, 2);
  EXPECT_EQ(Render(s.per_stage[0], true), "F0.0 F0.1 F1.0 F1.1 B1.0 B1.1 B0.0 B0.1");
  EXPECT_EQ(Render(s.per_stage[1], true), "F0.0 F0.1 F1.0 F1.1 B1.0 B1.1 B0.0 B0.1");
  EXPECT_EQ(s.spec.virtual_stages(), 4);
}

// Qi et al., ICLR '24, Figure 3 (ZB-H1, 4 stages): the first stage runs each
// input gradient's weight gradient right after it; the last stage defers its
// weight gradients by S-1 steps and runs the remaining ones at the end.
TEST(ZeroBubbleH1, FirstAndLastStageOrdersForFourStagesEightMicrobatches) {
  Schedule s = Build(ScheduleKind::kZBH1, 4, 8);
  ASSERT_EQ(s.per_stage.size(), 4u);
  EXPECT_EQ(Render(s.per_stage[0]),
            "F0 F1 F2 F3 Bi0 W0 F4 Bi1 W1 F5 Bi2 W2 F6 Bi3 W3 F7 Bi4 W4 Bi5 W5 Bi6 W6 Bi7 W7");
  EXPECT_EQ(Render(s.per_stage[1]),
            "F0 F1 F2 Bi0 F3 Bi1 W0 F4 Bi2 W1 F5 Bi3 W2 F6 Bi4 W3 F7 Bi5 W4 Bi6 W5 Bi7 W6 W7");
  EXPECT_EQ(Render(s.per_stage[3]),
            "F0 Bi0 F1 Bi1 F2 Bi2 F3 Bi3 W0 F4 Bi4 W1 F5 Bi5 W2 F6 Bi6 W3 F7 Bi7 W4 W5 W6 W7");
}

// Every computation once, a weight gradient after its input gradient, and
// no more activations held (forwards whose weight gradient has not run) on
// any stage than 1F1B holds on its first stage: 1F1B's peak memory.
TEST(ZeroBubbleH1, EveryComputationOnceAndOneFOneBsPeakMemory) {
  for (int S = 1; S <= 6; ++S) {
    for (int M = 1; M <= 12; ++M) {
      Schedule s = Build(ScheduleKind::kZBH1, S, M);
      for (int stage = 0; stage < S; ++stage) {
        std::set<std::pair<Instruction, int>> seen;
        int held = 0, peak = 0;
        for (const Computation& c : s.per_stage[stage]) {
          EXPECT_TRUE(seen.insert({c.instruction, c.microbatch}).second) << S << "x" << M;
          if (c.instruction == Instruction::kBackwardWeight) {
            EXPECT_TRUE(seen.count({Instruction::kBackwardInput, c.microbatch})) << S << "x" << M;
            --held;
          }
          if (c.instruction == Instruction::kForward) peak = std::max(peak, ++held);
        }
        EXPECT_EQ(seen.size(), 3u * M) << S << "x" << M << " stage " << stage;
        EXPECT_LE(peak, std::min(S, M)) << S << "x" << M << " stage " << stage;
      }
    }
  }
}

// DeepSeek's dualpipev.py steps, worked by hand for 2 GPUs and 4 microbatches:
// GPU 0 runs 2 forwards of chunk 0 to wait for chunk 1's first, splits its
// first chunk-1 backward (step 3) and the second half of its cool-down
// backwards (steps 6-7); GPU 1 splits the last pair.
TEST(DualPipeV, TwoStagesFourMicrobatchesExactOrder) {
  Schedule s = Build(ScheduleKind::kDualPipeV, 2, 4, 2);
  ASSERT_EQ(s.per_stage.size(), 2u);
  EXPECT_EQ(Render(s.per_stage[0], true),
            "F0.0 F0.1 F0.2 F1.0 Bi1.0 W1.0 F1.1 F0.3 B1.1 F1.2 B0.0 B1.2 F1.3 B0.1 B1.3 Bi0.2 W0.2 Bi0.3 W0.3");
  EXPECT_EQ(Render(s.per_stage[1], true),
            "F0.0 F1.0 F0.1 F1.1 F0.2 B1.0 F1.2 B0.0 F0.3 B1.1 F1.3 B0.1 B1.2 B0.2 Bi1.3 Bi0.3 W1.3 W0.3");
  EXPECT_EQ(s.spec.VirtualStage(0, 0), 0);
  EXPECT_EQ(s.spec.VirtualStage(1, 0), 1);
  EXPECT_EQ(s.spec.VirtualStage(1, 1), 2);
  EXPECT_EQ(s.spec.VirtualStage(0, 1), 3);
}

// Per GPU and chunk: every microbatch's forward once and its backward once,
// whole or as an input half followed (later) by its weight half.
TEST(DualPipeV, EveryComputationOnceInMicrobatchOrder) {
  for (int S = 1; S <= 6; ++S) {
    for (int M = 2 * S; M <= 2 * S + 5; ++M) {
      Schedule s = Build(ScheduleKind::kDualPipeV, S, M, 2);
      for (int stage = 0; stage < S; ++stage) {
        int forwards[2] = {0, 0}, backwards[2] = {0, 0};
        std::set<std::pair<int, int>> split_pending;
        for (const Computation& c : s.per_stage[stage]) {
          const std::string where = std::to_string(S) + "x" + std::to_string(M) + " GPU " + std::to_string(stage);
          switch (c.instruction) {
            case Instruction::kForward: EXPECT_EQ(c.microbatch, forwards[c.chunk]++) << where; break;
            case Instruction::kBackward: EXPECT_EQ(c.microbatch, backwards[c.chunk]++) << where; break;
            case Instruction::kBackwardInput:
              EXPECT_EQ(c.microbatch, backwards[c.chunk]++) << where;
              split_pending.insert({c.chunk, c.microbatch});
              break;
            case Instruction::kBackwardWeight:
              EXPECT_EQ(split_pending.erase({c.chunk, c.microbatch}), 1u) << where;
              break;
          }
        }
        EXPECT_TRUE(split_pending.empty());
        for (int chunk = 0; chunk < 2; ++chunk) {
          EXPECT_EQ(forwards[chunk], M);
          EXPECT_EQ(backwards[chunk], M);
        }
      }
    }
  }
}

// PyTorch's ScheduleZBVZeroBubble steps, worked by hand for 2 GPUs and 4
// microbatches: GPU 0 holds the V's turn (chunk 1 is the last virtual stage),
// so its chunk-1 backwards follow their forwards at once; GPU 1 defers the
// last weight gradients into the cool-down.
TEST(ZeroBubbleV, TwoStagesFourMicrobatchesExactOrder) {
  Schedule s = Build(ScheduleKind::kZBV, 2, 4, 2);
  ASSERT_EQ(s.per_stage.size(), 2u);
  EXPECT_EQ(Render(s.per_stage[0], true),
            "F0.0 F0.1 F0.2 F1.0 Bi1.0 W1.0 F1.1 Bi1.1 W1.1 F0.3 Bi0.0 W0.0 F1.2 Bi1.2 W1.2 Bi0.1 W0.1 F1.3 Bi1.3 W1.3 "
            "Bi0.2 W0.2 Bi0.3 W0.3");
  EXPECT_EQ(Render(s.per_stage[1], true),
            "F0.0 F1.0 F0.1 F1.1 Bi1.0 W1.0 F0.2 Bi0.0 W0.0 F1.2 Bi1.1 W1.1 F0.3 Bi0.1 W0.1 F1.3 Bi1.2 W1.2 Bi0.2 "
            "Bi1.3 Bi0.3 W0.2 W1.3 W0.3");
  EXPECT_EQ(s.spec.VirtualStage(1, 1), 2);
  EXPECT_EQ(s.spec.VirtualStage(0, 1), 3);
}

// Per GPU and chunk: every microbatch's forward, input gradient and weight
// gradient once, each kind in microbatch order, a weight gradient after its
// input gradient; with fewer microbatches than the 2S-1 the order is laid out
// for, the missing ones are left out. No GPU holds more activations (chunk
// forwards whose weight gradient has not run) than 2S chunks, that is 1F1B's
// peak of S whole stages (Qi et al., section 6).
TEST(ZeroBubbleV, EveryComputationOnceInMicrobatchOrderWithinOneFOneBsMemory) {
  for (int S = 1; S <= 6; ++S) {
    for (int M = 1; M <= 3 * S + 2; ++M) {
      Schedule s = Build(ScheduleKind::kZBV, S, M, 2);
      for (int stage = 0; stage < S; ++stage) {
        const std::string where = std::to_string(S) + "x" + std::to_string(M) + " GPU " + std::to_string(stage);
        int next[2][3] = {{0, 0, 0}, {0, 0, 0}};
        int held = 0, peak = 0;
        for (const Computation& c : s.per_stage[stage]) {
          const int kind = c.instruction == Instruction::kForward         ? 0
                           : c.instruction == Instruction::kBackwardInput ? 1
                                                                          : 2;
          ASSERT_NE(c.instruction, Instruction::kBackward) << where;
          EXPECT_EQ(c.microbatch, next[c.chunk][kind]++) << where;
          if (kind == 2) {
            EXPECT_LT(c.microbatch, next[c.chunk][1]) << where;
            --held;
          }
          if (kind == 0) peak = std::max(peak, ++held);
        }
        for (int chunk = 0; chunk < 2; ++chunk) {
          for (int kind = 0; kind < 3; ++kind) EXPECT_EQ(next[chunk][kind], M) << where;
        }
        EXPECT_LE(peak, 2 * S) << where;
      }
    }
  }
}

TEST(ScheduleValidation, ErrorsNameTheField) {
  EXPECT_EQ(Error({ScheduleKind::k1F1B, 0, 4, 1}), "stages: expected 1..4096, got 0");
  EXPECT_EQ(Error({ScheduleKind::kGPipe, -2, 4, 1}), "stages: expected 1..4096, got -2");
  EXPECT_EQ(Error({ScheduleKind::k1F1B, 4097, 4, 1}), "stages: expected 1..4096, got 4097");
  EXPECT_EQ(Error({ScheduleKind::k1F1B, 4, 0, 1}), "microbatches: expected 1..65536, got 0");
  EXPECT_EQ(Error({ScheduleKind::kInterleaved1F1B, 2, 0, 2}), "microbatches: expected 1..65536, got 0");
  EXPECT_EQ(Error({ScheduleKind::k1F1B, 4, 8, 2}),
            "chunks: only the interleaved-1f1b, dualpipev and zb-v schedules take model chunks, got 2");
  EXPECT_EQ(Error({ScheduleKind::kGPipe, 4, 8, 0}),
            "chunks: only the interleaved-1f1b, dualpipev and zb-v schedules take model chunks, got 0");
  EXPECT_EQ(Error({ScheduleKind::kInterleaved1F1B, 2, 3, 2}),
            "microbatches: interleaved-1f1b needs a multiple of stages (2), got 3");
  EXPECT_EQ(Error({ScheduleKind::kInterleaved1F1B, 4, 2, 2}),
            "microbatches: interleaved-1f1b needs a multiple of stages (4), got 2");
  EXPECT_EQ(Error({ScheduleKind::kInterleaved1F1B, 2, 4, 0}), "chunks: expected 1..64, got 0");
  EXPECT_EQ(Error({ScheduleKind::kInterleaved1F1B, 2, 4, 65}), "chunks: expected 1..64, got 65");
  EXPECT_EQ(Error({ScheduleKind::kInterleaved1F1B, 4096, 65536, 64}),
            "stages x microbatches x chunks: too many computations (over 50 million)");
  // A split backward is three computations per microbatch: 1000 x 20000 x 3 = 60 million.
  EXPECT_EQ(Error({ScheduleKind::kZBH1, 1000, 20000, 1}),
            "stages x microbatches x chunks: too many computations (over 50 million)");
  EXPECT_EQ(Error({ScheduleKind::kDualPipeV, 4, 8, 1}), "chunks: dualpipev runs 2 model chunks per GPU (a V), got 1");
  EXPECT_EQ(Error({ScheduleKind::kDualPipeV, 4, 7, 2}),
            "microbatches: dualpipev needs at least twice the stages (8), got 7");
  EXPECT_EQ(Error({ScheduleKind::kZBH1, 4, 8, 2}),
            "chunks: only the interleaved-1f1b, dualpipev and zb-v schedules take model chunks, got 2");
  EXPECT_EQ(Error({ScheduleKind::kZBV, 4, 8, 3}), "chunks: zb-v runs 2 model chunks per GPU (a V), got 3");
  EXPECT_EQ(Error({ScheduleKind::kZBV, 4, 0, 2}), "microbatches: expected 1..65536, got 0");
}

TEST(ScheduleValidation, BuildsAtTheLimits) {
  EXPECT_TRUE(BuildSchedule({ScheduleKind::kGPipe, 1, 1, 1}).ok());
  EXPECT_TRUE(BuildSchedule({ScheduleKind::kInterleaved1F1B, 2, 2, 64}).ok());
}

TEST(ScheduleKindNames, ParseAndName) {
  EXPECT_EQ(*ParseScheduleKind("1f1b"), ScheduleKind::k1F1B);
  EXPECT_EQ(*ParseScheduleKind("gpipe"), ScheduleKind::kGPipe);
  EXPECT_EQ(*ParseScheduleKind("interleaved-1f1b"), ScheduleKind::kInterleaved1F1B);
  EXPECT_EQ(*ParseScheduleKind("interleaved"), ScheduleKind::kInterleaved1F1B);
  for (ScheduleKind k : {ScheduleKind::k1F1B, ScheduleKind::kGPipe, ScheduleKind::kInterleaved1F1B,
                         ScheduleKind::kZBH1, ScheduleKind::kDualPipeV, ScheduleKind::kZBV}) {
    Result<ScheduleKind> back = ParseScheduleKind(ScheduleName(k));
    ASSERT_TRUE(back.ok());
    EXPECT_EQ(*back, k);
  }
  EXPECT_STREQ(ScheduleName(ScheduleKind::k1F1B), "1f1b");
  EXPECT_STREQ(ScheduleName(ScheduleKind::kGPipe), "gpipe");
  EXPECT_STREQ(ScheduleName(ScheduleKind::kInterleaved1F1B), "interleaved-1f1b");
  EXPECT_STREQ(ScheduleName(ScheduleKind::kZBH1), "zb-h1");
  EXPECT_STREQ(ScheduleName(ScheduleKind::kDualPipeV), "dualpipev");
  EXPECT_STREQ(ScheduleName(ScheduleKind::kZBV), "zb-v");
  EXPECT_FALSE(SplitsBackward(ScheduleKind::kInterleaved1F1B));
  EXPECT_TRUE(SplitsBackward(ScheduleKind::kZBH1));
  EXPECT_TRUE(SplitsBackward(ScheduleKind::kDualPipeV));
  EXPECT_TRUE(SplitsBackward(ScheduleKind::kZBV));
  EXPECT_FALSE(VShaped(ScheduleKind::kInterleaved1F1B));
  EXPECT_TRUE(VShaped(ScheduleKind::kDualPipeV));
  EXPECT_TRUE(VShaped(ScheduleKind::kZBV));
  for (const char* bad : {"1F1B", "pipedream", "", " gpipe"}) {
    Result<ScheduleKind> k = ParseScheduleKind(bad);
    ASSERT_FALSE(k.ok()) << bad;
    EXPECT_EQ(k.status().code(), Status::Code::kInvalidArgument);
    EXPECT_EQ(k.status().message(),
              std::string("schedule: expected '1f1b', 'gpipe', 'interleaved-1f1b', 'zb-h1', 'dualpipev' or 'zb-v', ") +
                  "got '" + bad + "'");
  }
}

}  // namespace
}  // namespace perseus
