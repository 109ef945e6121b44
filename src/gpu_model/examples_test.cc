// Tests of the bundled examples: each builds a valid Problem, is fastest at
// the maximum clock, is deterministic and has the job shape it describes.
#include <gtest/gtest.h>

#include "perseus/gpu_model.h"

namespace perseus {
namespace {

Example Load(const std::string& name) {
  Result<Example> ex = FindExample(name);
  EXPECT_TRUE(ex.ok()) << ex.status().ToString();
  return ex.ok() ? *ex : Example{};
}

double Time(const Example& ex, int stage, Instruction ins) { return ex.profile.MaxFreqPoint(stage, ins).time_s; }

TEST(Examples, NamesAreTheDocumentedOnes) {
  EXPECT_EQ(ExampleNames(), (std::vector<std::string>{"gpt3-xl-a100", "gpt3-xl-h100", "gpt3-175b-a100", "bloom-a100"}));
}

TEST(Examples, UnknownNameListsKnownExamples) {
  Result<Example> ex = FindExample("gpt5");
  ASSERT_FALSE(ex.ok());
  EXPECT_EQ(ex.status().code(), Status::Code::kNotFound);
  EXPECT_EQ(ex.status().message(),
            "unknown example 'gpt5'; known examples: gpt3-xl-a100, gpt3-xl-h100, gpt3-175b-a100, bloom-a100");
}

TEST(Examples, EveryExampleBuildsAValidProblem) {
  for (const std::string& name : ExampleNames()) {
    Example ex = Load(name);
    EXPECT_EQ(ex.name, name);
    EXPECT_FALSE(ex.description.empty());
    EXPECT_EQ(ex.profile.num_stages(), ex.spec.schedule.stages) << name;
    Result<Problem> problem = BuildProblem(ex.profile, ex.spec);
    ASSERT_TRUE(problem.ok()) << name << ": " << problem.status().ToString();
    EXPECT_EQ(problem->num_nodes(), 2 * ex.spec.schedule.stages * ex.spec.schedule.microbatches) << name;
    PlanCost cost = EvaluatePlan(*problem, AllMaxPlan(*problem));
    EXPECT_GT(cost.time_s, 0) << name;
    EXPECT_GT(cost.energy_j, 0) << name;
  }
}

TEST(Examples, MaxClockIsTheFastestPointOfEveryStage) {
  for (const std::string& name : ExampleNames()) {
    Example ex = Load(name);
    Result<GpuSpec> gpu = FindGpu(name.substr(name.rfind('-') + 1));
    ASSERT_TRUE(gpu.ok());
    for (int s = 0; s < ex.profile.num_stages(); ++s) {
      for (Instruction ins : {Instruction::kForward, Instruction::kBackward}) {
        const std::vector<FreqPoint>& pts = ex.profile.stages[s].at(ins);
        EXPECT_EQ(pts.front().freq_mhz, gpu->max_sm_clock_mhz) << name;
        for (size_t i = 1; i < pts.size(); ++i) {
          EXPECT_GT(pts[i].time_s, pts.front().time_s) << name << " stage " << s << " at " << pts[i].freq_mhz;
        }
      }
    }
  }
}

TEST(Examples, AreDeterministic) {
  for (const std::string& name : ExampleNames()) {
    Example a = Load(name), b = Load(name);
    EXPECT_EQ(ProfileToCsv(a.profile), ProfileToCsv(b.profile)) << name;
    EXPECT_EQ(a.description, b.description);
  }
}

TEST(Examples, Gpt3XlA100HasHeavierEndStages) {
  Example ex = Load("gpt3-xl-a100");
  EXPECT_EQ(ex.spec.schedule.kind, ScheduleKind::k1F1B);
  EXPECT_EQ(ex.spec.schedule.stages, 4);
  EXPECT_EQ(ex.spec.schedule.microbatches, 16);
  EXPECT_EQ(ex.spec.gpus_per_stage, 1);
  EXPECT_DOUBLE_EQ(ex.spec.blocking_power_w, 83.64);
  const double mid_s = Time(ex, 1, Instruction::kForward);
  EXPECT_GT(mid_s, 0.010);  // tens of milliseconds per microbatch
  EXPECT_LT(mid_s, 0.100);
  EXPECT_DOUBLE_EQ(Time(ex, 2, Instruction::kForward), mid_s);
  EXPECT_GT(Time(ex, 0, Instruction::kForward), mid_s);
  EXPECT_GT(Time(ex, 3, Instruction::kForward), Time(ex, 0, Instruction::kForward));
  for (int s = 0; s < 4; ++s) {
    double ratio = Time(ex, s, Instruction::kBackward) / Time(ex, s, Instruction::kForward);
    EXPECT_NEAR(ratio, 2.0, 0.1) << "stage " << s;
  }
  EXPECT_EQ(ex.profile.stages[0].at(Instruction::kForward).back().freq_mhz, 855);
}

TEST(Examples, Gpt3XlH100IsFasterThanA100) {
  Example h100 = Load("gpt3-xl-h100"), a100 = Load("gpt3-xl-a100");
  EXPECT_DOUBLE_EQ(h100.spec.blocking_power_w, 110);
  EXPECT_EQ(h100.profile.stages[0].at(Instruction::kForward).front().freq_mhz, 1980);
  EXPECT_EQ(h100.profile.stages[0].at(Instruction::kForward).back().freq_mhz, 1200);
  EXPECT_LT(Time(h100, 1, Instruction::kForward), Time(a100, 1, Instruction::kForward));
}

TEST(Examples, Gpt3175bA100HasAHeavierLastStage) {
  Example ex = Load("gpt3-175b-a100");
  EXPECT_EQ(ex.spec.schedule.stages, 8);
  EXPECT_EQ(ex.spec.schedule.microbatches, 12);
  EXPECT_EQ(ex.spec.gpus_per_stage, 8);
  EXPECT_DOUBLE_EQ(ex.spec.blocking_power_w, 83.64);
  for (int s = 1; s < 7; ++s) EXPECT_DOUBLE_EQ(Time(ex, s, Instruction::kForward), Time(ex, 1, Instruction::kForward));
  EXPECT_GT(Time(ex, 7, Instruction::kForward), Time(ex, 0, Instruction::kForward));
  EXPECT_GT(Time(ex, 7, Instruction::kBackward), Time(ex, 0, Instruction::kBackward));
}

TEST(Examples, BloomA100HasALighterLastStage) {
  Example ex = Load("bloom-a100");
  EXPECT_EQ(ex.spec.schedule.stages, 8);
  EXPECT_EQ(ex.spec.schedule.microbatches, 12);
  EXPECT_EQ(ex.spec.gpus_per_stage, 8);
  EXPECT_LT(Time(ex, 7, Instruction::kForward), Time(ex, 1, Instruction::kForward));
}

}  // namespace
}  // namespace perseus
