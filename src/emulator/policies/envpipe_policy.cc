// EnvPipe (Choi et al., USENIX ATC '23), reimplemented from its paper.
//
// EnvPipe assumes the last stage bounds the pipeline, so the computations on
// the pipeline's "outer envelope" - the first microbatch's forwards down the
// pipeline, every computation of the last stage, and the last microbatch's
// backwards back up - form the critical path and stay at the maximum clock.
// Every other computation is lowered to its least-energy clock; then, while
// the iteration is slower than all-maximum, every critical computation off
// the envelope is raised one clock step. It uses no frontier and ignores
// stragglers. We start from the least-energy clock rather than the lowest
// one (clocks below it are slower and costlier), which only helps EnvPipe.
#include <algorithm>

#include "emulator/policy.h"

namespace perseus::emulator {
namespace {

bool OnEnvelope(const Problem& problem, const ProblemNode& n) {
  const int microbatches = problem.schedule.spec.microbatches;
  if (n.stage == problem.num_stages() - 1) return true;
  if (n.comp.instruction == Instruction::kForward) return n.comp.microbatch == 0;
  return n.comp.microbatch == microbatches - 1;
}

int LeastEnergyOption(const std::vector<FreqPoint>& options) {
  int best = 0;
  for (int k = 1; k < static_cast<int>(options.size()); ++k) {
    if (options[k].energy_j < options[best].energy_j) best = k;
  }
  return best;
}

// Marks computations with no slack (within a relative tolerance) under `plan`.
std::vector<char> Critical(const Problem& problem, const PlanChoice& plan, double& time_s) {
  const int n = problem.num_nodes();
  std::vector<double> start = EarliestStarts(problem, plan), latest_finish(n);
  time_s = 0;
  for (int i = 0; i < n; ++i) time_s = std::max(time_s, start[i] + problem.nodes[i].options[plan[i]].time_s);
  for (int i = n - 1; i >= 0; --i) {  // reverse topological order
    latest_finish[i] = time_s;
    for (int v : problem.nodes[i].succs) {
      latest_finish[i] = std::min(latest_finish[i], latest_finish[v] - problem.nodes[v].options[plan[v]].time_s);
    }
  }
  std::vector<char> critical(n);
  const double eps = 1e-9 * time_s;
  for (int i = 0; i < n; ++i) {
    critical[i] = latest_finish[i] - (start[i] + problem.nodes[i].options[plan[i]].time_s) <= eps;
  }
  return critical;
}

PlanChoice EnvPipePlan(const Problem& problem) {
  const PlanChoice all_max = AllMaxPlan(problem);
  const double target_s = EvaluatePlan(problem, all_max).time_s * (1 + 1e-9);
  PlanChoice plan = all_max;
  std::vector<char> envelope(problem.nodes.size());
  for (size_t i = 0; i < problem.nodes.size(); ++i) {
    envelope[i] = OnEnvelope(problem, problem.nodes[i]);
    if (!envelope[i]) plan[i] = LeastEnergyOption(problem.nodes[i].options);
  }
  for (;;) {
    double time_s = 0;
    std::vector<char> critical = Critical(problem, plan, time_s);
    if (time_s <= target_s) return plan;
    bool raised = false;
    for (size_t i = 0; i < plan.size(); ++i) {
      if (critical[i] && !envelope[i] && plan[i] > 0) {
        --plan[i];
        raised = true;
      }
    }
    if (!raised) return all_max;  // only envelope computations are critical yet too slow
  }
}

class EnvPipePolicy : public Policy {
 public:
  explicit EnvPipePolicy(const Problem& problem) : plan_(EnvPipePlan(problem)) {}
  std::string name() const override { return "envpipe"; }
  std::string description() const override {
    return "EnvPipe: computations off the outer envelope at low clocks, critical ones raised until no slowdown";
  }
  Decision Decide(const JobConditions& conditions) override { return SamePlanEverywhere(conditions, plan_); }

 private:
  PlanChoice plan_;
};

}  // namespace

std::unique_ptr<Policy> MakeEnvPipePolicy(const Problem& problem) { return std::make_unique<EnvPipePolicy>(problem); }

}  // namespace perseus::emulator
