// Building the computation DAG from a schedule and a profile.
#include "perseus/problem.h"

#include <algorithm>
#include <map>
#include <tuple>

namespace perseus {
namespace {

// "profile" or the file it came from.
std::string ProfileName(const Profile& profile) { return profile.source.empty() ? "profile" : profile.source; }

Status CheckProfileStages(const Profile& profile, const ScheduleSpec& spec) {
  int have = profile.num_stages();
  if (have == spec.virtual_stages() || have == spec.stages) return Status::Ok();
  std::string want = std::to_string(spec.stages);
  if (spec.chunks > 1) want += " or " + std::to_string(spec.virtual_stages());
  return Status::InvalidArgument(ProfileName(profile) + " has " + std::to_string(have) +
                                 " stages but the pipeline needs " + want);
}

// A zero-bubble schedule runs the backward's halves: the profile must list them.
Status CheckSplitRows(const Profile& profile, const ScheduleSpec& spec) {
  if (!SplitsBackward(spec.kind)) return Status::Ok();
  for (int s = 0; s < profile.num_stages(); ++s) {
    if (profile.stages[s].at(Instruction::kBackwardInput).empty()) {
      return Status::InvalidArgument(ProfileName(profile) + ": stage " + std::to_string(s) + " has no 'backward_input' and " +
                                     "'backward_weight' rows, which the " + ScheduleName(spec.kind) +
                                     " schedule runs (docs/formats.md)");
    }
  }
  return Status::Ok();
}

// Node keys: (virtual stage, instruction, microbatch).
using NodeKey = std::tuple<int, int, int>;
NodeKey Key(int virtual_stage, Instruction ins, int microbatch) {
  return {virtual_stage, static_cast<int>(ins), microbatch};
}

// The computation that produces a microbatch's input gradient at a virtual
// stage: its whole backward or, split, the input half.
int GradientNode(const std::map<NodeKey, int>& index, int virtual_stage, int microbatch) {
  auto it = index.find(Key(virtual_stage, Instruction::kBackward, microbatch));
  if (it == index.end()) it = index.find(Key(virtual_stage, Instruction::kBackwardInput, microbatch));
  return it->second;
}

}  // namespace

Result<Problem> BuildProblem(const Profile& profile, const ProblemSpec& spec) {
  Result<Schedule> sched = BuildSchedule(spec.schedule);
  if (!sched.ok()) return sched.status();
  PERSEUS_RETURN_IF_ERROR(CheckProfileStages(profile, spec.schedule));
  PERSEUS_RETURN_IF_ERROR(CheckSplitRows(profile, spec.schedule));
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
  std::map<NodeKey, int> index;  // -> raw id
  for (int s = 0; s < ss.stages; ++s) {
    const auto& order = p.schedule.per_stage[s];
    for (int k = 0; k < static_cast<int>(order.size()); ++k) {
      ProblemNode n;
      n.stage = s;
      n.comp = order[k];
      n.virtual_stage = ss.VirtualStage(s, order[k].chunk);
      n.position = k;
      int src = per_virtual ? n.virtual_stage : s;
      double scale = per_virtual ? 1.0 : 1.0 / ss.chunks;
      n.options = profile.stages[src].at(order[k].instruction);
      for (FreqPoint& fp : n.options) {
        fp.time_s *= scale;
        fp.energy_j *= scale * spec.gpus_per_stage;
      }
      index[Key(n.virtual_stage, n.comp.instruction, n.comp.microbatch)] = static_cast<int>(raw.size());
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
      const int m = n.comp.microbatch, v = n.virtual_stage;
      switch (n.comp.instruction) {
        case Instruction::kForward:
          add_arc(id, v < last ? index.at(Key(v + 1, Instruction::kForward, m)) : GradientNode(index, v, m));
          break;
        case Instruction::kBackward:
        case Instruction::kBackwardInput:
          if (v > 0) add_arc(id, GradientNode(index, v - 1, m));
          break;
        case Instruction::kBackwardWeight:  // needs its own input half (on the same GPU)
          add_arc(index.at(Key(v, Instruction::kBackwardInput, m)), id);
          break;
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
