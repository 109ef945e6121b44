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
  EXPECT_EQ(j["schema"], "perseus.frontier/v1");
  EXPECT_EQ(j["schedule"], "1f1b");
  EXPECT_EQ(j["stages"], 2);
  EXPECT_EQ(j["microbatches"], 4);
  EXPECT_FALSE(j.contains("chunks"));
  EXPECT_EQ(j["gpus_per_stage"], 2);
  EXPECT_DOUBLE_EQ(j["blocking_power_w"].get<double>(), 60);  // per GPU, as given
  // Numbers are written with full precision.
  EXPECT_EQ(j["all_max"]["time_s"].get<double>(), s.frontier.all_max.time_s);
  EXPECT_EQ(j["all_max"]["energy_j"].get<double>(), s.frontier.all_max.energy_j);
  ASSERT_TRUE(j["plans"].is_array());
  ASSERT_EQ(j["plans"].size(), s.frontier.plans.size());
}

TEST(FrontierToJson, PlansAreTimeAscendingAndListEveryComputation) {
  Solved s = Solve(ScheduleKind::k1F1B, 2, 4);
  json j = json::parse(FrontierToJson(s.problem, s.frontier));
  const json& plans = j["plans"];
  ASSERT_EQ(plans.size(), s.frontier.plans.size());
  for (size_t i = 0; i < plans.size(); ++i) {
    const json& pj = plans[i];
    const FrontierPlan& plan = s.frontier.plans[i];
    EXPECT_EQ(pj["time_s"].get<double>(), plan.time_s);
    EXPECT_EQ(pj["energy_j"].get<double>(), plan.energy_j);
    if (plan.lower_bound_j > 0) {
      EXPECT_EQ(pj["lower_bound_j"].get<double>(), plan.lower_bound_j);
      EXPECT_LE(plan.lower_bound_j, plan.energy_j * (1 + 1e-9));
    }
    if (i > 0) {
      EXPECT_LT(plans[i - 1]["time_s"].get<double>(), pj["time_s"].get<double>());
      EXPECT_GT(plans[i - 1]["energy_j"].get<double>(), pj["energy_j"].get<double>());
    }
    auto by_stage = PlanByStage(s.problem, plan.choice);
    const json& stages = pj["stages"];
    ASSERT_EQ(stages.size(), 2u);
    for (int st = 0; st < 2; ++st) {
      ASSERT_EQ(stages[st].size(), s.problem.gpu_order[st].size());
      ASSERT_EQ(stages[st].size(), 2u * 4);
      for (size_t k = 0; k < stages[st].size(); ++k) {
        const json& e = stages[st][k];
        ASSERT_EQ(e.size(), 3u);  // no chunk field without chunks
        EXPECT_EQ(e[0], InstructionName(by_stage[st][k].instruction));
        EXPECT_EQ(e[1], by_stage[st][k].microbatch);
        EXPECT_EQ(e[2], by_stage[st][k].freq_mhz);
      }
    }
  }
  // The fastest plan is no slower than running everything at max.
  EXPECT_LE(plans[0]["time_s"].get<double>(), j["all_max"]["time_s"].get<double>() * (1 + 1e-12));
}

TEST(FrontierToJson, InterleavedPlansCarryChunks) {
  Solved s = Solve(ScheduleKind::kInterleaved1F1B, 2, 4, 2);
  json j = json::parse(FrontierToJson(s.problem, s.frontier));
  EXPECT_EQ(j["schedule"], "interleaved-1f1b");
  EXPECT_EQ(j["chunks"], 2);
  const json& plan = j["plans"][0];
  auto by_stage = PlanByStage(s.problem, s.frontier.plans[0].choice);
  for (int st = 0; st < 2; ++st) {
    ASSERT_EQ(plan["stages"][st].size(), 2u * 4 * 2);
    for (size_t k = 0; k < plan["stages"][st].size(); ++k) {
      const json& e = plan["stages"][st][k];
      ASSERT_EQ(e.size(), 4u);
      EXPECT_EQ(e[3], by_stage[st][k].chunk);
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
