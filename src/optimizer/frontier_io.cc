// Serialising frontiers. plans.json can hold millions of entries, so it is
// written directly into a string rather than through a JSON tree.
#include "perseus/frontier_io.h"

#include <cstdio>
#include <string>

namespace perseus {
namespace {

std::string Num(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.17g", v);
  return buf;
}

std::string Fixed(double v, int digits) {
  char buf[48];
  std::snprintf(buf, sizeof buf, "%.*f", digits, v);
  return buf;
}

void AppendStages(const Problem& problem, const PlanChoice& choice, std::string& out) {
  const bool chunked = problem.schedule.spec.chunks > 1;
  out += "[";
  auto stages = PlanByStage(problem, choice);
  for (size_t s = 0; s < stages.size(); ++s) {
    out += s ? ", [" : "[";
    for (size_t k = 0; k < stages[s].size(); ++k) {
      const PlannedComputation& c = stages[s][k];
      if (k) out += ", ";
      out += "[\"";
      out += InstructionName(c.instruction);
      out += "\", " + std::to_string(c.microbatch) + ", " + std::to_string(c.freq_mhz);
      if (chunked) out += ", " + std::to_string(c.chunk);
      out += "]";
    }
    out += "]";
  }
  out += "]";
}

void AppendCost(const FrontierPlan& p, std::string& out) {
  out += "\"time_s\": " + Num(p.time_s) + ", \"energy_j\": " + Num(p.energy_j);
  if (p.lower_bound_j > 0) out += ", \"lower_bound_j\": " + Num(p.lower_bound_j);
}

}  // namespace

std::vector<std::vector<PlannedComputation>> PlanByStage(const Problem& problem, const PlanChoice& choice) {
  std::vector<std::vector<PlannedComputation>> out(problem.num_stages());
  for (int s = 0; s < problem.num_stages(); ++s) {
    for (int id : problem.gpu_order[s]) {
      const ProblemNode& n = problem.nodes[id];
      out[s].push_back({n.comp.instruction, n.comp.microbatch, n.comp.chunk, n.options[choice[id]].freq_mhz});
    }
  }
  return out;
}

std::string FrontierToJson(const Problem& problem, const Frontier& frontier) {
  const ScheduleSpec& spec = problem.schedule.spec;
  std::string out = "{\n  \"schema\": \"perseus.frontier/v1\",\n";
  out += "  \"schedule\": \"" + std::string(ScheduleName(spec.kind)) + "\",\n";
  out += "  \"stages\": " + std::to_string(spec.stages) + ",\n";
  out += "  \"microbatches\": " + std::to_string(spec.microbatches) + ",\n";
  if (spec.chunks > 1) out += "  \"chunks\": " + std::to_string(spec.chunks) + ",\n";
  out += "  \"gpus_per_stage\": " + std::to_string(problem.gpus_per_stage) + ",\n";
  out += "  \"blocking_power_w\": " + Num(problem.blocking_power_w / problem.gpus_per_stage) + ",\n";
  out += "  \"all_max\": {";
  AppendCost(frontier.all_max, out);
  out += "},\n  \"plans\": [";
  for (size_t i = 0; i < frontier.plans.size(); ++i) {
    out += i ? ",\n    {" : "\n    {";
    AppendCost(frontier.plans[i], out);
    out += ", \"stages\": ";
    AppendStages(problem, frontier.plans[i].choice, out);
    out += "}";
  }
  out += "\n  ]\n}\n";
  return out;
}

std::string FrontierToCsv(const Frontier& frontier) {
  std::string out = "time_s,energy_j,lower_bound_j,savings_vs_all_max\n";
  for (const FrontierPlan& p : frontier.plans) {
    out += Num(p.time_s) + "," + Num(p.energy_j) + "," + Num(p.lower_bound_j) + "," +
           Fixed(1 - p.energy_j / frontier.all_max.energy_j, 6) + "\n";
  }
  return out;
}

std::string PlanToZeusPython(const Problem& problem, const FrontierPlan& plan, int index) {
  std::string out = "[\n";
  for (const auto& stage : PlanByStage(problem, plan.choice)) {
    out += "[";
    for (size_t k = 0; k < stage.size(); ++k) {
      if (k) out += ", ";
      out += "('" + std::string(InstructionName(stage[k].instruction)) + "', " + std::to_string(stage[k].freq_mhz) + ")";
    }
    out += "],\n";
  }
  out += "]\n";
  out += "# Plan " + std::to_string(index) + " iteration time: " + Num(plan.time_s) + " s\n";
  out += "# Plan " + std::to_string(index) + " energy: " + Num(plan.energy_j) + " J\n";
  return out;
}

}  // namespace perseus
