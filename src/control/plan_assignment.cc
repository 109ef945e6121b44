// The straggler response and its carbon floor.
#include "control/plan_assignment.h"

#include <algorithm>

namespace perseus::control {
namespace {

// Frontier::PlanForTime as an index, with a relative tolerance so a target
// computed as a product of times still selects the plan it names; 0 (the
// fastest plan) when none fits.
int PlanIndexForTime(const Frontier& frontier, double time_s) {
  const FrontierPlan* p = frontier.PlanForTime(time_s * (1 + 1e-9));
  return p ? static_cast<int>(p - frontier.plans.data()) : 0;
}

}  // namespace

int NoSlowdownPlanIndex(const Frontier& frontier) {
  const FrontierPlan* p = frontier.NoSlowdownPlan();
  return p ? static_cast<int>(p - frontier.plans.data()) : 0;
}

std::vector<int> AssignPipelinePlans(const Frontier& frontier, const std::vector<PipelinePace>& pipelines,
                                     int floor_index) {
  const int base = NoSlowdownPlanIndex(frontier);
  const double t_base = frontier.plans[base].time_s, t_min_energy = frontier.MinEnergyPlan().time_s;
  const int floor = std::max(base, std::clamp(floor_index, 0, static_cast<int>(frontier.plans.size()) - 1));
  double s_max = 1;
  for (const PipelinePace& p : pipelines) s_max = std::max(s_max, p.slowdown);
  std::vector<int> plans;
  plans.reserve(pipelines.size());
  for (const PipelinePace& p : pipelines) {
    if (p.pinned) {
      plans.push_back(kPinnedPipeline);
      continue;
    }
    const double target_s = std::min(t_base * s_max / std::max(1.0, p.slowdown), t_min_energy);
    plans.push_back(std::max(PlanIndexForTime(frontier, target_s), floor));
  }
  return plans;
}

}  // namespace perseus::control
