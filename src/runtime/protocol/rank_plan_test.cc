#include "runtime/protocol/rank_plan.h"

#include <gtest/gtest.h>

namespace perseus::protocol {
namespace {

TEST(RankPlanTest, Unchanged) {
  Result<std::optional<RankPlan>> p = ParseRankPlan(R"({"changed":false,"version":7})");
  ASSERT_TRUE(p.ok());
  EXPECT_FALSE(p->has_value());
}

TEST(RankPlanTest, FrontierPlan) {
  Result<std::optional<RankPlan>> p = ParseRankPlan(
      R"({"changed":true,"version":9,"phase":"running","kind":"frontier","plan_index":2,"predicted_time_s":1.5,
          "instructions":[{"instruction":"forward","microbatch":0,"chunk":0,"sm_clock_mhz":1200},
                          {"instruction":"backward","microbatch":0,"chunk":0,"sm_clock_mhz":1410}]})");
  ASSERT_TRUE(p.ok()) << p.status().ToString();
  const RankPlan& plan = **p;
  EXPECT_EQ(plan.version, 9);
  EXPECT_EQ(plan.kind, PlanKind::kFrontier);
  EXPECT_EQ(plan.plan_index, 2);
  ASSERT_EQ(plan.steps.size(), 2u);
  EXPECT_EQ(plan.steps[1].instruction, Instruction::kBackward);
  EXPECT_EQ(plan.steps[0].sm_clock_mhz, 1200);
}

TEST(RankPlanTest, ProfilingWindowAndWarnings) {
  Result<std::optional<RankPlan>> p = ParseRankPlan(
      R"({"changed":true,"version":3,"phase":"profiling","kind":"profiling",
          "window":{"id":4,"warmup_iterations":1,"iterations":2,"forward_clock_mhz":1200,"backward_clock_mhz":1410},
          "warnings":[{"code":"clock_has_no_effect","stage":1,"rank":-1,"message":"stage 1's time does not depend"}],
          "instructions":[{"instruction":"forward","microbatch":0,"sm_clock_mhz":1200},
                          {"instruction":"backward","microbatch":0,"sm_clock_mhz":1410}]})");
  ASSERT_TRUE(p.ok()) << p.status().ToString();
  const RankPlan& plan = **p;
  EXPECT_EQ(plan.window.id, 4);
  EXPECT_EQ(plan.window.forward_clock_mhz, 1200);
  EXPECT_EQ(plan.window.backward_clock_mhz, 1410);
  EXPECT_EQ(plan.UniformClockMhz(), -1);
  ASSERT_EQ(plan.warnings.size(), 1u);
  EXPECT_EQ(plan.warnings[0].Key(), "clock_has_no_effect/1/-1");
  EXPECT_EQ(ParseRankPlan(R"({"changed":true,"version":3,"kind":"profiling","window":{"id":4,"warmup_iterations":1,
      "iterations":0,"forward_clock_mhz":1,"backward_clock_mhz":1},"instructions":[]})").status().message(),
            "plan: field 'window.iterations': expected an integer in [1, 1000000000], got 0");
}

TEST(RankPlanTest, Errors) {
  EXPECT_EQ(ParseRankPlan("[]").status().message(), "plan: not a JSON object");
  EXPECT_EQ(ParseRankPlan(R"({"changed":true,"version":1,"kind":"turbo","instructions":[]})").status().message(),
            "plan: unknown kind 'turbo'");
  EXPECT_EQ(ParseRankPlan(R"({"changed":true,"version":1,"kind":"max","instructions":[
              {"instruction":"sideways","microbatch":0,"sm_clock_mhz":1}]})").status().message(),
            "plan: instructions[0]: expected 'forward', 'backward', 'backward_input' or 'backward_weight', got "
            "'sideways'");
  // Every field's error names it.
  EXPECT_EQ(ParseRankPlan(R"({"changed":true,"version":1,"kind":"max","instructions":[
              {"instruction":"forward","microbatch":-2,"sm_clock_mhz":1}]})").status().message(),
            "plan: field 'instructions[0].microbatch': expected an integer in [0, 1000000000], got -2");
  EXPECT_EQ(ParseRankPlan(R"({"changed":true,"kind":"max","instructions":[]})").status().message(),
            "plan: field 'version': missing");
  EXPECT_EQ(ParseRankPlan(R"({"changed":"yes"})").status().message(),
            "plan: field 'changed': expected true or false, got \"yes\"");
  EXPECT_EQ(ParseRankPlan(R"({"changed":true,"version":1,"kind":"max","instructions":{}})").status().message(),
            "plan: field 'instructions': expected an array, got {}");
  EXPECT_EQ(ParseRankPlan(R"({"changed":true,"version":1,"kind":"max","instructions":[],"warnings":[{"code":3}]})")
                .status().message(),
            "plan: field 'warnings[0].code': expected a string, got 3");
  EXPECT_EQ(ParseRankPlan(R"({"changed":true,"version":1,"kind":"pause","instructions":[]})").status().message(),
            "plan: field 'pause': missing");
  EXPECT_EQ(ParseRankPlan(R"({"changed":true,"version":1,"kind":"pause","instructions":[],
              "pause":{"hold_clock_mhz":210,"release":false,"max_s":-1}})").status().message(),
            "plan: field 'pause.max_s': expected a number in [0, 1000000000], got -1");
}

