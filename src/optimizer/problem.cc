// Building the computation DAG from a schedule and a profile.
#include "perseus/problem.h"

#include <algorithm>
#include <map>
#include <tuple>

namespace perseus {
namespace {

Status CheckProfileStages(const Profile& profile, const ScheduleSpec& spec) {
  int have = profile.num_stages();
  if (have == spec.virtual_stages() || have == spec.stages) return Status::Ok();
  std::string want = std::to_string(spec.stages);
  if (spec.chunks > 1) want += " or " + std::to_string(spec.virtual_stages());
  return Status::InvalidArgument("profile has " + std::to_string(have) + " stages but the pipeline needs " + want);
}

}  // namespace

Result<Problem> BuildProblem(const Profile& profile, const ProblemSpec& spec) {
  Result<Schedule> sched = BuildSchedule(spec.schedule);
  if (!sched.ok()) return sched.status();
  PERSEUS_RETURN_IF_ERROR(CheckProfileStages(profile, spec.schedule));
  if (!(spec.blocking_power_w >= 0) || spec.blocking_power_w > 1e5) {
    return Status::InvalidArgument("blocking power: expected 0..100000 W, got " + std::to_string(spec.blocking_power_w));
  }
  if (spec.gpus_per_stage < 1 || spec.gpus_per_stage > 1024) {
    return Status::InvalidArgument("gpus per stage: expected 1..1024, got " + std::to_string(spec.gpus_per_stage));
  }
  const ScheduleSpec& ss = spec.schedule;
  const bool per_virtual = profile.num_stages() == ss.virtual_stages();
  Problem p;
  p.schedule = std::move(*sched);
  p.blocking_power_w = spec.blocking_power_w * spec.gpus_per_stage;
  p.gpus_per_stage = spec.gpus_per_stage;
  p.gpu_order.resize(ss.stages);
  // Nodes are created GPU by GPU; a topological sort reorders them below.
  std::vector<ProblemNode> raw;
  std::map<std::tuple<int, int, int>, int> index;  // (vstage, ins, microbatch) -> raw id
  for (int s = 0; s < ss.stages; ++s) {
    const auto& order = p.schedule.per_stage[s];
    for (int k = 0; k < static_cast<int>(order.size()); ++k) {
      ProblemNode n;
      n.stage = s;
      n.comp = order[k];
      n.virtual_stage = order[k].chunk * ss.stages + s;
      n.position = k;
      int src = per_virtual ? n.virtual_stage : s;
      double scale = per_virtual ? 1.0 : 1.0 / ss.chunks;
      n.options = profile.stages[src].at(order[k].instruction);
      for (FreqPoint& fp : n.options) {
        fp.time_s *= scale;
        fp.energy_j *= scale * spec.gpus_per_stage;
      }
      index[{n.virtual_stage, static_cast<int>(n.comp.instruction), n.comp.microbatch}] = static_cast<int>(raw.size());
      raw.push_back(std::move(n));
    }
  }
  auto add_arc = [&](int a, int b) {
    // A pipeline dependency can coincide with GPU order (forward then
    // backward of a microbatch on the last stage); keep one arc.
    if (std::find(raw[a].succs.begin(), raw[a].succs.end(), b) != raw[a].succs.end()) return;
    raw[a].succs.push_back(b);
    raw[b].preds.push_back(a);
  };
  const int last = ss.virtual_stages() - 1;
  int id = 0;
  for (int s = 0; s < ss.stages; ++s) {
    for (size_t k = 0; k < p.schedule.per_stage[s].size(); ++k, ++id) {
      if (k > 0) add_arc(id - 1, id);
      const ProblemNode& n = raw[id];
      const int m = n.comp.microbatch;
      if (n.comp.instruction == Instruction::kForward) {
        if (n.virtual_stage < last) add_arc(id, index.at({n.virtual_stage + 1, 0, m}));
        else add_arc(id, index.at({n.virtual_stage, 1, m}));
      } else if (n.virtual_stage > 0) {
        add_arc(id, index.at({n.virtual_stage - 1, 1, m}));
      }
    }
  }
  // Kahn's algorithm; a cycle would mean the schedule deadlocks.
  std::vector<int> indeg(raw.size()), topo;
  topo.reserve(raw.size());
  for (const auto& n : raw) for (int v : n.succs) ++indeg[v];
  for (int i = 0; i < static_cast<int>(raw.size()); ++i) if (indeg[i] == 0) topo.push_back(i);
  for (size_t h = 0; h < topo.size(); ++h) {
    for (int v : raw[topo[h]].succs) if (--indeg[v] == 0) topo.push_back(v);
  }
  if (topo.size() != raw.size()) return Status::Internal("schedule has a dependency cycle (it would deadlock)");
  std::vector<int> new_id(raw.size());
  for (size_t i = 0; i < topo.size(); ++i) new_id[topo[i]] = static_cast<int>(i);
  p.nodes.resize(raw.size());
  for (size_t old = 0; old < raw.size(); ++old) {
    ProblemNode n = std::move(raw[old]);
    for (int& v : n.preds) v = new_id[v];
    for (int& v : n.succs) v = new_id[v];
    p.gpu_order[n.stage].push_back(new_id[old]);
    p.nodes[new_id[old]] = std::move(n);
  }
  return p;
}

PlanChoice AllMaxPlan(const Problem& problem) { return PlanChoice(problem.nodes.size(), 0); }

}  // namespace perseus
