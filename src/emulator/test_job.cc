// Synthetic test jobs.
#include "emulator/test_job.h"

#include <gtest/gtest.h>

#include <cassert>
#include <numeric>

#include "perseus/gpu_model.h"

namespace perseus::emulator {

Profile SmallProfile(int stages) {
  Profile p;
  const int clocks[] = {1410, 1260, 1110, 960};
  for (int s = 0; s < stages; ++s) {
    StageProfile st;
    double weight = s + 1 == stages ? 1.3 : 1 + 0.1 * s;
    for (Instruction ins : {Instruction::kForward, Instruction::kBackward}) {
      double base_s = 0.05 * weight * (ins == Instruction::kBackward ? 2 : 1);
      for (int f : clocks) {
        double x = f / 1410.0;
        double time_s = base_s * (0.75 / x + 0.25);
        double power_w = 90 + 310 * x * x * x;
        st.at(ins).push_back({f, time_s, power_w * time_s});
      }
    }
    p.stages.push_back(st);
  }
  return p;
}

Problem SmallProblem(int stages, int microbatches, int gpus_per_stage) {
  ProblemSpec spec;
  spec.schedule = ScheduleSpec{ScheduleKind::k1F1B, stages, microbatches, 1};
  spec.blocking_power_w = 80;
  spec.gpus_per_stage = gpus_per_stage;
  Result<Problem> p = BuildProblem(SmallProfile(stages), spec);
  assert(p.ok());
  return std::move(*p);
}

EmulationSpec SmallSpec(int stages, int microbatches, int gpus_per_stage, int pipelines, int iterations) {
  EmulationSpec spec;
  spec.job_name = "small";
  spec.profile = SmallProfile(stages);
  spec.problem.schedule = ScheduleSpec{ScheduleKind::k1F1B, stages, microbatches, 1};
  spec.problem.blocking_power_w = 80;
  spec.problem.gpus_per_stage = gpus_per_stage;
  spec.pipelines = pipelines;
  spec.iterations = iterations;
  spec.sweep_factors = {1.0, 1.2};
  return spec;
}

EmulationSpec ExampleSpec(const std::string& example, int pipelines, int iterations) {
  EmulationSpec spec;
  Result<Example> ex = FindExample(example);
  EXPECT_TRUE(ex.ok()) << ex.status().ToString();
  if (ex.ok()) {
    spec.job_name = ex->name;
    spec.profile = ex->profile;
    spec.problem = ex->spec;
  }
  spec.pipelines = pipelines;
  spec.iterations = iterations;
  spec.sweep_factors = {1.0};
  return spec;
}

const PolicyResult& FindPolicy(const EmulationResult& result, const std::string& name) {
  for (const PolicyResult& p : result.policies) {
    if (p.name == name) return p;
  }
  ADD_FAILURE() << "no policy " << name;
  return result.policies.front();
}

double Sum(const std::vector<double>& values) { return std::accumulate(values.begin(), values.end(), 0.0); }

}  // namespace perseus::emulator
