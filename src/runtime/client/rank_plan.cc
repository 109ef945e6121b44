#include "runtime/client/rank_plan.h"

#include <nlohmann/json.hpp>

#include "common/json_fields.h"

namespace perseus::client {

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
  return Status::InvalidArgument("unknown kind '" + name + "'");
}

constexpr int64_t kMaxClockMhz = 100'000;
constexpr int64_t kMaxCount = 1'000'000'000;

// Assigns the field's value when it reads; returns its error otherwise.
template <typename T, typename V>
Status Set(Result<V> value, T* out) {
  if (!value.ok()) return value.status();
  *out = static_cast<T>(*value);
  return Status::Ok();
}

Result<PlanStep> ParseStep(const Json& j, const std::string& path) {
  PlanStep s;
  Result<std::string> name = GetString(j, "instruction", FieldPath(path, "instruction"), 64);
  if (!name.ok()) return name.status();
  Result<Instruction> ins = ParseInstruction(*name);
  if (!ins.ok()) return ins.status().WithContext(path);
  s.instruction = *ins;
  PERSEUS_RETURN_IF_ERROR(Set(GetInt(j, "microbatch", FieldPath(path, "microbatch"), 0, kMaxCount), &s.microbatch));
  Result<std::optional<int64_t>> chunk = GetOptionalInt(j, "chunk", FieldPath(path, "chunk"), 0, kMaxCount);
  if (!chunk.ok()) return chunk.status();
  s.chunk = static_cast<int>(chunk->value_or(0));
  PERSEUS_RETURN_IF_ERROR(Set(GetInt(j, "sm_clock_mhz", FieldPath(path, "sm_clock_mhz"), 0, kMaxClockMhz), &s.sm_clock_mhz));
  return s;
}

Status ParseWindow(const Json& j, ProfilingWindow* w) {
  Result<const Json*> window = GetObject(j, "window", "window");
  if (!window.ok()) return window.status();
  const Json& o = **window;
  PERSEUS_RETURN_IF_ERROR(Set(GetInt(o, "id", "window.id", 0, INT64_MAX / 2), &w->id));
  PERSEUS_RETURN_IF_ERROR(Set(GetInt(o, "warmup_iterations", "window.warmup_iterations", 0, kMaxCount), &w->warmup_iterations));
  PERSEUS_RETURN_IF_ERROR(Set(GetInt(o, "iterations", "window.iterations", 1, kMaxCount), &w->iterations));
  PERSEUS_RETURN_IF_ERROR(
      Set(GetInt(o, "forward_clock_mhz", "window.forward_clock_mhz", 0, kMaxClockMhz), &w->forward_clock_mhz));
  return Set(GetInt(o, "backward_clock_mhz", "window.backward_clock_mhz", 0, kMaxClockMhz), &w->backward_clock_mhz);
}

Status ParseWarnings(const Json& j, RankPlan* plan) {
  if (!j.contains("warnings")) return Status::Ok();
  Result<const Json*> list = GetArray(j, "warnings", "warnings");
  if (!list.ok()) return list.status();
  for (size_t i = 0; i < (*list)->size(); ++i) {
    const Json& w = (**list)[i];
    const std::string path = FieldPath("warnings", i);
    Result<std::string> code = GetString(w, "code", FieldPath(path, "code"), 256);
    if (!code.ok()) return code.status();
    Result<std::string> message = GetString(w, "message", FieldPath(path, "message"), 1 << 16);
    if (!message.ok()) return message.status();
    Result<std::optional<int64_t>> stage = GetOptionalInt(w, "stage", FieldPath(path, "stage"), -1, kMaxCount);
    if (!stage.ok()) return stage.status();
    Result<std::optional<int64_t>> rank = GetOptionalInt(w, "rank", FieldPath(path, "rank"), -1, kMaxCount);
    if (!rank.ok()) return rank.status();
    plan->warnings.emplace_back(*code + "/" + std::to_string(stage->value_or(-1)) + "/" + std::to_string(rank->value_or(-1)),
                                *message);
  }
  return Status::Ok();
}

Status ParseBody(const Json& j, RankPlan* plan) {
  PERSEUS_RETURN_IF_ERROR(Set(GetInt(j, "version", "version", 0, INT64_MAX / 2), &plan->version));
  Result<std::string> kind_name = GetString(j, "kind", "kind", 64);
  if (!kind_name.ok()) return kind_name.status();
  Result<PlanKind> kind = ParseKind(*kind_name);
  if (!kind.ok()) return kind.status();
  plan->kind = *kind;
  if (j.contains("phase")) PERSEUS_RETURN_IF_ERROR(Set(GetString(j, "phase", "phase", 64), &plan->phase));
  Result<std::optional<int64_t>> index = GetOptionalInt(j, "plan_index", "plan_index", -1, kMaxCount);
  if (!index.ok()) return index.status();
  plan->plan_index = static_cast<int>(index->value_or(-1));
  Result<std::optional<double>> predicted = GetOptionalNumber(j, "predicted_time_s", "predicted_time_s", 0, 1e9);
  if (!predicted.ok()) return predicted.status();
  plan->predicted_time_s = predicted->value_or(0.0);
  if (plan->kind == PlanKind::kProfiling) PERSEUS_RETURN_IF_ERROR(ParseWindow(j, &plan->window));
  PERSEUS_RETURN_IF_ERROR(ParseWarnings(j, plan));
  Result<const Json*> list = GetArray(j, "instructions", "instructions");
  if (!list.ok()) return list.status();
  for (size_t i = 0; i < (*list)->size(); ++i) {
    Result<PlanStep> step = ParseStep((**list)[i], FieldPath("instructions", i));
    if (!step.ok()) return step.status();
    plan->steps.push_back(*step);
  }
  return Status::Ok();
}

}  // namespace

Result<std::optional<RankPlan>> ParseRankPlan(const std::string& json_text) {
  Json j = Json::parse(json_text, nullptr, false);
  if (!j.is_object()) return Status::InvalidArgument("plan: not a JSON object");
  Result<bool> changed = GetBool(j, "changed", "changed");
  if (!changed.ok()) return changed.status().WithContext("plan");
  if (!*changed) return std::optional<RankPlan>();
  RankPlan plan;
  Status st = ParseBody(j, &plan);
  if (!st.ok()) return st.WithContext("plan");
  return std::optional<RankPlan>(std::move(plan));
}

}  // namespace perseus::client
