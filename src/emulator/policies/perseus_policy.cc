// Perseus, intrinsic and extrinsic bloat: every pipeline starts from the
// no-slowdown frontier plan; when some pipeline straggles, the others slow to
// meet it, never past T* (control::AssignPipelinePlans, the rule the server
// runs). When the straggler recovers the conditions change and the no-slowdown
// plan returns.
// A pipeline with a throttled GPU is re-planned: of the frontier plans and
// all-max, the least-energy one no slower under the cap than all-max is.
#include <algorithm>

#include "control/plan_assignment.h"
#include "emulator/job_evaluation.h"
#include "emulator/pipeline_run.h"
#include "emulator/policy.h"

namespace perseus::emulator {
namespace {

class PerseusPolicy : public Policy {
 public:
  PerseusPolicy(const Problem& problem, const Frontier& frontier)
      : problem_(problem), frontier_(frontier), no_slowdown_(frontier.plans[control::NoSlowdownPlanIndex(frontier)]) {}
  std::string name() const override { return "perseus"; }
  std::string description() const override {
    return "Perseus: no-slowdown frontier plan; on-time pipelines slow to min(T_straggler, T*) while one straggles";
  }

  // The straggler response is the control library's (control/plan_assignment.h),
  // the server's: each class's pace is its time at its starting plan over the
  // no-slowdown plan's without any slowdown (both as emulated, so the pace does
  // not depend on how the frontier's own times were computed); throttled
  // classes keep their plan under the caps.
  Decision Decide(const JobConditions& conditions) override {
    const size_t classes = conditions.classes.size();
    std::vector<const FrontierPlan*> start(classes, &no_slowdown_);
    std::vector<control::PipelinePace> paces(classes);
    const double nominal_s = RunPipeline(problem_, no_slowdown_.choice, PipelineConditions{}).time_s;
    for (size_t c = 0; c < classes; ++c) {
      const PipelineConditions& cond = conditions.classes[c];
      if (!cond.caps.empty()) start[c] = PlanUnderCaps(cond);
      const double time_s = RunPipeline(problem_, start[c]->choice, cond).time_s;
      // A class without pipelines (the nominal class may have none) sets no pace.
      paces[c] = {conditions.pipeline_count[c] > 0 ? time_s / nominal_s : 1.0, !cond.caps.empty()};
    }
    const std::vector<int> assigned = control::AssignPipelinePlans(frontier_, paces);
    Decision d;
    for (size_t c = 0; c < classes; ++c) {
      const PipelineConditions& cond = conditions.classes[c];
      const FrontierPlan* plan = assigned[c] == control::kPinnedPipeline ? start[c] : &frontier_.plans[assigned[c]];
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
  const FrontierPlan& no_slowdown_;
};

}  // namespace

std::unique_ptr<Policy> MakePerseusPolicy(const Problem& problem, const Frontier& frontier) {
  return std::make_unique<PerseusPolicy>(problem, frontier);
}

}  // namespace perseus::emulator
