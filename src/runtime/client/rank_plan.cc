#include "runtime/client/rank_plan.h"

#include <nlohmann/json.hpp>

namespace perseus::client {

using Json = nlohmann::json;

const char* PlanKindName(PlanKind kind) {
  switch (kind) {
    case PlanKind::kMax: return "max";
    case PlanKind::kProfiling: return "profiling";
    case PlanKind::kFrontier: return "frontier";
    case PlanKind::kReset: return "reset";
  }
  return "max";
}

namespace {

Result<PlanKind> ParseKind(const std::string& name) {
  for (PlanKind k : {PlanKind::kMax, PlanKind::kProfiling, PlanKind::kFrontier, PlanKind::kReset}) {
    if (name == PlanKindName(k)) return k;
  }
  return Status::InvalidArgument("plan: unknown kind '" + name + "'");
}

Result<PlanStep> ParseStep(const Json& j, size_t i) {
  PlanStep s;
  const std::string ins = j.at("instruction").get<std::string>();
  if (ins == "forward") {
    s.instruction = Instruction::kForward;
  } else if (ins == "backward") {
    s.instruction = Instruction::kBackward;
  } else {
    return Status::InvalidArgument("plan: instructions[" + std::to_string(i) + "]: unknown instruction '" + ins + "'");
  }
  s.microbatch = j.at("microbatch").get<int>();
  s.chunk = j.value("chunk", 0);
  s.sm_clock_mhz = j.at("sm_clock_mhz").get<int>();
  return s;
}

}  // namespace

Result<std::optional<RankPlan>> ParseRankPlan(const std::string& json_text) {
  Json j = Json::parse(json_text, nullptr, false);
  if (!j.is_object()) return Status::InvalidArgument("plan: not a JSON object");
  try {
    if (!j.at("changed").get<bool>()) return std::optional<RankPlan>();
    RankPlan plan;
    plan.version = j.at("version").get<int64_t>();
    Result<PlanKind> kind = ParseKind(j.at("kind").get<std::string>());
    if (!kind.ok()) return kind.status();
    plan.kind = *kind;
    plan.phase = j.value("phase", "");
    plan.plan_index = j.value("plan_index", -1);
    plan.predicted_time_s = j.value("predicted_time_s", 0.0);
    plan.profiling_clock_mhz = plan.kind == PlanKind::kProfiling ? j.at("sm_clock_mhz").get<int>() : 0;
    const Json& list = j.at("instructions");
    for (size_t i = 0; i < list.size(); ++i) {
      Result<PlanStep> step = ParseStep(list[i], i);
      if (!step.ok()) return step.status();
      plan.steps.push_back(*step);
    }
    return std::optional<RankPlan>(std::move(plan));
  } catch (const Json::exception& e) {
    return Status::InvalidArgument(std::string("plan: ") + e.what());
  }
}

}  // namespace perseus::client
