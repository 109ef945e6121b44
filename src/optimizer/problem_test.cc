// Tests of the computation DAG (BuildProblem) and of the plan evaluator
// (EvaluatePlan, EarliestStarts, AllMaxPlan) on hand-checked examples.
#include "perseus/problem.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <set>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

namespace perseus {
namespace {

// Two frequencies per instruction: [0] at 1000 MHz, [1] at 800 MHz.
struct StageValues {
  double fwd_t[2], fwd_e[2], bwd_t[2], bwd_e[2];
};

Profile MakeProfile(const std::vector<StageValues>& stages) {
  Profile p;
  for (const StageValues& v : stages) {
    StageProfile sp;
    for (int k = 0; k < 2; ++k) {
      sp.at(Instruction::kForward).push_back({k == 0 ? 1000 : 800, v.fwd_t[k], v.fwd_e[k]});
      sp.at(Instruction::kBackward).push_back({k == 0 ? 1000 : 800, v.bwd_t[k], v.bwd_e[k]});
    }
    p.stages.push_back(sp);
  }
  return p;
}

// Stage 0: F 1 s/10 J at max, 1.5 s/8 J slow; B 2 s/20 J, 3 s/16 J.
// Stage 1: F 1.5 s/12 J, 2 s/10 J;            B 3 s/24 J, 4 s/20 J.
Profile TwoStageProfile() {
  return MakeProfile({{{1, 1.5}, {10, 8}, {2, 3}, {20, 16}}, {{1.5, 2}, {12, 10}, {3, 4}, {24, 20}}});
}

ProblemSpec Spec(ScheduleKind kind, int stages, int microbatches, int chunks = 1, double blocking_w = 50,
                 int gpus = 1) {
  ProblemSpec spec;
  spec.schedule = ScheduleSpec{kind, stages, microbatches, chunks};
  spec.blocking_power_w = blocking_w;
  spec.gpus_per_stage = gpus;
  return spec;
}

Problem Build(const Profile& profile, const ProblemSpec& spec) {
  Result<Problem> p = BuildProblem(profile, spec);
  EXPECT_TRUE(p.ok()) << p.status().ToString();
  return p.ok() ? std::move(*p) : Problem{};
}

// Node id of (virtual stage, instruction, microbatch).
using Key = std::tuple<int, Instruction, int>;
std::map<Key, int> IndexNodes(const Problem& p) {
  std::map<Key, int> ids;
  for (int i = 0; i < p.num_nodes(); ++i) {
    const ProblemNode& n = p.nodes[i];
    EXPECT_TRUE(ids.emplace(Key{n.virtual_stage, n.comp.instruction, n.comp.microbatch}, i).second)
        << "duplicate node " << n.virtual_stage << " " << n.comp.microbatch;
  }
  return ids;
}

// True if a -> b is an arc, listed alike in a's succs and b's preds. (An arc
// that is both a pipeline dependency and a GPU-order arc, such as
// forward(last,m) -> backward(last,m) in 1F1B, may be listed twice; that is
// harmless to every consumer, so these tests compare sets of arcs.)
bool HasArc(const Problem& p, int a, int b) {
  const auto& s = p.nodes[a].succs;
  const auto& r = p.nodes[b].preds;
  const auto n = std::count(s.begin(), s.end(), b);
  return n >= 1 && std::count(r.begin(), r.end(), a) == n;
}

// Every arc the DAG must have, and only those: pipeline dependencies plus each GPU's order.
std::set<std::pair<int, int>> ExpectedArcs(const Problem& p) {
  std::map<Key, int> id = IndexNodes(p);
  const int last = p.schedule.spec.virtual_stages() - 1;
  // The node passing a microbatch's gradient on: its backward, or the input half.
  auto gradient = [&id](int v, int m) {
    auto it = id.find({v, Instruction::kBackward, m});
    return it != id.end() ? it->second : id.at({v, Instruction::kBackwardInput, m});
  };
  std::set<std::pair<int, int>> arcs;
  for (int v = 0; v <= last; ++v) {
    for (int m = 0; m < p.schedule.spec.microbatches; ++m) {
      if (v < last) arcs.insert({id.at({v, Instruction::kForward, m}), id.at({v + 1, Instruction::kForward, m})});
      if (v > 0) arcs.insert({gradient(v, m), gradient(v - 1, m)});
      auto weight = id.find({v, Instruction::kBackwardWeight, m});
      if (weight != id.end()) arcs.insert({id.at({v, Instruction::kBackwardInput, m}), weight->second});
    }
  }
  for (int m = 0; m < p.schedule.spec.microbatches; ++m) {
    arcs.insert({id.at({last, Instruction::kForward, m}), gradient(last, m)});
  }
  for (const auto& order : p.gpu_order) {
    for (size_t k = 1; k < order.size(); ++k) arcs.insert({order[k - 1], order[k]});
  }
  return arcs;
}

void ExpectWellFormed(const Problem& p) {
  std::set<std::pair<int, int>> arcs, pred_arcs;
  for (int i = 0; i < p.num_nodes(); ++i) {
    for (int v : p.nodes[i].succs) {
      EXPECT_GT(v, i) << "nodes are not in topological order";
      EXPECT_TRUE(HasArc(p, i, v)) << "preds and succs disagree on " << i << "->" << v;
      arcs.insert({i, v});
    }
    for (int u : p.nodes[i].preds) pred_arcs.insert({u, i});
  }
  EXPECT_EQ(pred_arcs, arcs);
  EXPECT_EQ(arcs, ExpectedArcs(p));
  // gpu_order lists each GPU's nodes in its schedule's order.
  ASSERT_EQ(static_cast<int>(p.gpu_order.size()), p.num_stages());
  size_t listed = 0;
  for (int s = 0; s < p.num_stages(); ++s) {
    const auto& order = p.gpu_order[s];
    ASSERT_EQ(order.size(), p.schedule.per_stage[s].size());
    listed += order.size();
    for (size_t k = 0; k < order.size(); ++k) {
      const ProblemNode& n = p.nodes[order[k]];
      EXPECT_EQ(n.stage, s);
      EXPECT_EQ(n.position, static_cast<int>(k));
      EXPECT_EQ(n.comp.instruction, p.schedule.per_stage[s][k].instruction);
      EXPECT_EQ(n.comp.microbatch, p.schedule.per_stage[s][k].microbatch);
      EXPECT_EQ(n.comp.chunk, p.schedule.per_stage[s][k].chunk);
      // DualPipeV's and ZB-V's V: chunk 1 runs the model's second half backwards across the GPUs.
      const int S = p.num_stages();
      const bool v_shape = VShaped(p.schedule.spec.kind);
      EXPECT_EQ(n.virtual_stage, v_shape && n.comp.chunk == 1 ? 2 * S - 1 - s : n.comp.chunk * S + s);
    }
  }
  EXPECT_EQ(static_cast<int>(listed), p.num_nodes());
}

TEST(BuildProblem, OneFOneBNodesArcsAndOrder) {
  Problem p = Build(TwoStageProfile(), Spec(ScheduleKind::k1F1B, 2, 3));
  EXPECT_EQ(p.num_stages(), 2);
  EXPECT_EQ(p.num_nodes(), 2 * 2 * 3);
  ExpectWellFormed(p);
  std::map<Key, int> id = IndexNodes(p);
  const auto F = Instruction::kForward;
  const auto B = Instruction::kBackward;
  for (int m = 0; m < 3; ++m) {
    EXPECT_TRUE(HasArc(p, id.at({0, F, m}), id.at({1, F, m}))) << m;  // forward(s,m) -> forward(s+1,m)
    EXPECT_TRUE(HasArc(p, id.at({1, B, m}), id.at({0, B, m}))) << m;  // backward(s+1,m) -> backward(s,m)
    EXPECT_TRUE(HasArc(p, id.at({1, F, m}), id.at({1, B, m}))) << m;  // forward(last,m) -> backward(last,m)
    EXPECT_FALSE(HasArc(p, id.at({0, F, m}), id.at({0, B, m}))) << m;  // not on stage 0: it waits for stage 1
  }
  // Stage 0 runs F0 F1 B0 F2 B1 B2: consecutive computations are chained.
  EXPECT_TRUE(HasArc(p, id.at({0, F, 1}), id.at({0, B, 0})));
  EXPECT_TRUE(HasArc(p, id.at({0, B, 0}), id.at({0, F, 2})));
  EXPECT_TRUE(HasArc(p, id.at({0, F, 2}), id.at({0, B, 1})));
  // The first node in topological order has no predecessors.
  EXPECT_TRUE(p.nodes[0].preds.empty());
  EXPECT_EQ(p.nodes[0].virtual_stage, 0);
  EXPECT_EQ(p.nodes[0].comp.instruction, F);
  EXPECT_EQ(p.nodes[0].comp.microbatch, 0);
}

TEST(BuildProblem, OptionsCopyTheProfileHighestFrequencyFirst) {
  Problem p = Build(TwoStageProfile(), Spec(ScheduleKind::k1F1B, 2, 2));
  EXPECT_EQ(p.gpus_per_stage, 1);
  EXPECT_DOUBLE_EQ(p.blocking_power_w, 50);
  std::map<Key, int> id = IndexNodes(p);
  const ProblemNode& b1 = p.nodes[id.at({1, Instruction::kBackward, 1})];
  ASSERT_EQ(b1.options.size(), 2u);
  EXPECT_EQ(b1.options[0].freq_mhz, 1000);
  EXPECT_DOUBLE_EQ(b1.options[0].time_s, 3);
  EXPECT_DOUBLE_EQ(b1.options[0].energy_j, 24);
  EXPECT_EQ(b1.options[1].freq_mhz, 800);
  EXPECT_DOUBLE_EQ(b1.options[1].time_s, 4);
  EXPECT_DOUBLE_EQ(b1.options[1].energy_j, 20);
}

TEST(BuildProblem, GpusPerStageMultipliesEnergyAndBlockingPowerNotTime) {
  Problem p = Build(TwoStageProfile(), Spec(ScheduleKind::k1F1B, 2, 2, 1, 50, 4));
  EXPECT_EQ(p.gpus_per_stage, 4);
  EXPECT_DOUBLE_EQ(p.blocking_power_w, 200);
  std::map<Key, int> id = IndexNodes(p);
  const ProblemNode& f0 = p.nodes[id.at({0, Instruction::kForward, 0})];
  EXPECT_DOUBLE_EQ(f0.options[0].time_s, 1);
  EXPECT_DOUBLE_EQ(f0.options[0].energy_j, 40);
  EXPECT_DOUBLE_EQ(f0.options[1].time_s, 1.5);
  EXPECT_DOUBLE_EQ(f0.options[1].energy_j, 32);
}

TEST(BuildProblem, GPipeDag) {
  Problem p = Build(TwoStageProfile(), Spec(ScheduleKind::kGPipe, 2, 4));
  EXPECT_EQ(p.num_nodes(), 16);
  ExpectWellFormed(p);
}

// Every stage: F 1 s, each backward half 1 s (the whole backward 2 s), one clock.
Profile UniformSplitProfile(int stages) {
  Profile p;
  for (int s = 0; s < stages; ++s) {
    StageProfile sp;
    sp.at(Instruction::kForward) = {{1000, 1, 100}};
    sp.at(Instruction::kBackward) = {{1000, 2, 200}};
    sp.at(Instruction::kBackwardInput) = {{1000, 1, 100}};
    sp.at(Instruction::kBackwardWeight) = {{1000, 1, 100}};
    p.stages.push_back(sp);
  }
  return p;
}

TEST(BuildProblem, ZeroBubbleSchedulesAreWellFormedAndAcyclic) {
  for (int S = 1; S <= 5; ++S) {
    for (int M = 1; M <= 9; ++M) {
      SCOPED_TRACE("zb-h1 " + std::to_string(S) + "x" + std::to_string(M));
      Problem p = Build(UniformSplitProfile(S), Spec(ScheduleKind::kZBH1, S, M));
      EXPECT_EQ(p.num_nodes(), 3 * S * M);
      ExpectWellFormed(p);
    }
    for (int M = 2 * S; M <= 2 * S + 4; ++M) {
      SCOPED_TRACE("dualpipev " + std::to_string(S) + "x" + std::to_string(M));
      ExpectWellFormed(Build(UniformSplitProfile(S), Spec(ScheduleKind::kDualPipeV, S, M, 2)));
      ExpectWellFormed(Build(UniformSplitProfile(2 * S), Spec(ScheduleKind::kDualPipeV, S, M, 2)));
    }
    for (int M = 1; M <= 3 * S; ++M) {
      SCOPED_TRACE("zb-v " + std::to_string(S) + "x" + std::to_string(M));
      ExpectWellFormed(Build(UniformSplitProfile(2 * S), Spec(ScheduleKind::kZBV, S, M, 2)));
    }
  }
}

// The papers' bubbles with F = B = W (1 s each): 1F1B idles (S-1)(F+B+W) per
// GPU, ZB-H1 a third of that, (S-1)F (Qi et al., Figure 3); DualPipeV, with
// each chunk half a stage, less again (its authors give half of ZB-H1's), and
// so does ZB-V: both take 3M + (S-1)F/2, the least a V can, as GPU S-1 gets
// its first input only after S-1 chunk forwards and then never idles.
TEST(BuildProblem, ZeroBubbleSchedulesShrinkTheBubble) {
  for (int S : {2, 4, 8}) {
    for (int M : {2 * S, 3 * S, 4 * S}) {
      const Profile profile = UniformSplitProfile(S);
      const double one_f_one_b = EvaluatePlan(Build(profile, Spec(ScheduleKind::k1F1B, S, M)),
                                              AllMaxPlan(Build(profile, Spec(ScheduleKind::k1F1B, S, M)))).time_s;
      const Problem zb = Build(profile, Spec(ScheduleKind::kZBH1, S, M));
      const double zb_h1 = EvaluatePlan(zb, AllMaxPlan(zb)).time_s;
      const Problem dv = Build(profile, Spec(ScheduleKind::kDualPipeV, S, M, 2));
      const double dualpipev = EvaluatePlan(dv, AllMaxPlan(dv)).time_s;
      EXPECT_DOUBLE_EQ(one_f_one_b, 3.0 * M + 3.0 * (S - 1)) << S << "x" << M;
      EXPECT_DOUBLE_EQ(zb_h1, 3.0 * M + (S - 1)) << S << "x" << M;
      const Problem zv = Build(profile, Spec(ScheduleKind::kZBV, S, M, 2));
      const double zb_v = EvaluatePlan(zv, AllMaxPlan(zv)).time_s;
      EXPECT_DOUBLE_EQ(zb_v, 3.0 * M + 0.5 * (S - 1)) << S << "x" << M;
      EXPECT_DOUBLE_EQ(dualpipev, zb_v) << S << "x" << M;
      EXPECT_LT(dualpipev, zb_h1) << S << "x" << M;
    }
  }
}

TEST(BuildProblem, ZeroBubbleScheduleNeedsTheSplitRows) {
  Result<Problem> p = BuildProblem(TwoStageProfile(), Spec(ScheduleKind::kZBH1, 2, 4));
  ASSERT_FALSE(p.ok());
  EXPECT_EQ(p.status().message(),
            "profile: stage 0 has no 'backward_input' and 'backward_weight' rows, which the zb-h1 schedule runs "
            "(docs/formats.md)");
}

TEST(BuildProblem, LargerPipelinesAreWellFormed) {
  std::vector<StageValues> four(4, StageValues{{1, 2}, {1, 1}, {2, 3}, {2, 2}});
  for (ScheduleKind kind : {ScheduleKind::k1F1B, ScheduleKind::kGPipe}) {
    for (int M : {1, 2, 3, 4, 8}) {
      SCOPED_TRACE(std::string(ScheduleName(kind)) + " M=" + std::to_string(M));
      Problem p = Build(MakeProfile(four), Spec(kind, 4, M));
      EXPECT_EQ(p.num_nodes(), 2 * 4 * M);
      ExpectWellFormed(p);
    }
  }
}

TEST(BuildProblem, InterleavedWithPerGpuProfileSplitsTimeAndEnergyByChunks) {
  Problem p = Build(TwoStageProfile(), Spec(ScheduleKind::kInterleaved1F1B, 2, 4, 2, 50, 3));
  EXPECT_EQ(p.num_nodes(), 2 * 2 * 2 * 4);
  ExpectWellFormed(p);
  std::map<Key, int> id = IndexNodes(p);
  // Virtual stage 2 is chunk 1 on GPU 0: half of GPU 0's values, energy x 3 GPUs.
  const ProblemNode& n = p.nodes[id.at({2, Instruction::kBackward, 3})];
  EXPECT_EQ(n.stage, 0);
  EXPECT_EQ(n.comp.chunk, 1);
  ASSERT_EQ(n.options.size(), 2u);
  EXPECT_EQ(n.options[0].freq_mhz, 1000);
  EXPECT_DOUBLE_EQ(n.options[0].time_s, 1.0);
  EXPECT_DOUBLE_EQ(n.options[0].energy_j, 30.0);
  EXPECT_DOUBLE_EQ(n.options[1].time_s, 1.5);
  EXPECT_DOUBLE_EQ(n.options[1].energy_j, 24.0);
  const ProblemNode& f = p.nodes[id.at({1, Instruction::kForward, 0})];
  EXPECT_EQ(f.stage, 1);
  EXPECT_DOUBLE_EQ(f.options[0].time_s, 0.75);
  EXPECT_DOUBLE_EQ(f.options[0].energy_j, 18.0);
  // The pipeline wraps from the last GPU's chunk 0 to the first GPU's chunk 1.
  EXPECT_TRUE(HasArc(p, id.at({1, Instruction::kForward, 2}), id.at({2, Instruction::kForward, 2})));
  EXPECT_TRUE(HasArc(p, id.at({2, Instruction::kBackward, 2}), id.at({1, Instruction::kBackward, 2})));
  EXPECT_TRUE(HasArc(p, id.at({3, Instruction::kForward, 2}), id.at({3, Instruction::kBackward, 2})));
}

TEST(BuildProblem, InterleavedWithPerVirtualStageProfile) {
  Profile prof = MakeProfile({{{1, 2}, {1, 0.9}, {2, 3}, {2, 1.8}},
                              {{3, 4}, {3, 2.9}, {4, 5}, {4, 3.8}},
                              {{5, 6}, {5, 4.9}, {6, 7}, {6, 5.8}},
                              {{7, 8}, {7, 6.9}, {8, 9}, {8, 7.8}}});
  Problem p = Build(prof, Spec(ScheduleKind::kInterleaved1F1B, 2, 4, 2));
  ExpectWellFormed(p);
  for (const ProblemNode& n : p.nodes) {
    const std::vector<FreqPoint>& want = prof.stages[n.virtual_stage].at(n.comp.instruction);
    ASSERT_EQ(n.options.size(), want.size());
    for (size_t k = 0; k < want.size(); ++k) {
      EXPECT_DOUBLE_EQ(n.options[k].time_s, want[k].time_s);  // not divided by chunks
      EXPECT_DOUBLE_EQ(n.options[k].energy_j, want[k].energy_j);
    }
  }
}

TEST(BuildProblem, InterleavedShapesAreAcyclic) {
  std::vector<StageValues> four(4, StageValues{{1, 2}, {1, 1}, {2, 3}, {2, 2}});
  struct Case { int M, v; };
  for (Case c : {Case{4, 2}, Case{8, 2}, Case{4, 3}, Case{12, 4}}) {
    SCOPED_TRACE("M=" + std::to_string(c.M) + " v=" + std::to_string(c.v));
    Problem p = Build(MakeProfile(four), Spec(ScheduleKind::kInterleaved1F1B, 4, c.M, c.v));
    EXPECT_EQ(p.num_nodes(), 2 * 4 * c.M * c.v);
    ExpectWellFormed(p);
  }
}

TEST(BuildProblem, Errors) {
  auto error = [](const Profile& prof, const ProblemSpec& spec) {
    Result<Problem> p = BuildProblem(prof, spec);
    if (p.ok()) return std::string("<built without error>");
    EXPECT_EQ(p.status().code(), Status::Code::kInvalidArgument);
    return p.status().message();
  };
  Profile two = TwoStageProfile();
  Profile three = MakeProfile(std::vector<StageValues>(3, StageValues{{1, 2}, {1, 1}, {2, 3}, {2, 2}}));
  EXPECT_EQ(error(three, Spec(ScheduleKind::k1F1B, 2, 4)), "profile has 3 stages but the pipeline needs 2");
  EXPECT_EQ(error(two, Spec(ScheduleKind::kGPipe, 4, 4)), "profile has 2 stages but the pipeline needs 4");
  EXPECT_EQ(error(three, Spec(ScheduleKind::kInterleaved1F1B, 2, 4, 2)),
            "profile has 3 stages but the pipeline needs 2 or 4");
  EXPECT_EQ(error(two, Spec(ScheduleKind::k1F1B, 0, 4)), "stages: expected 1..4096, got 0");
  EXPECT_EQ(error(two, Spec(ScheduleKind::k1F1B, 2, 4, 1, -1)), "blocking power: expected 0..100000 W, got -1.000000");
  EXPECT_EQ(error(two, Spec(ScheduleKind::k1F1B, 2, 4, 1, 50, 0)), "gpus per stage: expected 1..1024, got 0");
  EXPECT_EQ(error(two, Spec(ScheduleKind::k1F1B, 2, 4, 1, 50, 1025)), "gpus per stage: expected 1..1024, got 1025");
  EXPECT_TRUE(BuildProblem(two, Spec(ScheduleKind::k1F1B, 2, 4, 1, 0)).ok());  // zero blocking power is allowed
}

TEST(AllMaxPlan, PicksTheFirstOptionOfEveryNode) {
  Problem p = Build(TwoStageProfile(), Spec(ScheduleKind::k1F1B, 2, 3));
  PlanChoice all_max = AllMaxPlan(p);
  ASSERT_EQ(static_cast<int>(all_max.size()), p.num_nodes());
  for (int c : all_max) EXPECT_EQ(c, 0);
  for (const ProblemNode& n : p.nodes) EXPECT_EQ(n.options[0].freq_mhz, 1000);
}

// 2 stages, 2 microbatches, 1F1B. Stage 0 runs F0 F1 B0 B1, stage 1 runs F0 B0 F1 B1.
// All at max (tF0=1, tB0=2, tF1=1.5, tB1=3; s=stage):
//   stage 0: F0 [0,1]  F1 [1,2]   B0 [5.5,7.5]  B1 [10,12]
//   stage 1: F0 [1,2.5] B0 [2.5,5.5] F1 [5.5,7] B1 [7,10]
// T = 12, sum t = 2*(1+2+1.5+3) = 15, sum e = 2*(10+20+12+24) = 132.
// E = sum e + P * (S*T - sum t) = 132 + 50 * (2*12 - 15) = 582.
TEST(EvaluatePlan, TwoStagesTwoMicrobatchesByHand) {
  Problem p = Build(TwoStageProfile(), Spec(ScheduleKind::k1F1B, 2, 2));
  std::map<Key, int> id = IndexNodes(p);
  const auto F = Instruction::kForward;
  const auto B = Instruction::kBackward;

  PlanChoice all_max = AllMaxPlan(p);
  std::vector<double> start = EarliestStarts(p, all_max);
  ASSERT_EQ(static_cast<int>(start.size()), p.num_nodes());
  EXPECT_DOUBLE_EQ(start[id.at({0, F, 0})], 0);
  EXPECT_DOUBLE_EQ(start[id.at({0, F, 1})], 1);
  EXPECT_DOUBLE_EQ(start[id.at({1, F, 0})], 1);
  EXPECT_DOUBLE_EQ(start[id.at({1, B, 0})], 2.5);
  EXPECT_DOUBLE_EQ(start[id.at({1, F, 1})], 5.5);
  EXPECT_DOUBLE_EQ(start[id.at({0, B, 0})], 5.5);
  EXPECT_DOUBLE_EQ(start[id.at({1, B, 1})], 7);
  EXPECT_DOUBLE_EQ(start[id.at({0, B, 1})], 10);

  const double P = 50, S = 2;
  PlanCost c = EvaluatePlan(p, all_max);
  EXPECT_DOUBLE_EQ(c.time_s, 12);
  EXPECT_DOUBLE_EQ(c.energy_j, 132 + P * (S * 12 - 15));
  EXPECT_DOUBLE_EQ(c.energy_j, 582);

  // Slowing stage 0's second forward (1 s/10 J -> 1.5 s/8 J) is free in time:
  // F1 [1,2.5] still ends before B0 may start at 5.5. sum t = 15.5, sum e = 130.
  PlanChoice slow_f1 = all_max;
  slow_f1[id.at({0, F, 1})] = 1;
  c = EvaluatePlan(p, slow_f1);
  EXPECT_DOUBLE_EQ(c.time_s, 12);
  EXPECT_DOUBLE_EQ(c.energy_j, 130 + P * (S * 12 - 15.5));
  EXPECT_DOUBLE_EQ(c.energy_j, 555);

  // Everything at 800 MHz (tF0=1.5, tB0=3, tF1=2, tB1=4):
  //   stage 0: F0 [0,1.5] F1 [1.5,3]  B0 [7.5,10.5] B1 [13.5,16.5]
  //   stage 1: F0 [1.5,3.5] B0 [3.5,7.5] F1 [7.5,9.5] B1 [9.5,13.5]
  // T = 16.5, sum t = 21, sum e = 2*(8+16+10+20) = 108.
  PlanChoice all_min(p.num_nodes(), 1);
  c = EvaluatePlan(p, all_min);
  EXPECT_DOUBLE_EQ(c.time_s, 16.5);
  EXPECT_DOUBLE_EQ(c.energy_j, 108 + P * (S * 16.5 - 21));
  EXPECT_DOUBLE_EQ(c.energy_j, 708);
  EXPECT_DOUBLE_EQ(EarliestStarts(p, all_min)[id.at({0, B, 1})], 13.5);
}

// 1F1B on 2 GPUs x 2 microbatches: GPU 0 runs F0 F1 B0 B1, GPU 1 F0 B0 F1 B1.
TEST(ClockChanges, CountsChangesBetweenComputationsAndAcrossIterations) {
  Problem p = Build(TwoStageProfile(), Spec(ScheduleKind::k1F1B, 2, 2));
  std::map<Key, int> id = IndexNodes(p);
  EXPECT_EQ(ClockChangesPerGpu(p, AllMaxPlan(p)), (std::vector<int>{0, 0}));
  PlanChoice plan = AllMaxPlan(p);
  plan[id.at({0, Instruction::kBackward, 0})] = 1;  // GPU 0: 1000 1000 800 1000 -> 2 changes
  plan[id.at({1, Instruction::kForward, 0})] = 1;   // GPU 1: 800 1000 1000 800 -> 2 (none across
  plan[id.at({1, Instruction::kBackward, 1})] = 1;  // iterations: the last and the first are both 800)
  EXPECT_EQ(ClockChangesPerGpu(p, plan), (std::vector<int>{2, 2}));
  for (int& c : plan) c = 1;
  EXPECT_EQ(ClockChangesPerGpu(p, plan), (std::vector<int>{0, 0}));  // one clock throughout
}

TEST(EvaluatePlan, GpusPerStageScalesEnergyOnly) {
  Problem one = Build(TwoStageProfile(), Spec(ScheduleKind::k1F1B, 2, 2, 1, 50, 1));
  Problem two = Build(TwoStageProfile(), Spec(ScheduleKind::k1F1B, 2, 2, 1, 50, 2));
  PlanCost a = EvaluatePlan(one, AllMaxPlan(one));
  PlanCost b = EvaluatePlan(two, AllMaxPlan(two));
  EXPECT_DOUBLE_EQ(b.time_s, a.time_s);
  EXPECT_DOUBLE_EQ(b.energy_j, 2 * a.energy_j);
  EXPECT_DOUBLE_EQ(b.energy_j, 1164);
}

TEST(EvaluatePlan, ZeroBlockingPowerIsTheSumOfComputationEnergies) {
  Problem p = Build(TwoStageProfile(), Spec(ScheduleKind::kGPipe, 2, 2, 1, 0));
  PlanCost c = EvaluatePlan(p, AllMaxPlan(p));
  EXPECT_DOUBLE_EQ(c.energy_j, 132);
  // GPipe: stage 0 F0 [0,1] F1 [1,2]; stage 1 F0 [1,2.5] F1 [2.5,4] B0 [4,7] B1 [7,10];
  // stage 0 B0 [7,9] B1 [10,12].
  EXPECT_DOUBLE_EQ(c.time_s, 12);
}

TEST(EvaluatePlan, SingleStageIsTheSumOfItsComputations) {
  Profile prof = MakeProfile({{{1, 2}, {5, 4}, {2, 3}, {9, 7}}});
  Problem p = Build(prof, Spec(ScheduleKind::k1F1B, 1, 3, 1, 100));
  PlanCost c = EvaluatePlan(p, AllMaxPlan(p));
  EXPECT_DOUBLE_EQ(c.time_s, 9);
  EXPECT_DOUBLE_EQ(c.energy_j, 3 * (5 + 9));  // never blocked
}

}  // namespace
}  // namespace perseus
