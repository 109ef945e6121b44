// Perseus, intrinsic and extrinsic bloat: every pipeline starts from the
// fastest frontier plan; when some pipeline straggles and the job's iteration
// takes T_s, every pipeline that would finish earlier switches to the
// least-energy frontier plan with time min(T_s, T*) (divided by its own
// slowdown, if it has one), T* being the minimum-energy time. When the
// straggler recovers the conditions change and the fastest plan returns.
// A pipeline with a throttled GPU is re-planned: of the frontier plans and
// all-max, the least-energy one no slower under the cap than all-max is.
#include <algorithm>

#include "emulator/job_evaluation.h"
#include "emulator/pipeline_run.h"
#include "emulator/policy.h"

namespace perseus::emulator {
namespace {

class PerseusPolicy : public Policy {
 public:
  PerseusPolicy(const Problem& problem, const Frontier& frontier)
      : problem_(problem), frontier_(frontier), fastest_(*frontier.NoSlowdownPlan()) {}
  std::string name() const override { return "perseus"; }
  std::string description() const override {
    return "Perseus: fastest frontier plan; on-time pipelines slow to min(T_straggler, T*) while one straggles";
  }

  Decision Decide(const JobConditions& conditions) override {
    const size_t classes = conditions.classes.size();
    std::vector<const FrontierPlan*> start(classes, &fastest_);
    std::vector<double> time_s(classes, 0.0);
    double straggler_s = 0;
    for (size_t c = 0; c < classes; ++c) {
      if (!conditions.classes[c].caps.empty()) start[c] = PlanUnderCaps(conditions.classes[c]);
      time_s[c] = RunPipeline(problem_, start[c]->choice, conditions.classes[c]).time_s;
      if (conditions.pipeline_count[c] > 0) straggler_s = std::max(straggler_s, time_s[c]);
    }
    Decision d;
    for (size_t c = 0; c < classes; ++c) {
      const PipelineConditions& cond = conditions.classes[c];
      const FrontierPlan* plan = start[c];
      if (cond.caps.empty() && time_s[c] < straggler_s * (1 - 1e-9)) {
        const double target_s = std::min(straggler_s / cond.slowdown, frontier_.MinEnergyPlan().time_s);
        if (const FrontierPlan* p = frontier_.PlanForTime(target_s)) plan = p;
      }
      d.plans.push_back(plan->choice);
      d.lower_bound_j.push_back(cond.caps.empty() ? plan->lower_bound_j * cond.slowdown : -1);
    }
    return d;
  }

 private:
  // The least-energy plan among all-max and the frontier whose run under the
  // caps is no slower than all-max's (energies compared over that time).
  const FrontierPlan* PlanUnderCaps(const PipelineConditions& cond) const {
    const double block_w = BlockingPowerPerGpuW(problem_);
    const PipelineRun all_max = RunPipeline(problem_, frontier_.all_max.choice, cond);
    const double limit_s = all_max.time_s * (1 + 1e-9);
    const FrontierPlan* best = &frontier_.all_max;
    double best_j = PipelineEnergyJ(all_max, all_max.time_s, block_w);
    for (const FrontierPlan& p : frontier_.plans) {
      PipelineRun run = RunPipeline(problem_, p.choice, cond);
      if (run.time_s > limit_s) continue;
      const double energy_j = PipelineEnergyJ(run, all_max.time_s, block_w);
      if (energy_j < best_j) {
        best = &p;
        best_j = energy_j;
      }
    }
    return best;
  }

  const Problem& problem_;
  const Frontier& frontier_;
  const FrontierPlan& fastest_;
};

}  // namespace

std::unique_ptr<Policy> MakePerseusPolicy(const Problem& problem, const Frontier& frontier) {
  return std::make_unique<PerseusPolicy>(problem, frontier);
}

}  // namespace perseus::emulator
