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

int RankPlan::UniformClockMhz() const {
  if (steps.empty()) return -1;
  for (const PlanStep& s : steps) {
    if (s.sm_clock_mhz != steps.front().sm_clock_mhz) return -1;
  }
  return steps.front().sm_clock_mhz;
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
  Result<Instruction> ins = ParseInstruction(j.at("instruction").get<std::string>());
  if (!ins.ok()) return ins.status().WithContext("plan: instructions[" + std::to_string(i) + "]");
  s.instruction = *ins;
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
    if (plan.kind == PlanKind::kProfiling) {
      const Json& w = j.at("window");
      plan.window.id = w.at("id").get<int64_t>();
      plan.window.warmup_iterations = w.at("warmup_iterations").get<int>();
      plan.window.iterations = w.at("iterations").get<int>();
      plan.window.forward_clock_mhz = w.at("forward_clock_mhz").get<int>();
      plan.window.backward_clock_mhz = w.at("backward_clock_mhz").get<int>();
      if (plan.window.iterations < 1 || plan.window.warmup_iterations < 0) {
        return Status::InvalidArgument("plan: window: iterations must be >= 1 and warmup_iterations >= 0");
      }
    }
    for (const Json& w : j.value("warnings", Json::array())) {
      plan.warnings.emplace_back(w.at("code").get<std::string>() + "/" + std::to_string(w.value("stage", -1)) + "/" +
                                     std::to_string(w.value("rank", -1)),
                                 w.at("message").get<std::string>());
    }
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