// The server writes with the same module the client parses with: every kind
// of plan survives the round trip field for field.
TEST(RankPlanTest, WhatTheServerWritesTheClientReadsBack) {
  RankPlan frontier;
  frontier.version = 12;
  frontier.kind = PlanKind::kFrontier;
  frontier.job = "gpt3";
  frontier.rank = 5;
  frontier.phase = "running";
  frontier.plan_index = 7;
  frontier.predicted_time_s = 2.25;
  frontier.warnings = {{"schedule_mismatch", "rank 5 ran backward_weight", 1, 5}, {"slow", "x", -1, -1}};
  frontier.steps = {{Instruction::kForward, 0, 1, 1200}, {Instruction::kBackwardInput, 0, 1, 1410},
                    {Instruction::kBackwardWeight, 0, 1, 900}};
  RankPlan profiling;
  profiling.version = 3;
  profiling.kind = PlanKind::kProfiling;
  profiling.phase = "profiling";
  profiling.window = {4, 2, 5, 1200, 1410, "repeat"};
  profiling.steps = {{Instruction::kForward, 0, 0, 1200}, {Instruction::kBackward, 0, 0, 1410}};
  RankPlan max;
  max.version = 1;
  max.phase = "registering";
  max.sm_clock_mhz = 1980;
  max.steps = {{Instruction::kForward, 0, 0, 1980}};
  RankPlan reset;
  reset.version = 20;
  reset.kind = PlanKind::kReset;
  reset.phase = "done";
  RankPlan pause = frontier;
  pause.kind = PlanKind::kPause;
  pause.version = 13;
  pause.pause = {210, false, 1234, 3660.5, "2022-01-01T00:00:00Z: ... -> paused (GPUs held idle, 669 W)"};
  RankPlan release = pause;
  release.pause.release = true;
  for (const RankPlan& plan : {frontier, profiling, max, reset, pause, release}) {
    Result<std::optional<RankPlan>> back = ParseRankPlan(RankPlanJson(plan));
    ASSERT_TRUE(back.ok()) << back.status().ToString();
    ASSERT_TRUE(back->has_value());
    EXPECT_EQ(**back, plan) << RankPlanJson(plan);
  }
  EXPECT_EQ(Json::parse(RankPlanJson(max))["sm_clock_mhz"], 1980);  // a "max" plan names its clock
  Result<std::optional<RankPlan>> unchanged = ParseRankPlan(UnchangedPlanJson(12));
  ASSERT_TRUE(unchanged.ok());
  EXPECT_FALSE(unchanged->has_value());
}

TEST(RankPlanTest, WarningsKeepTheirPlaceInErrors) {
  Result<std::vector<JobWarning>> w = ParseJobWarnings(Json::parse(R"([{"code":"a","message":"m","stage":"1"}])"),
                                                       "state.warnings");
  EXPECT_EQ(w.status().message(), "field 'state.warnings[0].stage': expected an integer, got \"1\"");
  EXPECT_EQ(ParseJobWarnings(Json::object(), "warnings").status().message(),
            "field 'warnings': expected an array, got {}");
}

}  // namespace
}  // namespace perseus::protocol
