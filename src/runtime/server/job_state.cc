#include "runtime/server/job_state.h"

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

const Straggler* ControlState::FindStraggler(int pipeline) const {
  for (const Straggler& s : stragglers) {
    if (s.pipeline == pipeline) return &s;
  }
  return nullptr;
}

Json ControlStateToJson(const ControlState& state) {
  Json stages = Json::array();
  for (const StageSweep& s : state.stages) {
    stages.push_back({{"clocks_mhz", s.clocks_mhz}, {"index", s.index}, {"rises", s.rises},
                      {"last_energy_j", s.last_energy_j}, {"done", s.done}, {"version", s.version}});
  }
  Json pipelines = Json::array();
  for (const PipelinePlan& p : state.pipelines) {
    pipelines.push_back({{"plan_index", p.plan_index}, {"version", p.version}});
  }
  Json stragglers = Json::array();
  for (const Straggler& s : state.stragglers) {
    stragglers.push_back({{"pipeline", s.pipeline}, {"slowdown", s.slowdown}, {"detected", s.detected}});
  }
  const CarbonState& c = state.carbon;
  Json carbon = {{"plan_index", c.plan_index}, {"evaluated", c.evaluated},
                 {"last_eval_unix_s", c.last_eval_unix_s}, {"history_last_hour", c.history_last_hour},
                 {"intensity_g_per_kwh", c.intensity_g_per_kwh}, {"stale", c.stale},
                 {"forecast_g_per_kwh", c.forecast_g_per_kwh}, {"lambda_g_per_s", c.lambda_g_per_s},
                 {"elapsed_windows", c.elapsed_windows}, {"work_windows", c.work_windows},
                 {"history", c.history}, {"history_first_hour", c.history_first_hour},
                 {"explanation", c.explanation}};
  return {{"phase", PhaseName(state.phase)}, {"error", state.error},
          {"version_counter", state.version_counter}, {"base_version", state.base_version},
          {"stages", stages}, {"pipelines", pipelines}, {"stragglers", stragglers},
          {"blocking_power_w", state.blocking_power_w}, {"carbon", carbon}};
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
    for (const Json& s : j.at("stages")) {
      StageSweep sweep;
      sweep.clocks_mhz = s.at("clocks_mhz").get<std::vector<int>>();
      sweep.index = s.at("index").get<int>();
      sweep.rises = s.at("rises").get<int>();
      sweep.last_energy_j = s.at("last_energy_j").get<double>();
      sweep.done = s.at("done").get<bool>();
      sweep.version = s.at("version").get<int64_t>();
      state.stages.push_back(std::move(sweep));
    }
    for (const Json& p : j.at("pipelines")) {
      state.pipelines.push_back({p.at("plan_index").get<int>(), p.at("version").get<int64_t>()});
    }
    for (const Json& s : j.at("stragglers")) {
      state.stragglers.push_back(
          {s.at("pipeline").get<int>(), s.at("slowdown").get<double>(), s.at("detected").get<bool>()});
    }
    if (j.contains("carbon")) {  // absent in databases written before carbon-aware running
      const Json& c = j.at("carbon");
      CarbonState& cs = state.carbon;
      cs.plan_index = c.at("plan_index").get<int>();
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
      cs.history = c.at("history").get<std::vector<double>>();
      cs.history_first_hour = c.at("history_first_hour").get<int>();
      cs.explanation = c.at("explanation").get<std::string>();
    }
  } catch (const Json::exception& e) {
    return Status::Internal(std::string("stored job state: ") + e.what());
  }
  return state;
}

}  // namespace perseus::server
