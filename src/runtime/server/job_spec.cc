#include "runtime/server/job_spec.h"

namespace perseus::server {

namespace {

constexpr int kMaxDegree = 1 << 16;

Status ParseProfiling(const Json& body, ProfilingOptions* out) {
  auto it = body.find("profiling");
  if (it == body.end() || it->is_null()) return Status::Ok();
  if (!it->is_object()) return FieldError("profiling", "expected an object, got " + Quote(*it));
  struct IntField {
    const char* key;
    int* slot;
    int lo, hi;
  };
  IntField fields[] = {{"iterations_per_clock", &out->iterations_per_clock, 1, 1000},
                       {"clock_stride", &out->clock_stride, 1, 1000},
                       {"max_energy_rises", &out->max_energy_rises, 1, 1000},
                       {"min_clock_mhz", &out->min_clock_mhz, 0, 100000}};
  for (const IntField& f : fields) {
    Result<std::optional<int64_t>> v = GetOptionalInt(*it, f.key, std::string("profiling.") + f.key, f.lo, f.hi);
    if (!v.ok()) return v.status();
    if (v->has_value()) *f.slot = static_cast<int>(**v);
  }
  return Status::Ok();
}

Status ParseStraggler(const Json& body, StragglerOptions* out) {
  auto it = body.find("straggler");
  if (it == body.end() || it->is_null()) return Status::Ok();
  if (!it->is_object()) return FieldError("straggler", "expected an object, got " + Quote(*it));
  Result<std::optional<int64_t>> window = GetOptionalInt(*it, "window", "straggler.window", 1, 1000);
  if (!window.ok()) return window.status();
  if (window->has_value()) out->window = static_cast<int>(**window);
  Result<std::optional<double>> thr = GetOptionalNumber(*it, "threshold", "straggler.threshold", 1.0001, 10);
  if (!thr.ok()) return thr.status();
  if (thr->has_value()) out->threshold = **thr;
  return Status::Ok();
}

Status ParseDegrees(const Json& body, JobSpec* spec) {
  int* slots[] = {&spec->dp, &spec->pp, &spec->tp};
  const char* keys[] = {"dp", "pp", "tp"};
  for (int i = 0; i < 3; ++i) {
    Result<std::optional<int64_t>> v = GetOptionalInt(body, keys[i], keys[i], 1, kMaxDegree);
    if (!v.ok()) return v.status();
    if (v->has_value()) *slots[i] = static_cast<int>(**v);
  }
  if (static_cast<int64_t>(spec->dp) * spec->pp * spec->tp > kMaxDegree) {
    return FieldError("dp", "dp * pp * tp must be at most " + std::to_string(kMaxDegree));
  }
  return Status::Ok();
}

// BuildSchedule says "stages: ..." or "microbatches: ..."; name the job field.
Status ScheduleFieldError(const std::string& message) {
  size_t colon = message.find(": ");
  std::string field = colon == std::string::npos ? "schedule" : message.substr(0, colon);
  std::string what = colon == std::string::npos ? message : message.substr(colon + 2);
  if (field == "stages") field = "pp";
  if (field != "pp" && field != "microbatches" && field != "chunks") field = "schedule";
  return FieldError(field, what);
}

Status ParseSchedule(const Json& body, JobSpec* spec) {
  std::string kind = "1f1b";
  if (body.contains("schedule")) {
    Result<std::string> s = GetString(body, "schedule", "schedule", 64);
    if (!s.ok()) return s.status();
    kind = *s;
  }
  Result<ScheduleKind> k = ParseScheduleKind(kind);
  if (!k.ok()) return FieldError("schedule", "expected '1f1b', 'gpipe' or 'interleaved-1f1b', got " + Quote(kind));
  Result<int64_t> mb = GetInt(body, "microbatches", "microbatches", 1, 100000);
  if (!mb.ok()) return mb.status();
  Result<std::optional<int64_t>> chunks = GetOptionalInt(body, "chunks", "chunks", 1, 1000);
  if (!chunks.ok()) return chunks.status();
  spec->schedule.kind = *k;
  spec->schedule.stages = spec->pp;
  spec->schedule.microbatches = static_cast<int>(*mb);
  spec->schedule.chunks = chunks->value_or(1);
  Result<Schedule> built = BuildSchedule(spec->schedule);
  if (!built.ok()) return ScheduleFieldError(built.status().message());
  return Status::Ok();
}

}  // namespace

Result<JobSpec> ParseJobSpec(const Json& body) {
  JobSpec spec;
  Result<std::string> id = GetString(body, "id", "id", 64);
  if (!id.ok()) return id.status();
  if (!IsValidId(*id)) return FieldError("id", "expected 1-64 characters of [A-Za-z0-9._-], got " + Quote(*id));
  spec.id = *id;
  PERSEUS_RETURN_IF_ERROR(ParseDegrees(body, &spec));
  PERSEUS_RETURN_IF_ERROR(ParseSchedule(body, &spec));
  Result<std::optional<double>> bp = GetOptionalNumber(body, "blocking_power_w", "blocking_power_w", 0, 1e5);
  if (!bp.ok()) return bp.status();
  spec.blocking_power_w = *bp;
  Result<std::optional<double>> unit = GetOptionalNumber(body, "unit_time_s", "unit_time_s", 1e-7, 10);
  if (!unit.ok()) return unit.status();
  spec.unit_time_s = unit->value_or(1e-3);
  PERSEUS_RETURN_IF_ERROR(ParseProfiling(body, &spec.profiling));
  PERSEUS_RETURN_IF_ERROR(ParseStraggler(body, &spec.straggler));
  return spec;
}

Json JobSpecToJson(const JobSpec& spec) {
  Json j = {{"id", spec.id},
            {"dp", spec.dp},
            {"pp", spec.pp},
            {"tp", spec.tp},
            {"schedule", ScheduleName(spec.schedule.kind)},
            {"microbatches", spec.schedule.microbatches},
            {"chunks", spec.schedule.chunks},
            {"unit_time_s", spec.unit_time_s},
            {"profiling",
             {{"iterations_per_clock", spec.profiling.iterations_per_clock},
              {"clock_stride", spec.profiling.clock_stride},
              {"max_energy_rises", spec.profiling.max_energy_rises},
              {"min_clock_mhz", spec.profiling.min_clock_mhz}}},
            {"straggler", {{"window", spec.straggler.window}, {"threshold", spec.straggler.threshold}}}};
  j["blocking_power_w"] = spec.blocking_power_w ? Json(*spec.blocking_power_w) : Json(nullptr);
  return j;
}

}  // namespace perseus::server
