#include "runtime/client/rank_plan.h"

#include <gtest/gtest.h>

namespace perseus::client {
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
  EXPECT_EQ(plan.warnings[0].first, "clock_has_no_effect/1/-1");
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
}

}  // namespace
}  // namespace perseus::client
