// Tests of the frontier writers (plans.json, frontier.csv, Zeus plan files)
// on frontiers SolveFrontier computes for small pipelines.
#include "perseus/frontier_io.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "perseus/optimizer.h"

namespace perseus {
namespace {

using nlohmann::json;

// A stage whose computations slow down as 1/f and use less energy at lower clocks.
StageProfile ModelStage(double fwd_s, double bwd_s, double busy_w) {
  StageProfile sp;
  for (int f : {1410, 1305, 1200, 1095, 990}) {
    const double scale = 1410.0 / f;
    const double power_w = busy_w * std::pow(f / 1410.0, 2.2);
    sp.at(Instruction::kForward).push_back({f, fwd_s * scale, fwd_s * scale * power_w});
    sp.at(Instruction::kBackward).push_back({f, bwd_s * scale, bwd_s * scale * power_w});
  }
  return sp;
}

Profile SmallProfile(int stages) {
  Profile p;
  for (int s = 0; s < stages; ++s) p.stages.push_back(ModelStage(0.010 + 0.002 * s, 0.020 + 0.003 * s, 300 + 10 * s));
  return p;
}

struct Solved {
  Problem problem;
  Frontier frontier;
};

Solved Solve(ScheduleKind kind, int stages, int microbatches, int chunks = 1, int gpus = 1) {
  ProblemSpec spec;
  spec.schedule = ScheduleSpec{kind, stages, microbatches, chunks};
  spec.blocking_power_w = 60;
  spec.gpus_per_stage = gpus;
  Result<Problem> p = BuildProblem(SmallProfile(stages), spec);
  EXPECT_TRUE(p.ok()) << p.status().ToString();
  if (!p.ok()) return {};
  FrontierOptions options;
  options.unit_time_s = 1e-3;
  options.lower_bound_samples = 2;
  Result<Frontier> f = SolveFrontier(*p, options);
  EXPECT_TRUE(f.ok()) << f.status().ToString();
  if (!f.ok()) return {};
  EXPECT_GE(f->plans.size(), 3u) << "the test problem should have a real trade-off";
  return {std::move(*p), std::move(*f)};
}

std::vector<std::string> Lines(const std::string& text) {
  std::vector<std::string> out;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) out.push_back(line);
  return out;
}

int Count(const std::string& haystack, const std::string& needle) {
  int n = 0;
  for (size_t pos = haystack.find(needle); pos != std::string::npos; pos = haystack.find(needle, pos + 1)) ++n;
  return n;
}

TEST(PlanByStage, FollowsEachGpuOrderWithTheChosenFrequencies) {
  Solved s = Solve(ScheduleKind::k1F1B, 2, 4);
  for (const FrontierPlan& plan : s.frontier.plans) {
    auto stages = PlanByStage(s.problem, plan.choice);
    ASSERT_EQ(stages.size(), 2u);
    for (int st = 0; st < 2; ++st) {
      const auto& sched = s.problem.schedule.per_stage[st];
      ASSERT_EQ(stages[st].size(), sched.size());
      for (size_t k = 0; k < sched.size(); ++k) {
        const int id = s.problem.gpu_order[st][k];
        EXPECT_EQ(stages[st][k].instruction, sched[k].instruction);
        EXPECT_EQ(stages[st][k].microbatch, sched[k].microbatch);
        EXPECT_EQ(stages[st][k].chunk, sched[k].chunk);
        EXPECT_EQ(stages[st][k].freq_mhz, s.problem.nodes[id].options[plan.choice[id]].freq_mhz);
      }
    }
  }
  // The all-max plan runs everything at 1410 MHz.
  for (const auto& stage : PlanByStage(s.problem, AllMaxPlan(s.problem))) {
    for (const PlannedComputation& c : stage) EXPECT_EQ(c.freq_mhz, 1410);
  }
}

TEST(FrontierToJson, IsValidJsonWithTheDocumentedFields) {
  Solved s = Solve(ScheduleKind::k1F1B, 2, 4, 1, 2);
  const std::string text = FrontierToJson(s.problem, s.frontier);
  json j = json::parse(text, nullptr, /*allow_exceptions=*/false);
  ASSERT_FALSE(j.is_discarded()) << text.substr(0, 400);
  EXPECT_EQ(j["schema"], "perseus.frontier/v2");
  EXPECT_EQ(j["schedule"], "1f1b");
  EXPECT_EQ(j["stages"], 2);
  EXPECT_EQ(j["microbatches"], 4);
  EXPECT_FALSE(j.contains("chunks"));
  EXPECT_EQ(j["gpus_per_stage"], 2);
  EXPECT_DOUBLE_EQ(j["blocking_power_w"].get<double>(), 60);  // per GPU, as given
  EXPECT_EQ(j["frontier_plans"], s.frontier.plans.size());
  // Numbers are written with full precision.
  EXPECT_EQ(j["all_max"]["time_s"].get<double>(), s.frontier.all_max.time_s);
  EXPECT_EQ(j["all_max"]["energy_j"].get<double>(), s.frontier.all_max.energy_j);
  ASSERT_TRUE(j["plans"].is_array());
  ASSERT_EQ(j["plans"].size(), s.frontier.plans.size());
  // Stage 0 of 1F1B with 2 stages runs F0 F1 B0 F2 B1 F3 B2 B3.
  EXPECT_EQ(j["computations"][0].dump(),
            R"([["forward",0],["forward",1],["backward",0],["forward",2],["backward",1],["forward",3],)"
            R"(["backward",2],["backward",3]])");
}

// The first plan lists every clock, each later one only the clocks that
// differ from the plan before it; expanded, they are exactly PlanByStage.
TEST(FrontierToJson, FirstPlanInFullThenOnlyChanges) {
  Solved s = Solve(ScheduleKind::k1F1B, 2, 4);
  json j = json::parse(FrontierToJson(s.problem, s.frontier));
  const json& plans = j["plans"];
  ASSERT_EQ(plans.size(), s.frontier.plans.size());
  std::vector<std::vector<int>> clocks;
  for (size_t i = 0; i < plans.size(); ++i) {
    const json& pj = plans[i];
    const FrontierPlan& plan = s.frontier.plans[i];
    EXPECT_EQ(pj["time_s"].get<double>(), plan.time_s);
    EXPECT_EQ(pj["energy_j"].get<double>(), plan.energy_j);
    if (plan.lower_bound_j > 0) {
      EXPECT_EQ(pj["lower_bound_j"].get<double>(), plan.lower_bound_j);
    }
    EXPECT_EQ(pj.contains("sm_clocks_mhz"), i == 0) << i;
    EXPECT_EQ(pj.contains("changes"), i > 0) << i;
    if (i == 0) {
      clocks = pj["sm_clocks_mhz"].get<std::vector<std::vector<int>>>();
    } else {
      for (const json& c : pj["changes"]) {
        int& clock = clocks.at(c[0].get<size_t>()).at(c[1].get<size_t>());
        EXPECT_NE(clock, c[2].get<int>()) << "plan " << i << " lists an unchanged clock";
        clock = c[2].get<int>();
      }
    }
    auto by_stage = PlanByStage(s.problem, plan.choice);
    ASSERT_EQ(clocks.size(), 2u);
    for (int st = 0; st < 2; ++st) {
      ASSERT_EQ(clocks[st].size(), by_stage[st].size());
      for (size_t k = 0; k < by_stage[st].size(); ++k) EXPECT_EQ(clocks[st][k], by_stage[st][k].freq_mhz) << i;
    }
  }
  EXPECT_LE(plans[0]["time_s"].get<double>(), j["all_max"]["time_s"].get<double>() * (1 + 1e-12));
}

TEST(FrontierToJson, InterleavedComputationsCarryChunks) {
  Solved s = Solve(ScheduleKind::kInterleaved1F1B, 2, 4, 2);
  json j = json::parse(FrontierToJson(s.problem, s.frontier));
  EXPECT_EQ(j["schedule"], "interleaved-1f1b");
  EXPECT_EQ(j["chunks"], 2);
  auto by_stage = PlanByStage(s.problem, s.frontier.plans[0].choice);
  for (int st = 0; st < 2; ++st) {
    const json& comps = j["computations"][st];
    ASSERT_EQ(comps.size(), 2u * 4 * 2);
    for (size_t k = 0; k < comps.size(); ++k) {
      ASSERT_EQ(comps[k].size(), 3u);
      EXPECT_EQ(comps[k][1], by_stage[st][k].microbatch);
      EXPECT_EQ(comps[k][2], by_stage[st][k].chunk);
    }
  }
}

TEST(FrontierToJson, HandMadeFrontierWithoutBoundsOrPlans) {
  Solved s = Solve(ScheduleKind::kGPipe, 2, 2);
  Frontier f;
  f.all_max = FrontierPlan{AllMaxPlan(s.problem), 0.25, 100.5, 0};
  json j = json::parse(FrontierToJson(s.problem, f), nullptr, false);
  ASSERT_FALSE(j.is_discarded());
  EXPECT_EQ(j["schedule"], "gpipe");
  EXPECT_TRUE(j["plans"].empty());
  EXPECT_FALSE(j["all_max"].contains("lower_bound_j"));  // 0 means not computed
  EXPECT_EQ(j["all_max"]["time_s"], 0.25);
  f.plans.push_back(f.all_max);
  j = json::parse(FrontierToJson(s.problem, f));
  ASSERT_EQ(j["plans"].size(), 1u);
  EXPECT_FALSE(j["plans"][0].contains("lower_bound_j"));
}

void ExpectSamePlans(const PlansFile& file, const Solved& s) {
  ASSERT_EQ(file.plans.size(), s.frontier.plans.size());
  for (size_t i = 0; i < file.plans.size(); ++i) {
    EXPECT_EQ(file.plans[i].time_s, s.frontier.plans[i].time_s);
    EXPECT_EQ(file.plans[i].energy_j, s.frontier.plans[i].energy_j);
    EXPECT_EQ(file.plans[i].lower_bound_j, s.frontier.plans[i].lower_bound_j);
    const StagePlan want = PlanByStage(s.problem, s.frontier.plans[i].choice);
    ASSERT_EQ(file.plans[i].stages.size(), want.size());
    for (size_t st = 0; st < want.size(); ++st) {
      ASSERT_EQ(file.plans[i].stages[st].size(), want[st].size());
      for (size_t k = 0; k < want[st].size(); ++k) {
        const PlannedComputation &got = file.plans[i].stages[st][k], &w = want[st][k];
        EXPECT_TRUE(got.instruction == w.instruction && got.microbatch == w.microbatch && got.chunk == w.chunk &&
                    got.freq_mhz == w.freq_mhz)
            << "plan " << i << " stage " << st << " position " << k;
      }
    }
  }
}

TEST(ParsePlansJson, ReadsBackWhatIsWritten) {
  for (int chunks : {1, 2}) {
    Solved s = Solve(chunks > 1 ? ScheduleKind::kInterleaved1F1B : ScheduleKind::k1F1B, 2, 4, chunks, 2);
    Result<PlansFile> f = ParsePlansJson(FrontierToJson(s.problem, s.frontier), "plans.json");
    ASSERT_TRUE(f.ok()) << f.status().ToString();
    EXPECT_EQ(f->schema, "perseus.frontier/v2");
    EXPECT_EQ(f->stages, 2);
    EXPECT_EQ(f->microbatches, 4);
    EXPECT_EQ(f->chunks, chunks);
    EXPECT_EQ(f->gpus_per_stage, 2);
    EXPECT_EQ(f->blocking_power_w, 60);
    EXPECT_EQ(f->frontier_plans, s.frontier.plans.size());
    EXPECT_EQ(f->all_max.energy_j, s.frontier.all_max.energy_j);
    ExpectSamePlans(*f, s);
  }
}

// A v1 file as perseus 0.x wrote it: every plan lists every computation.
std::string V1Json(const Solved& s) {
  json plans = json::array();
  for (const FrontierPlan& p : s.frontier.plans) {
    json stages = json::array();
    for (const auto& stage : PlanByStage(s.problem, p.choice)) {
      json list = json::array();
      for (const PlannedComputation& c : stage) {
        list.push_back(json::array({InstructionName(c.instruction), c.microbatch, c.freq_mhz}));
        if (s.problem.schedule.spec.chunks > 1) list.back().push_back(c.chunk);
      }
      stages.push_back(list);
    }
    plans.push_back({{"time_s", p.time_s}, {"energy_j", p.energy_j}, {"lower_bound_j", p.lower_bound_j}, {"stages", stages}});
  }
  json j = {{"schema", "perseus.frontier/v1"}, {"schedule", ScheduleName(s.problem.schedule.spec.kind)},
            {"stages", s.problem.num_stages()}, {"microbatches", s.problem.schedule.spec.microbatches},
            {"gpus_per_stage", 1}, {"blocking_power_w", 60},
            {"all_max", {{"time_s", s.frontier.all_max.time_s}, {"energy_j", s.frontier.all_max.energy_j}}},
            {"plans", plans}};
  if (s.problem.schedule.spec.chunks > 1) j["chunks"] = s.problem.schedule.spec.chunks;
  return j.dump();
}

TEST(ParsePlansJson, ReadsVersion1) {
  for (int chunks : {1, 2}) {
    Solved s = Solve(chunks > 1 ? ScheduleKind::kInterleaved1F1B : ScheduleKind::k1F1B, 2, 4, chunks);
    Result<PlansFile> f = ParsePlansJson(V1Json(s), "old.json");
    ASSERT_TRUE(f.ok()) << f.status().ToString();
    EXPECT_EQ(f->schema, "perseus.frontier/v1");
    EXPECT_EQ(f->chunks, chunks);
    EXPECT_EQ(f->frontier_plans, s.frontier.plans.size());
    ExpectSamePlans(*f, s);
  }
}

TEST(ParsePlansJson, ErrorsNameTheSourceAndTheField) {
  Solved s = Solve(ScheduleKind::k1F1B, 2, 4);
  const json good = json::parse(FrontierToJson(s.problem, s.frontier));
  auto error = [](const json& j) { return ParsePlansJson(j.dump(), "p.json").status().message(); };
  EXPECT_EQ(ParsePlansJson("{\"schema\": ", "p.json").status().message().rfind("p.json: not JSON: ", 0), 0u);
  json j = good;
  j["schema"] = "perseus.frontier/v9";
  EXPECT_EQ(error(j), "p.json: field 'schema': expected 'perseus.frontier/v1' or 'perseus.frontier/v2', got 'perseus.frontier/v9'");
  j = good;
  j.erase("microbatches");
  EXPECT_EQ(error(j), "p.json: field 'microbatches': missing");
  j = good;
  j["computations"][1][3][0] = "sideways";
  EXPECT_EQ(error(j), "p.json: field 'computations[1][3][0]': expected 'forward', 'backward', 'backward_input' or 'backward_weight', got 'sideways'");
  j = good;
  j["plans"][0]["sm_clocks_mhz"][1].erase(0);
  EXPECT_EQ(error(j), "p.json: field 'plans[0].sm_clocks_mhz[1]': expected 8 entries, got 7");
  j = good;
  j["plans"][0]["sm_clocks_mhz"][0][2] = 0;
  EXPECT_EQ(error(j), "p.json: field 'plans[0].sm_clocks_mhz[0][2]': expected an integer in [1, 1000000000], got 0");
  j = good;
  ASSERT_GE(j["plans"].size(), 2u);
  j["plans"][1]["changes"] = json::parse("[[1, 8, 1200]]");
  EXPECT_EQ(error(j), "p.json: field 'plans[1].changes[0]': position 8 out of range (stage 1 has 8 computations)");
  j["plans"][1]["changes"] = json::parse("[[2, 0, 1200]]");
  EXPECT_EQ(error(j), "p.json: field 'plans[1].changes[0]': stage 2 out of range (2 stages)");
  j["plans"][1].erase("changes");
  EXPECT_EQ(error(j), "p.json: field 'plans[1].changes': missing");
  j = good;
  j["plans"][1]["time_s"] = "fast";
  EXPECT_EQ(error(j), "p.json: field 'plans[1].time_s': expected a number, got \"fast\"");
}

TEST(ReadPlansJson, MissingFileNamesThePath) {
  EXPECT_EQ(ReadPlansJson("/nonexistent/plans.json").status().message(),
            "/nonexistent/plans.json: No such file or directory");
}

// A frontier of `n` plans at times 0, 1, ..., n-1 s whose no-slowdown plan is `no_slowdown`.
Frontier EvenFrontier(int n, int no_slowdown) {
  Frontier f;
  for (int i = 0; i < n; ++i) f.plans.push_back(FrontierPlan{{}, double(i), double(1000 - i), 0});
  f.all_max = FrontierPlan{{}, no_slowdown + 0.5, 2000, 0};
  return f;
}

TEST(KeyPlanIndices, FastestNoSlowdownAndMinimumEnergy) {
  EXPECT_EQ(KeyPlanIndices(EvenFrontier(101, 10)), (std::vector<size_t>{0, 10, 100}));
  EXPECT_EQ(KeyPlanIndices(EvenFrontier(101, 0)), (std::vector<size_t>{0, 100}));
  EXPECT_EQ(KeyPlanIndices(EvenFrontier(1, 0)), (std::vector<size_t>{0}));
  EXPECT_TRUE(KeyPlanIndices(Frontier{}).empty());
}

TEST(ThinPlanIndices, KeepsTheKeyPlansAndSpreadsTheRestEvenlyInTime) {
  const Frontier f = EvenFrontier(101, 10);
  const std::vector<size_t> key = KeyPlanIndices(f);
  EXPECT_EQ(ThinPlanIndices(f, 0, key).size(), 101u);
  EXPECT_EQ(ThinPlanIndices(f, 101, key).size(), 101u);
  EXPECT_EQ(ThinPlanIndices(f, 3, key), key);
  EXPECT_EQ(ThinPlanIndices(f, 5, key), (std::vector<size_t>{0, 10, 33, 67, 100}));
  // A target whose nearest plan is already kept takes the next nearest.
  EXPECT_EQ(ThinPlanIndices(f, 4, {0, 50, 100}), (std::vector<size_t>{0, 50, 51, 100}));
  const std::vector<size_t> many = ThinPlanIndices(f, 20, key);
  ASSERT_EQ(many.size(), 20u);
  for (size_t i = 1; i < many.size(); ++i) {
    EXPECT_LE(many[i] - many[i - 1], 7u) << "evenly spread";
  }
}

TEST(SubFrontier, KeepsTheChosenPlansInOrder) {
  const Frontier f = EvenFrontier(10, 3);
  Frontier sub = SubFrontier(f, {0, 3, 9});
  ASSERT_EQ(sub.plans.size(), 3u);
  EXPECT_EQ(sub.plans[1].time_s, 3);
  EXPECT_EQ(sub.all_max.time_s, f.all_max.time_s);
  EXPECT_EQ(sub.NoSlowdownPlan(), &sub.plans[1]);
}

TEST(FrontierToCsv, HeaderAndOneRowPerPlan) {
  Solved s = Solve(ScheduleKind::k1F1B, 2, 4);
  const std::string csv = FrontierToCsv(s.frontier);
  std::vector<std::string> lines = Lines(csv);
  ASSERT_EQ(lines.size(), s.frontier.plans.size() + 1);
  EXPECT_EQ(lines[0], "time_s,energy_j,lower_bound_j,savings_vs_all_max");
  ASSERT_EQ(csv.back(), '\n');
  for (size_t i = 0; i < s.frontier.plans.size(); ++i) {
    const FrontierPlan& p = s.frontier.plans[i];
    double t = 0, e = 0, lb = 0, savings = 0;
    ASSERT_EQ(std::sscanf(lines[i + 1].c_str(), "%lf,%lf,%lf,%lf", &t, &e, &lb, &savings), 4) << lines[i + 1];
    EXPECT_EQ(t, p.time_s);
    EXPECT_EQ(e, p.energy_j);
    EXPECT_EQ(lb, p.lower_bound_j);
    EXPECT_NEAR(savings, 1 - p.energy_j / s.frontier.all_max.energy_j, 5e-7);
    // Six decimals.
    const std::string last = lines[i + 1].substr(lines[i + 1].rfind(',') + 1);
    ASSERT_NE(last.find('.'), std::string::npos);
    EXPECT_EQ(last.size() - last.find('.') - 1, 6u) << last;
  }
}

TEST(FrontierToCsv, EmptyFrontierIsJustTheHeader) {
  Frontier f;
  f.all_max.energy_j = 1;
  EXPECT_EQ(FrontierToCsv(f), "time_s,energy_j,lower_bound_j,savings_vs_all_max\n");
}

TEST(PlanToZeusPython, OneListPerStageThenComments) {
  Solved s = Solve(ScheduleKind::k1F1B, 3, 4);
  const int index = static_cast<int>(s.frontier.plans.size()) - 1;
  const FrontierPlan& plan = s.frontier.plans[index];
  const std::string py = PlanToZeusPython(s.problem, plan, index);
  EXPECT_EQ(py.rfind("[\n[('forward', ", 0), 0u) << py.substr(0, 80);
  std::vector<std::string> lines = Lines(py);
  ASSERT_EQ(lines.size(), 1u + 3 + 1 + 2);
  EXPECT_EQ(lines[0], "[");
  auto by_stage = PlanByStage(s.problem, plan.choice);
  for (int st = 0; st < 3; ++st) {
    std::string want = "[";
    for (size_t k = 0; k < by_stage[st].size(); ++k) {
      if (k) want += ", ";
      want += "('" + std::string(InstructionName(by_stage[st][k].instruction)) + "', " +
              std::to_string(by_stage[st][k].freq_mhz) + ")";
    }
    want += "],";
    EXPECT_EQ(lines[1 + st], want);
    EXPECT_EQ(Count(lines[1 + st], "('"), 2 * 4);
  }
  EXPECT_EQ(lines[4], "]");
  char buf[128];
  std::snprintf(buf, sizeof buf, "# Plan %d iteration time: %.17g s", index, plan.time_s);
  EXPECT_EQ(lines[5], buf);
  std::snprintf(buf, sizeof buf, "# Plan %d energy: %.17g J", index, plan.energy_j);
  EXPECT_EQ(lines[6], buf);
}

TEST(PlanToZeusPython, AllMaxPlanOnTwoStages) {
  Solved s = Solve(ScheduleKind::k1F1B, 2, 2);
  FrontierPlan plan{AllMaxPlan(s.problem), 0.5, 250, 0};
  EXPECT_EQ(PlanToZeusPython(s.problem, plan, 0),
            "[\n"
            "[('forward', 1410), ('forward', 1410), ('backward', 1410), ('backward', 1410)],\n"
            "[('forward', 1410), ('backward', 1410), ('forward', 1410), ('backward', 1410)],\n"
            "]\n"
            "# Plan 0 iteration time: 0.5 s\n"
            "# Plan 0 energy: 250 J\n");
}

}  // namespace
}  // namespace perseus
