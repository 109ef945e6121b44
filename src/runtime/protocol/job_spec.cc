#include "runtime/protocol/job_spec.h"

#include <algorithm>
#include <iterator>

#include "carbon/electricitymaps_source.h"
#include "common/http_url.h"
#include "common/job_id.h"

namespace perseus::protocol {

namespace {

constexpr int kMaxDegree = 1 << 16;
constexpr int64_t kMaxComputations = 1 << 18;

Status ParseProfiling(const Json& body, bool strict, ProfilingOptions* out) {
  auto it = body.find("profiling");
  if (it == body.end() || it->is_null()) return Status::Ok();
  if (!it->is_object()) return FieldError("profiling", "expected an object, got " + Quote(*it));
  if (strict) {
    PERSEUS_RETURN_IF_ERROR(CheckKnownFields(
        *it, "profiling",
        {"iterations_per_clock", "window_iterations", "warmup_iterations", "clock_stride", "max_clocks",
         "max_energy_rises", "min_clock_mhz", "reference_every", "max_repeat_rounds", "target_relative_error",
         "time_budget_s", "thermal_time_constant_s", "single_clock_windows"}));
  }
  struct IntField {
    const char* key;
    int* slot;
    int lo, hi;
  };
  // "iterations_per_clock" is the name of window_iterations before windowed
  // profiling; "max_energy_rises" (the old sweep's stop rule, which noise
  // could trigger) is accepted and ignored so stored jobs still load.
  int ignored = 0;
  IntField fields[] = {{"iterations_per_clock", &out->window_iterations, 1, 1000},
                       {"window_iterations", &out->window_iterations, 1, 1000},
                       {"warmup_iterations", &out->warmup_iterations, 0, 1000},
                       {"clock_stride", &out->clock_stride, 0, 1000},
                       {"max_clocks", &out->max_clocks, 2, 1000},
                       {"max_energy_rises", &ignored, 1, 1000},
                       {"min_clock_mhz", &out->min_clock_mhz, 0, 100000},
                       {"reference_every", &out->reference_every, 2, 1000},
                       {"max_repeat_rounds", &out->max_repeat_rounds, 0, 100}};
  for (const IntField& f : fields) {
    Result<std::optional<int64_t>> v = GetOptionalInt(*it, f.key, std::string("profiling.") + f.key, f.lo, f.hi);
    if (!v.ok()) return v.status();
    if (v->has_value()) *f.slot = static_cast<int>(**v);
  }
  Result<std::optional<double>> target = GetOptionalNumber(*it, "target_relative_error",
                                                           "profiling.target_relative_error", 1e-4, 0.5);
  if (!target.ok()) return target.status();
  if (target->has_value()) out->target_relative_error = **target;
  Result<std::optional<double>> budget = GetOptionalNumber(*it, "time_budget_s", "profiling.time_budget_s", 0, 1e7);
  if (!budget.ok()) return budget.status();
  if (budget->has_value()) out->time_budget_s = **budget;
  Result<std::optional<double>> tau = GetOptionalNumber(*it, "thermal_time_constant_s",
                                                        "profiling.thermal_time_constant_s", 0, 1e6);
  if (!tau.ok()) return tau.status();
  if (tau->has_value()) out->thermal_time_constant_s = **tau;
  if (it->contains("single_clock_windows")) {
    Result<bool> single = GetBool(*it, "single_clock_windows", "profiling.single_clock_windows");
    if (!single.ok()) return single.status();
    out->single_clock_windows = *single;
  }
  return Status::Ok();
}

Status ParseStraggler(const Json& body, bool strict, StragglerOptions* out) {
  auto it = body.find("straggler");
  if (it == body.end() || it->is_null()) return Status::Ok();
  if (!it->is_object()) return FieldError("straggler", "expected an object, got " + Quote(*it));
  if (strict) PERSEUS_RETURN_IF_ERROR(CheckKnownFields(*it, "straggler", {"window", "threshold"}));
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
  if (!k.ok() || SplitsBackward(*k)) {
    // Zero-bubble schedules run split backwards, which the rank hooks and the
    // online profiling do not measure yet (perseus optimize plans them).
    return FieldError("schedule", "expected '1f1b', 'gpipe' or 'interleaved-1f1b', got " + Quote(kind) +
                                      (k.ok() ? " (split-backward schedules are offline only: perseus optimize)" : ""));
  }
  Result<int64_t> mb = GetInt(body, "microbatches", "microbatches", 1, 100000);
  if (!mb.ok()) return mb.status();
  Result<std::optional<int64_t>> chunks = GetOptionalInt(body, "chunks", "chunks", 1, 1000);
  if (!chunks.ok()) return chunks.status();
  spec->schedule.kind = *k;
  spec->schedule.stages = spec->pp;
  spec->schedule.microbatches = static_cast<int>(*mb);
  spec->schedule.chunks = chunks->value_or(1);
  // A job's memory in the server grows with its computations per iteration:
  // bounded at 4x the largest pipelines run today (32 x 512 x 2 chunks is 65,536).
  const int64_t computations = int64_t{2} * spec->pp * spec->schedule.microbatches * spec->schedule.chunks;
  if (computations > kMaxComputations) {
    return FieldError("microbatches", "pp x microbatches x chunks x 2 = " + std::to_string(computations) +
                                          " computations per iteration; at most " + std::to_string(kMaxComputations));
  }
  Result<Schedule> built = BuildSchedule(spec->schedule);
  if (!built.ok()) return ScheduleFieldError(built.status().message());
  return Status::Ok();
}

Status ParseCarbon(const Json& body, bool strict, std::optional<CarbonConfig>* out) {
  auto it = body.find("carbon");
  if (it == body.end() || it->is_null()) return Status::Ok();
  if (!it->is_object()) return FieldError("carbon", "expected an object, got " + Quote(*it));
  const Json& c = *it;
  if (strict) {
    PERSEUS_RETURN_IF_ERROR(CheckKnownFields(c, "carbon",
                                             {"source", "value_g_per_kwh", "trace_path", "zone", "token", "base_url",
                                              "slowdown_budget", "window_s", "job_hours", "pause", "restart_s",
                                              "restart_power_w"}));
  }
  CarbonConfig cfg;
  Result<std::string> source = GetString(c, "source", "carbon.source", 32);
  if (!source.ok()) return source.status();
  cfg.source = *source;
  if (cfg.source == "fixed") {
    Result<double> v = GetNumber(c, "value_g_per_kwh", "carbon.value_g_per_kwh", 0, 1e5);
    if (!v.ok()) return v.status();
    cfg.value_g_per_kwh = *v;
  } else if (cfg.source == "trace") {
    Result<std::string> path = GetString(c, "trace_path", "carbon.trace_path", 4096);
    if (!path.ok()) return path.status();
    if (path->empty()) return FieldError("carbon.trace_path", "expected a file path, got \"\"");
    cfg.trace_path = *path;
  } else if (cfg.source == "electricitymaps") {
    Result<std::string> zone = GetString(c, "zone", "carbon.zone", 64);
    if (!zone.ok()) return zone.status();
    if (zone->empty()) return FieldError("carbon.zone", "expected a zone such as \"US-CAL-CISO\", got \"\"");
    // The key's characters at registration only, as the base URL below.
    if (Status st = carbon::CheckElectricityMapsZone(*zone); strict && !st.ok()) {
      return FieldError("carbon.zone", st.message());
    }
    cfg.zone = *zone;
    if (c.contains("token")) {
      Result<std::string> token = GetString(c, "token", "carbon.token", 512);
      if (!token.ok()) return token.status();
      cfg.token = *token;
    }
    if (c.contains("base_url")) {
      Result<std::string> url = GetString(c, "base_url", "carbon.base_url", 512);
      if (!url.ok()) return url.status();
      if (url->rfind("http://", 0) != 0 && url->rfind("https://", 0) != 0) {
        return FieldError("carbon.base_url", "expected http://host[:port] or https://host[:port], got " + Quote(*url));
      }
      // At registration only: a job stored by a release with the looser check
      // still loads (its source then reports the URL when it fetches).
      if (strict) PERSEUS_RETURN_IF_ERROR(CheckHttpUrl(*url, "field 'carbon.base_url'"));
      cfg.base_url = *url;
    }
  } else {
    return FieldError("carbon.source", "expected 'fixed', 'trace' or 'electricitymaps', got " + Quote(cfg.source));
  }
  Result<std::optional<double>> budget =
      GetOptionalNumber(c, "slowdown_budget", "carbon.slowdown_budget", 0, 10);
  if (!budget.ok()) return budget.status();
  cfg.slowdown_budget = budget->value_or(0.05);
  Result<std::optional<int64_t>> window = GetOptionalInt(c, "window_s", "carbon.window_s", 1, 7 * 86400);
  if (!window.ok()) return window.status();
  cfg.window_s = window->value_or(3600);
  Result<std::optional<double>> hours = GetOptionalNumber(c, "job_hours", "carbon.job_hours", 0, 8760);
  if (!hours.ok()) return hours.status();
  cfg.job_hours = hours->value_or(0.0);
  if (c.contains("pause")) {
    Result<std::string> pause = GetString(c, "pause", "carbon.pause", 32);
    if (!pause.ok()) return pause.status();
    const CarbonPause kinds[] = {CarbonPause::kNever, CarbonPause::kHold, CarbonPause::kRelease};
    const auto kind = std::find_if(std::begin(kinds), std::end(kinds),
                                   [&](CarbonPause k) { return *pause == CarbonPauseName(k); });
    if (kind == std::end(kinds)) {
      return FieldError("carbon.pause", "expected 'never', 'hold' or 'release', got " + Quote(*pause));
    }
    if (*kind != CarbonPause::kNever && cfg.job_hours <= 0) {
      return FieldError("carbon.pause", "pausing needs the job's length: set carbon.job_hours (deadline mode)");
    }
    cfg.pause = *kind;
  }
  // What a release pause's restart costs: only with "release".
  auto restart_field = [&](const char* key, double hi) -> Result<std::optional<double>> {
    const std::string field = std::string("carbon.") + key;
    Result<std::optional<double>> v = GetOptionalNumber(c, key, field, 0, hi);
    if (v.ok() && *v && cfg.pause != CarbonPause::kRelease) {
      return FieldError(field, "a restart follows only a pause that releases the GPUs: set carbon.pause to 'release'");
    }
    return v;
  };
  Result<std::optional<double>> restart = restart_field("restart_s", 86400);
  if (!restart.ok()) return restart.status();
  cfg.restart_s = restart->value_or(CarbonConfig::kDefaultRestartS);
  Result<std::optional<double>> restart_power = restart_field("restart_power_w", 5000);
  if (!restart_power.ok()) return restart_power.status();
  cfg.restart_power_w = *restart_power;
  *out = std::move(cfg);
  return Status::Ok();
}

}  // namespace

const char* CarbonPauseName(CarbonPause pause) {
  switch (pause) {
    case CarbonPause::kHold: return "hold";
    case CarbonPause::kRelease: return "release";
    case CarbonPause::kNever: break;
  }
  return "never";
}

Result<JobSpec> ParseJobSpec(const Json& body, UnknownFields unknown) {
  const bool strict = unknown == UnknownFields::kReject;
  if (strict) {
    PERSEUS_RETURN_IF_ERROR(CheckKnownFields(
        body, "",
        {"id", "dp", "pp", "tp", "schedule", "microbatches", "chunks", "blocking_power_w", "unit_time_s",
         "max_clock_changes_per_gpu", "profiling", "straggler", "carbon", "power_cap", "power_cap_schedule"}));
  }
  JobSpec spec;
  Result<std::string> id = GetString(body, "id", "id", 64);
  if (!id.ok()) return id.status();
  if (!IsValidJobId(*id)) return FieldError("id", std::string("expected ") + kJobIdRule + ", got " + Quote(*id));
  spec.id = *id;
  PERSEUS_RETURN_IF_ERROR(ParseDegrees(body, &spec));
  PERSEUS_RETURN_IF_ERROR(ParseSchedule(body, &spec));
  Result<std::optional<double>> bp = GetOptionalNumber(body, "blocking_power_w", "blocking_power_w", 0, 1e5);
  if (!bp.ok()) return bp.status();
  spec.blocking_power_w = *bp;
  Result<std::optional<double>> unit = GetOptionalNumber(body, "unit_time_s", "unit_time_s", 1e-7, 10);
  if (!unit.ok()) return unit.status();
  spec.unit_time_s = unit->value_or(1e-3);
  Result<std::optional<int64_t>> changes =
      GetOptionalInt(body, "max_clock_changes_per_gpu", "max_clock_changes_per_gpu", -1, 1'000'000);
  if (!changes.ok()) return changes.status();
  spec.max_clock_changes_per_gpu = static_cast<int>(changes->value_or(-1));
  PERSEUS_RETURN_IF_ERROR(ParseProfiling(body, strict, &spec.profiling));
  PERSEUS_RETURN_IF_ERROR(ParseStraggler(body, strict, &spec.straggler));
  PERSEUS_RETURN_IF_ERROR(ParseCarbon(body, strict, &spec.carbon));
  if (body.contains("power_cap")) {
    Result<PowerCapRequest> cap = ParsePowerCapRequest(body.at("power_cap"), "power_cap");
    if (!cap.ok()) return cap.status();
    spec.power_cap = *cap;
  }
  if (body.contains("power_cap_schedule")) {
    Result<std::string> path = GetString(body, "power_cap_schedule", "power_cap_schedule", 4096);
    if (!path.ok()) return path.status();
    if (spec.power_cap) return FieldError("power_cap_schedule", "give power_cap or power_cap_schedule, not both");
    spec.power_cap_schedule = *path;
  }
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
            {"max_clock_changes_per_gpu", spec.max_clock_changes_per_gpu},
            {"profiling",
             {{"warmup_iterations", spec.profiling.warmup_iterations},
              {"window_iterations", spec.profiling.window_iterations},
              {"clock_stride", spec.profiling.clock_stride},
              {"max_clocks", spec.profiling.max_clocks},
              {"time_budget_s", spec.profiling.time_budget_s},
              {"thermal_time_constant_s", spec.profiling.thermal_time_constant_s},
              {"min_clock_mhz", spec.profiling.min_clock_mhz},
              {"reference_every", spec.profiling.reference_every},
              {"target_relative_error", spec.profiling.target_relative_error},
              {"max_repeat_rounds", spec.profiling.max_repeat_rounds},
              {"single_clock_windows", spec.profiling.single_clock_windows}}},
            {"straggler", {{"window", spec.straggler.window}, {"threshold", spec.straggler.threshold}}}};
  j["blocking_power_w"] = spec.blocking_power_w ? Json(*spec.blocking_power_w) : Json(nullptr);
  if (spec.carbon) {
    const CarbonConfig& c = *spec.carbon;
    Json cj = {{"source", c.source}, {"slowdown_budget", c.slowdown_budget}, {"window_s", c.window_s}};
    if (c.job_hours > 0) cj["job_hours"] = c.job_hours;
    if (c.pause != CarbonPause::kNever) cj["pause"] = CarbonPauseName(c.pause);
    if (c.pause == CarbonPause::kRelease) cj["restart_s"] = c.restart_s;
    if (c.restart_power_w) cj["restart_power_w"] = *c.restart_power_w;
    if (c.source == "fixed") cj["value_g_per_kwh"] = c.value_g_per_kwh;
    if (c.source == "trace") cj["trace_path"] = c.trace_path;
    if (c.source == "electricitymaps") {
      cj["zone"] = c.zone;
      cj["token"] = c.token;
      cj["base_url"] = c.base_url;
    }
    j["carbon"] = cj;
  }
  if (spec.power_cap) j["power_cap"] = PowerCapRequestToJson(*spec.power_cap);
  if (!spec.power_cap_schedule.empty()) j["power_cap_schedule"] = spec.power_cap_schedule;
  return j;
}

Json RedactedJobSpecJson(const JobSpec& spec) {
  Json j = JobSpecToJson(spec);
  if (j.contains("carbon") && j["carbon"].contains("token") && !j["carbon"]["token"].get<std::string>().empty()) {
    j["carbon"]["token"] = "***";
  }
  return j;
}

}  // namespace perseus::protocol
