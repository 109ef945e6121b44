#include "runtime/protocol/rank_plan.h"

#include <nlohmann/json.hpp>

namespace perseus::protocol {

namespace {

constexpr PlanKind kPlanKinds[] = {PlanKind::kMax, PlanKind::kProfiling, PlanKind::kFrontier, PlanKind::kReset,
                                   PlanKind::kPause};
constexpr int64_t kMaxClockMhz = 100'000;
constexpr int64_t kMaxCount = 1'000'000'000;

Result<PlanKind> ParseKind(const std::string& name) {
  for (PlanKind k : kPlanKinds) {
    if (name == PlanKindName(k)) return k;
  }
  return Status::InvalidArgument("unknown kind '" + name + "'");
}

// Assigns the field's value when it reads; returns its error otherwise.
template <typename T, typename V>
Status Set(Result<V> value, T* out) {
  if (!value.ok()) return value.status();
  *out = static_cast<T>(*value);
  return Status::Ok();
}

template <typename T, typename V>
Status SetOptional(Result<std::optional<V>> value, T fallback, T* out) {
  if (!value.ok()) return value.status();
  *out = value->has_value() ? static_cast<T>(**value) : fallback;
  return Status::Ok();
}

Json StepToJson(const PlanStep& s) {
  return {{"instruction", InstructionName(s.instruction)}, {"microbatch", s.microbatch}, {"chunk", s.chunk},
          {"sm_clock_mhz", s.sm_clock_mhz}};
}

Result<PlanStep> ParseStep(const Json& j, const std::string& path) {
  PlanStep s;
  Result<std::string> name = GetString(j, "instruction", FieldPath(path, "instruction"), 64);
  if (!name.ok()) return name.status();
  Result<Instruction> ins = ParseInstruction(*name);
  if (!ins.ok()) return ins.status().WithContext(path);
  s.instruction = *ins;
  PERSEUS_RETURN_IF_ERROR(Set(GetInt(j, "microbatch", FieldPath(path, "microbatch"), 0, kMaxCount), &s.microbatch));
  PERSEUS_RETURN_IF_ERROR(SetOptional(GetOptionalInt(j, "chunk", FieldPath(path, "chunk"), 0, kMaxCount), 0, &s.chunk));
  PERSEUS_RETURN_IF_ERROR(Set(GetInt(j, "sm_clock_mhz", FieldPath(path, "sm_clock_mhz"), 0, kMaxClockMhz), &s.sm_clock_mhz));
  return s;
}

Json WindowToJson(const PlanWindow& w) {
  return {{"id", w.id}, {"warmup_iterations", w.warmup_iterations}, {"iterations", w.iterations},
          {"forward_clock_mhz", w.forward_clock_mhz}, {"backward_clock_mhz", w.backward_clock_mhz},
          {"purpose", w.purpose}};
}

Status ParseWindow(const Json& j, PlanWindow* w) {
  Result<const Json*> window = GetObject(j, "window", "window");
  if (!window.ok()) return window.status();
  const Json& o = **window;
  PERSEUS_RETURN_IF_ERROR(Set(GetInt(o, "id", "window.id", 0, INT64_MAX / 2), &w->id));
  PERSEUS_RETURN_IF_ERROR(Set(GetInt(o, "warmup_iterations", "window.warmup_iterations", 0, kMaxCount), &w->warmup_iterations));
  PERSEUS_RETURN_IF_ERROR(Set(GetInt(o, "iterations", "window.iterations", 1, kMaxCount), &w->iterations));
  PERSEUS_RETURN_IF_ERROR(
      Set(GetInt(o, "forward_clock_mhz", "window.forward_clock_mhz", 0, kMaxClockMhz), &w->forward_clock_mhz));
  PERSEUS_RETURN_IF_ERROR(
      Set(GetInt(o, "backward_clock_mhz", "window.backward_clock_mhz", 0, kMaxClockMhz), &w->backward_clock_mhz));
  if (!o.contains("purpose")) return Status::Ok();
  return Set(GetString(o, "purpose", "window.purpose", 64), &w->purpose);
}

Json PauseToJson(const PlanPause& p) {
  return {{"hold_clock_mhz", p.hold_clock_mhz}, {"release", p.release}, {"from_iteration", p.from_iteration},
          {"max_s", p.max_s}, {"reason", p.reason}};
}

Status ParsePause(const Json& j, PlanPause* p) {
  Result<const Json*> pause = GetObject(j, "pause", "pause");
  if (!pause.ok()) return pause.status();
  const Json& o = **pause;
  PERSEUS_RETURN_IF_ERROR(Set(GetInt(o, "hold_clock_mhz", "pause.hold_clock_mhz", 0, kMaxClockMhz), &p->hold_clock_mhz));
  PERSEUS_RETURN_IF_ERROR(Set(GetBool(o, "release", "pause.release"), &p->release));
  PERSEUS_RETURN_IF_ERROR(
      SetOptional(GetOptionalInt(o, "from_iteration", "pause.from_iteration", 0, INT64_MAX / 2), int64_t{0}, &p->from_iteration));
  PERSEUS_RETURN_IF_ERROR(Set(GetNumber(o, "max_s", "pause.max_s", 0, 1e9), &p->max_s));
  if (!o.contains("reason")) return Status::Ok();
  return Set(GetString(o, "reason", "pause.reason", 1024), &p->reason);
}

Result<JobWarning> ParseWarning(const Json& w, const std::string& path) {
  JobWarning out;
  PERSEUS_RETURN_IF_ERROR(Set(GetString(w, "code", FieldPath(path, "code"), 256), &out.code));
  PERSEUS_RETURN_IF_ERROR(Set(GetString(w, "message", FieldPath(path, "message"), 1 << 16), &out.message));
  PERSEUS_RETURN_IF_ERROR(SetOptional(GetOptionalInt(w, "stage", FieldPath(path, "stage"), -1, kMaxCount), -1, &out.stage));
  PERSEUS_RETURN_IF_ERROR(SetOptional(GetOptionalInt(w, "rank", FieldPath(path, "rank"), -1, kMaxCount), -1, &out.rank));
  return out;
}

Status ParseSteps(const Json& j, RankPlan* plan) {
  Result<const Json*> list = GetArray(j, "instructions", "instructions");
  if (!list.ok()) return list.status();
  for (size_t i = 0; i < (*list)->size(); ++i) {
    Result<PlanStep> step = ParseStep((**list)[i], FieldPath("instructions", i));
    if (!step.ok()) return step.status();
    plan->steps.push_back(*step);
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
  if (j.contains("job")) PERSEUS_RETURN_IF_ERROR(Set(GetString(j, "job", "job", 256), &plan->job));
  PERSEUS_RETURN_IF_ERROR(SetOptional(GetOptionalInt(j, "rank", "rank", -1, kMaxCount), -1, &plan->rank));
  if (j.contains("phase")) PERSEUS_RETURN_IF_ERROR(Set(GetString(j, "phase", "phase", 64), &plan->phase));
  PERSEUS_RETURN_IF_ERROR(SetOptional(GetOptionalInt(j, "plan_index", "plan_index", -1, kMaxCount), -1, &plan->plan_index));
  PERSEUS_RETURN_IF_ERROR(
      SetOptional(GetOptionalNumber(j, "predicted_time_s", "predicted_time_s", 0, 1e9), 0.0, &plan->predicted_time_s));
  if (plan->kind == PlanKind::kProfiling) PERSEUS_RETURN_IF_ERROR(ParseWindow(j, &plan->window));
  if (plan->kind == PlanKind::kPause) PERSEUS_RETURN_IF_ERROR(ParsePause(j, &plan->pause));
  PERSEUS_RETURN_IF_ERROR(
      SetOptional(GetOptionalInt(j, "sm_clock_mhz", "sm_clock_mhz", 0, kMaxClockMhz), 0, &plan->sm_clock_mhz));
  if (j.contains("warnings")) {
    Result<const Json*> list = GetArray(j, "warnings", "warnings");
    if (!list.ok()) return list.status();
    Result<std::vector<JobWarning>> warnings = ParseJobWarnings(**list, "warnings");
    if (!warnings.ok()) return warnings.status();
    plan->warnings = std::move(*warnings);
  }
  return ParseSteps(j, plan);
}

}  // namespace

const char* PlanKindName(PlanKind kind) {
  switch (kind) {
    case PlanKind::kMax: return "max";
    case PlanKind::kProfiling: return "profiling";
    case PlanKind::kFrontier: return "frontier";
    case PlanKind::kReset: return "reset";
    case PlanKind::kPause: return "pause";
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

std::string JobWarning::Key() const { return code + "/" + std::to_string(stage) + "/" + std::to_string(rank); }

Json JobWarningsToJson(const std::vector<JobWarning>& warnings) {
  Json out = Json::array();
  for (const JobWarning& w : warnings) {
    out.push_back({{"code", w.code}, {"message", w.message}, {"stage", w.stage}, {"rank", w.rank}});
  }
  return out;
}

Result<std::vector<JobWarning>> ParseJobWarnings(const Json& list, const std::string& path) {
  if (!list.is_array()) return FieldError(path, "expected an array, got " + Quote(list));
  std::vector<JobWarning> out;
  for (size_t i = 0; i < list.size(); ++i) {
    Result<JobWarning> w = ParseWarning(list[i], FieldPath(path, i));
    if (!w.ok()) return w.status();
    out.push_back(std::move(*w));
  }
  return out;
}

std::string StepsJson(const std::vector<PlanStep>& steps) {
  Json list = Json::array();
  for (const PlanStep& s : steps) list.push_back(StepToJson(s));
  return list.dump();
}

std::string RankPlanJson(const RankPlan& plan, const std::string& steps_json) {
  Json head = {{"changed", true}, {"version", plan.version}, {"job", plan.job}, {"rank", plan.rank},
               {"phase", plan.phase}, {"kind", PlanKindName(plan.kind)}};
  if (plan.kind == PlanKind::kFrontier || plan.kind == PlanKind::kPause) {
    head["plan_index"] = plan.plan_index;
    head["predicted_time_s"] = plan.predicted_time_s;
  }
  if (plan.kind == PlanKind::kPause) head["pause"] = PauseToJson(plan.pause);
  if (plan.kind == PlanKind::kProfiling) head["window"] = WindowToJson(plan.window);
  if (plan.kind == PlanKind::kMax) head["sm_clock_mhz"] = plan.sm_clock_mhz;
  if (!plan.warnings.empty()) head["warnings"] = JobWarningsToJson(plan.warnings);
  std::string text = head.dump();
  text.pop_back();  // the closing brace
  return text + ",\"instructions\":" + steps_json + "}";
}

std::string UnchangedPlanJson(int64_t version) {
  return std::string("{\"changed\":false,\"version\":") + std::to_string(version) + "}";
}

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

}  // namespace perseus::protocol
