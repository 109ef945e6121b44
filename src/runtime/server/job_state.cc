#include "runtime/server/job_state.h"

#include "carbon/intensity_trace.h"

namespace perseus::server {

namespace {
const char* kPhaseNames[] = {"registering", "profiling", "optimizing", "running", "done", "failed"};
}

const char* PhaseName(Phase phase) { return kPhaseNames[static_cast<int>(phase)]; }

Result<Phase> ParsePhase(const std::string& name) {
  for (int i = 0; i < 6; ++i) {
    if (name == kPhaseNames[i]) return static_cast<Phase>(i);
  }
  return Status::InvalidArgument("unknown phase '" + name + "'");
}

Status CheckRankFitsJob(const RankInfo& r, int dp, int pp, int tp) {
  const int fields[] = {r.rank, r.dp_rank, r.pp_rank, r.tp_rank};
  const int sizes[] = {dp * pp * tp, dp, pp, tp};
  const char* names[] = {"rank", "dp_rank", "pp_rank", "tp_rank"};
  for (int i = 0; i < 4; ++i) {
    if (fields[i] < 0 || fields[i] >= sizes[i]) {
      return FieldError(names[i], "expected an integer in [0, " + std::to_string(sizes[i] - 1) + "], got " +
                                      std::to_string(fields[i]));
    }
  }
  return Status::Ok();
}

const Straggler* ControlState::FindStraggler(int pipeline) const {
  for (const Straggler& s : stragglers) {
    if (s.pipeline == pipeline) return &s;
  }
  return nullptr;
}

bool ControlState::AddWarning(JobWarning w) {
  for (const JobWarning& old : warnings) {
    if (old.code == w.code && old.stage == w.stage && old.rank == w.rank) return false;
  }
  if (warnings.size() >= kMaxJobWarnings) return false;
  warnings.push_back(std::move(w));
  return true;
}

namespace {

Json ProfilingToJson(const ProfilingState& p) {
  Json windows = Json::array();
  for (const ProfilingWindowPlan& w : p.windows) {
    Json stages = Json::array();
    for (auto [f, b] : w.stages) stages.push_back({f, b});
    windows.push_back({{"stages", stages}, {"purpose", w.purpose}, {"opened_s", w.opened_s}, {"closed_s", w.closed_s}});
  }
  return {{"clocks_mhz", p.clocks_mhz}, {"windows", windows}, {"current", p.current},
          {"rounds", p.rounds}, {"version", p.version}, {"started_unix_s", p.started_unix_s}};
}

ProfilingState ProfilingFromJson(const Json& j) {
  ProfilingState p;
  p.clocks_mhz = j.at("clocks_mhz").get<std::vector<std::vector<int>>>();
  for (const Json& w : j.at("windows")) {
    ProfilingWindowPlan plan;
    for (const Json& st : w.at("stages")) plan.stages.emplace_back(st.at(0).get<int>(), st.at(1).get<int>());
    plan.purpose = w.at("purpose").get<std::string>();
    plan.opened_s = w.at("opened_s").get<double>();
    plan.closed_s = w.at("closed_s").get<double>();
    p.windows.push_back(std::move(plan));
  }
  p.current = j.at("current").get<int>();
  p.rounds = j.at("rounds").get<int>();
  p.version = j.at("version").get<int64_t>();
  p.started_unix_s = j.at("started_unix_s").get<double>();
  return p;
}

Json PowerCapToJson(const PowerCapState& p) {
  return {{"set", p.set}, {"from_api", p.from_api}, {"cap", protocol::PowerCapRequestToJson(p.cap)},
          {"run_fast", p.run_fast}};
}

Result<PowerCapState> PowerCapFromJson(const Json& j) {
  PowerCapState p;
  p.set = j.at("set").get<bool>();
  p.from_api = j.at("from_api").get<bool>();
  if (p.set) {
    Result<protocol::PowerCapRequest> cap = protocol::ParsePowerCapRequest(j.at("cap"), "power_cap.cap");
    if (!cap.ok()) return Status::Internal("stored job state: " + cap.status().message());
    p.cap = *cap;
  }
  p.run_fast = j.at("run_fast").get<bool>();
  return p;
}

}  // namespace

Json StragglersJson(const std::vector<Straggler>& stragglers) {
  Json out = Json::array();
  for (const Straggler& s : stragglers) {
    out.push_back({{"pipeline", s.pipeline}, {"slowdown", s.slowdown}, {"source", s.detected ? "detected" : "api"}});
  }
  return out;
}

namespace {

// The stored fuel mix (one array per hour) as CarbonState keeps it, flat: at
// most one hour per hour of history, each a usable mix (carbon::UsableMix).
Result<std::vector<double>> StoredMix(const Json& rows, size_t history_hours) {
  const std::vector<std::vector<double>> hours = rows.get<std::vector<std::vector<double>>>();
  if (hours.size() > history_hours) {
    return Status::Internal("stored job state: carbon.history_mix_mw has " + std::to_string(hours.size()) +
                            " hours, more than the history's " + std::to_string(history_hours));
  }
  std::vector<double> flat;
  for (size_t i = 0; i < hours.size(); ++i) {
    if (!carbon::UsableMix(hours[i])) {
      return Status::Internal("stored job state: carbon.history_mix_mw[" + std::to_string(i) + "]: expected " +
                              std::to_string(carbon::kEiaFuelCount) + " generations >= 0 (MW)");
    }
    flat.insert(flat.end(), hours[i].begin(), hours[i].end());
  }
  return flat;
}

Json MixRows(const std::vector<double>& flat) {
  Json rows = Json::array();
  for (size_t i = 0; i + carbon::kEiaFuelCount <= flat.size(); i += carbon::kEiaFuelCount) {
    rows.push_back(std::vector<double>(flat.begin() + static_cast<std::ptrdiff_t>(i),
                                       flat.begin() + static_cast<std::ptrdiff_t>(i + carbon::kEiaFuelCount)));
  }
  return rows;
}

}  // namespace

Json ControlStateToJson(const ControlState& state) {
  Json pipelines = Json::array();
  for (const PipelinePlan& p : state.pipelines) {
    Json pj = {{"plan_index", p.plan_index}, {"version", p.version}};
    if (p.clock_ceiling_mhz > 0) pj["clock_ceiling_mhz"] = p.clock_ceiling_mhz;  // older servers' states lack it
    pipelines.push_back(std::move(pj));
  }
  Json stragglers = Json::array();
  for (const Straggler& s : state.stragglers) {
    stragglers.push_back({{"pipeline", s.pipeline}, {"slowdown", s.slowdown}, {"detected", s.detected}});
  }
  const CarbonState& c = state.carbon;
  Json carbon = {{"plan_index", c.plan_index}, {"option", c.option}, {"option_time_s", c.option_time_s},
                 {"evaluated", c.evaluated},
                 {"last_eval_unix_s", c.last_eval_unix_s}, {"history_last_hour", c.history_last_hour},
                 {"intensity_g_per_kwh", c.intensity_g_per_kwh}, {"stale", c.stale},
                 {"forecast_g_per_kwh", c.forecast_g_per_kwh}, {"lambda_g_per_s", c.lambda_g_per_s},
                 {"elapsed_windows", c.elapsed_windows}, {"work_windows", c.work_windows},
                 {"restart_left_windows", c.restart_left_windows},
                 {"history", c.history}, {"history_mix_mw", MixRows(c.history_mix_mw)},
                 {"explanation", c.explanation}};
  return {{"phase", PhaseName(state.phase)}, {"error", state.error},
          {"version_counter", state.version_counter}, {"base_version", state.base_version},
          {"profiling", ProfilingToJson(state.profiling)}, {"warnings", protocol::JobWarningsToJson(state.warnings)},
          {"pipelines", pipelines}, {"stragglers", stragglers},
          {"blocking_power_w", state.blocking_power_w}, {"clock_switch_latency_s", state.clock_switch_latency_s},
          {"carbon", carbon}, {"pause_from_iteration", state.pause_from_iteration},
          {"power_cap", PowerCapToJson(state.power_cap)}};
}

Result<ControlState> ControlStateFromJson(const Json& j) {
  ControlState state;
  try {
    Result<Phase> phase = ParsePhase(j.at("phase").get<std::string>());
    if (!phase.ok()) return phase.status();
    state.phase = *phase;
    state.error = j.at("error").get<std::string>();
    state.version_counter = j.at("version_counter").get<int64_t>();
    state.base_version = j.at("base_version").get<int64_t>();
    state.blocking_power_w = j.at("blocking_power_w").get<double>();
    state.clock_switch_latency_s = j.value("clock_switch_latency_s", -1.0);  // absent in older databases
    // Databases written before windowed profiling hold "stages" (a per-stage
    // clock sweep) instead: a job still profiling then restarts profiling.
    if (j.contains("profiling")) state.profiling = ProfilingFromJson(j.at("profiling"));
    if (j.contains("warnings")) {
      Result<std::vector<JobWarning>> warnings = protocol::ParseJobWarnings(j.at("warnings"), "warnings");
      if (!warnings.ok()) return Status::Internal("stored job state: " + warnings.status().message());
      state.warnings = std::move(*warnings);
    }
    for (const Json& p : j.at("pipelines")) {
      state.pipelines.push_back({p.at("plan_index").get<int>(), p.at("version").get<int64_t>(),
                                 p.value("clock_ceiling_mhz", 0)});
    }
    for (const Json& s : j.at("stragglers")) {
      state.stragglers.push_back(
          {s.at("pipeline").get<int>(), s.at("slowdown").get<double>(), s.at("detected").get<bool>()});
    }
    if (j.contains("power_cap")) {  // absent in databases written before power caps
      Result<PowerCapState> cap = PowerCapFromJson(j.at("power_cap"));
      if (!cap.ok()) return cap.status();
      state.power_cap = *cap;
    }
    if (j.contains("carbon")) {  // absent in databases written before carbon-aware running
      const Json& c = j.at("carbon");
      CarbonState& cs = state.carbon;
      cs.plan_index = c.at("plan_index").get<int>();
      // Absent in databases written before the control library: -1, and the
      // next decision charges the last window at plan_index's time.
      cs.option = c.value("option", 0);
      cs.paused = cs.option < 0;  // the last decision paused the job
      cs.option_time_s = c.value("option_time_s", -1.0);
      cs.evaluated = c.at("evaluated").get<bool>();
      cs.last_eval_unix_s = c.at("last_eval_unix_s").get<int64_t>();
      // Databases written before hourly history stored the window index
      // under "last_window"; with the then-assumed hourly windows it is the hour.
      cs.history_last_hour = c.contains("history_last_hour") ? c.at("history_last_hour").get<int64_t>()
                                                             : c.at("last_window").get<int64_t>();
      cs.intensity_g_per_kwh = c.at("intensity_g_per_kwh").get<double>();
      cs.stale = c.at("stale").get<bool>();
      cs.forecast_g_per_kwh = c.at("forecast_g_per_kwh").get<double>();
      cs.lambda_g_per_s = c.at("lambda_g_per_s").get<double>();
      cs.elapsed_windows = c.at("elapsed_windows").get<double>();
      cs.work_windows = c.at("work_windows").get<double>();
      cs.restart_left_windows = c.value("restart_left_windows", 0.0);  // absent before restarts were charged
      cs.history = c.at("history").get<std::vector<double>>();
      // Until 2026-11 states also stored "history_first_hour" (derivable from
      // history_last_hour and the history's length); it is ignored.
      if (c.contains("history_mix_mw")) {  // absent in databases written before the fuel mix
        Result<std::vector<double>> mix = StoredMix(c.at("history_mix_mw"), cs.history.size());
        if (!mix.ok()) return mix.status();
        cs.history_mix_mw = std::move(*mix);
      }
      cs.explanation = c.at("explanation").get<std::string>();
      for (PipelinePlan& p : state.pipelines) p.paused = cs.evaluated && cs.paused;
    }
    state.pause_from_iteration = j.value("pause_from_iteration", int64_t{-1});  // absent before pausing
  } catch (const Json::exception& e) {
    return Status::Internal(std::string("stored job state: ") + e.what());
  }
  return state;
}

}  // namespace perseus::server
