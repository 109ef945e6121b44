// Honest evaluation of a plan on the real profile values. Deliberately
// independent of the solver: it is the referee the solver's output is checked
// against.
#include <algorithm>
#include <string>

#include "perseus/problem.h"

namespace perseus {

std::vector<double> EarliestStarts(const Problem& problem, const PlanChoice& choice) {
  std::vector<double> start(problem.nodes.size(), 0.0);
  for (size_t i = 0; i < problem.nodes.size(); ++i) {  // nodes are topologically ordered
    const ProblemNode& n = problem.nodes[i];
    double finish = start[i] + n.options[choice[i]].time_s;
    for (int v : n.succs) start[v] = std::max(start[v], finish);
  }
  return start;
}

Status ValidatePlan(const Problem& problem, const PlanChoice& choice) {
  if (static_cast<int>(choice.size()) != problem.num_nodes()) {
    return Status::InvalidArgument("plan: wrong length: " + std::to_string(choice.size()) + " choices for " +
                                   std::to_string(problem.num_nodes()) + " computations");
  }
  for (int id = 0; id < problem.num_nodes(); ++id) {
    const ProblemNode& node = problem.nodes[id];
    if (choice[id] < 0 || choice[id] >= static_cast<int>(node.options.size())) {
      return Status::InvalidArgument("plan: computation " + std::to_string(id) + " (" +
                                     InstructionName(node.comp.instruction) + " of microbatch " +
                                     std::to_string(node.comp.microbatch) + ", stage " +
                                     std::to_string(node.stage) + "): option " + std::to_string(choice[id]) +
                                     " out of range (" + std::to_string(node.options.size()) + " options)");
    }
  }
  return Status::Ok();
}

namespace {

// The plan's cost when node i takes option(i): longest path and the energy
// model of problem.h.
template <typename OptionOf>
PlanCost Evaluate(const Problem& problem, OptionOf option) {
  std::vector<double> start(problem.nodes.size(), 0.0);
  PlanCost cost;
  double busy_s = 0, energy_j = 0;
  for (size_t i = 0; i < problem.nodes.size(); ++i) {  // nodes are topologically ordered
    const FreqPoint o = option(static_cast<int>(i));
    const double finish_s = start[i] + o.time_s;
    for (int v : problem.nodes[i].succs) start[v] = std::max(start[v], finish_s);
    cost.time_s = std::max(cost.time_s, finish_s);
    busy_s += o.time_s;
    energy_j += o.energy_j;
  }
  cost.energy_j = energy_j + problem.blocking_power_w * (problem.num_stages() * cost.time_s - busy_s);
  return cost;
}

}  // namespace

PlanCost EvaluatePlan(const Problem& problem, const PlanChoice& choice) {
  return Evaluate(problem, [&](int i) { return problem.nodes[i].options[choice[i]]; });
}

FreqPoint OptionWithClockLatency(const Problem& problem, const PlanChoice& choice, int i, double clock_latency_s) {
  const ProblemNode& node = problem.nodes[i];
  const FreqPoint& planned = node.options[choice[i]];
  if (clock_latency_s <= 0) return planned;
  const std::vector<int>& order = problem.gpu_order[node.stage];
  const int previous = order[(node.position + order.size() - 1) % order.size()];
  const FreqPoint& before = problem.nodes[previous].options[choice[previous]];
  if (before.freq_mhz == planned.freq_mhz || planned.time_s <= 0 || before.time_s <= 0) return planned;
  const double ratio = static_cast<double>(before.freq_mhz) / planned.freq_mhz;
  FreqPoint out = planned;
  const double old_s = std::min(clock_latency_s, planned.time_s / ratio);  // time at the old clock
  out.time_s = old_s + (planned.time_s - old_s * ratio);
  out.energy_j = before.energy_j / before.time_s * old_s + planned.energy_j / planned.time_s * (out.time_s - old_s);
  return out;
}

PlanCost EvaluatePlanWithClockLatency(const Problem& problem, const PlanChoice& choice, double clock_latency_s) {
  return Evaluate(problem, [&](int i) { return OptionWithClockLatency(problem, choice, i, clock_latency_s); });
}

PlanChoice WithClockCeiling(const Problem& problem, const PlanChoice& choice, int ceiling_mhz) {
  PlanChoice out = choice;
  for (size_t i = 0; i < out.size(); ++i) {
    const std::vector<FreqPoint>& options = problem.nodes[i].options;  // highest clock first
    while (out[i] + 1 < static_cast<int>(options.size()) && options[out[i]].freq_mhz > ceiling_mhz) ++out[i];
  }
  return out;
}

std::vector<int> ClockChangesPerGpu(const Problem& problem, const PlanChoice& choice) {
  std::vector<int> changes;
  for (const std::vector<int>& order : problem.gpu_order) {
    int n = 0;
    for (size_t k = 0; k < order.size(); ++k) {
      const int previous = order[(k + order.size() - 1) % order.size()];  // k = 0: the last, an iteration before
      const int mhz = problem.nodes[order[k]].options[choice[order[k]]].freq_mhz;
      n += mhz != problem.nodes[previous].options[choice[previous]].freq_mhz;
    }
    changes.push_back(n);
  }
  return changes;
}

}  // namespace perseus
