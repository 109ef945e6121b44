// GET /metrics: the jobs' state in Prometheus' text format. Naming follows
// Prometheus' conventions: base units in the name (_seconds, _joules,
// _hertz, _ratio), cumulative counts as counters ending in _total, and no
// `job` or `instance` label of ours (Prometheus sets those for the scrape
// target; a `job` of ours would be renamed `exported_job`): jobs are `job_id`.
#include "runtime/server/metrics.h"

#include <map>
#include <sstream>

#include "runtime/server/http_util.h"
#include "runtime/server/job_state.h"

namespace perseus::server {

namespace {

enum class MetricType { kGauge, kCounter };

// Collects samples per metric so each metric's HELP/TYPE header appears once.
class Exposition {
 public:
  void Gauge(const std::string& name, const std::string& help, const std::string& labels, const Json& value) {
    Add(name, help, MetricType::kGauge, labels, value);
  }
  void Counter(const std::string& name, const std::string& help, const std::string& labels, const Json& value) {
    Add(name, help, MetricType::kCounter, labels, value);
  }
  std::string Text() const {
    std::string out;
    for (const auto& [name, f] : families_) {
      out += "# HELP " + name + " " + f.help + "\n# TYPE " + name + " " +
             (f.type == MetricType::kCounter ? "counter" : "gauge") + "\n";
      for (const std::string& l : f.lines) out += l + "\n";
    }
    return out;
  }

 private:
  struct Family {
    std::string help;
    MetricType type = MetricType::kGauge;
    std::vector<std::string> lines;
  };
  void Add(const std::string& name, const std::string& help, MetricType type, const std::string& labels,
           const Json& value) {
    if (value.is_null()) return;
    Family& f = families_[name];
    f.help = help;
    f.type = type;
    std::ostringstream line;
    line.precision(12);
    line << name;
    if (!labels.empty()) line << "{" << labels << "}";
    line << " " << (value.is_boolean() ? (value.get<bool>() ? 1.0 : 0.0) : value.get<double>());
    f.lines.push_back(line.str());
  }
  std::map<std::string, Family> families_;
};

// A label pair; values here are job ids ([A-Za-z0-9._-]), numbers and fixed
// words, but escape as the format requires anyway.
std::string Label(const std::string& name, const std::string& value) {
  std::string escaped;
  for (char c : value) {
    if (c == '\\' || c == '"') escaped += '\\';
    escaped += c == '\n' ? std::string("\\n") : std::string(1, c);
  }
  return name + "=\"" + escaped + "\"";
}

Json MhzToHertz(const Json& mhz) { return mhz.is_number() ? Json(mhz.get<double>() * 1e6) : Json(nullptr); }

void AddPipelines(Exposition& e, const std::string& job, const Json& s) {
  for (const Json& p : s["pipelines"]) {
    const std::string l = job + "," + Label("pipeline", std::to_string(p["pipeline"].get<int>()));
    e.Gauge("perseus_pipeline_plan_index", "Frontier plan the pipeline runs (0 = fastest).", l, p["plan_index"]);
    e.Gauge("perseus_pipeline_predicted_iteration_seconds", "Predicted iteration time of the plan in use.", l,
            p["predicted_time_s"]);
    e.Gauge("perseus_pipeline_predicted_energy_joules", "Predicted energy per iteration of the plan in use.", l,
            p["predicted_energy_j"]);
    e.Gauge("perseus_pipeline_measured_iteration_seconds", "Median measured compute time of recent iterations.", l,
            p["measured_time_s"]);
    e.Gauge("perseus_pipeline_measured_energy_joules", "Mean measured GPU energy of recent iterations.", l,
            p["measured_energy_j"]);
    const Json& t = p["totals"];
    e.Counter("perseus_pipeline_iterations_total", "Complete pipeline iterations (all ranks reported).", l,
              t["iterations"]);
    e.Counter("perseus_pipeline_energy_joules_total", "Measured GPU energy of the pipeline's iterations.", l,
              t["energy_j"]);
    e.Counter("perseus_pipeline_all_max_energy_joules_total",
              "Predicted energy of the same iterations with every GPU at its maximum clock (the baseline).", l,
              t["all_max_energy_j"]);
    e.Counter("perseus_pipeline_plan_switches_total", "Changes of the pipeline's frontier plan.", l,
              t["plan_switches"]);
  }
  for (const Json& st : s["stragglers"]) {
    const std::string l = job + "," + Label("pipeline", std::to_string(st["pipeline"].get<int>())) + "," +
                          Label("source", st["source"].get<std::string>());
    e.Gauge("perseus_straggler_slowdown_ratio", "Iteration time of a straggling pipeline over its normal time.", l,
            st["slowdown"]);
  }
}

void AddProfiling(Exposition& e, const std::string& job, const Json& prof) {
  if (!prof.is_object()) return;
  e.Gauge("perseus_profiling_window", "Profiling window the job runs (0-based).", job, prof["window"]);
  e.Gauge("perseus_profiling_windows", "Profiling windows planned so far.", job, prof["windows"]);
  for (const Json& st : prof.value("stages", Json::array())) {
    const std::string l = job + "," + Label("stage", std::to_string(st["stage"].get<int>()));
    e.Gauge("perseus_profiling_forward_sm_clock_hertz", "SM clock of the stage's forwards in this window.", l,
            MhzToHertz(st["forward_clock_mhz"]));
    e.Gauge("perseus_profiling_backward_sm_clock_hertz", "SM clock of the stage's backwards in this window.", l,
            MhzToHertz(st["backward_clock_mhz"]));
  }
}

void AddCarbonAndFrontier(Exposition& e, const std::string& job, const Json& s) {
  if (s.contains("carbon")) {
    const Json& c = s["carbon"];
    e.Gauge("perseus_carbon_intensity_grams_per_kilowatt_hour",
            "Grid carbon intensity (gCO2/kWh) at the last carbon decision.", job, c["intensity_g_per_kwh"]);
    e.Gauge("perseus_carbon_forecast_grams_per_kilowatt_hour",
            "Forecast intensity (gCO2/kWh) of the next window at the last decision.", job, c["forecast_g_per_kwh"]);
    e.Gauge("perseus_carbon_forecast_uses_fuel_mix", "1 when the last forecast used the grid's fuel mix, else 0.", job,
            c.value("forecast_with_fuel_mix", false) ? 1 : 0);
    e.Gauge("perseus_carbon_plan_index", "Frontier plan the carbon policy chose (0 = fastest).", job, c["plan_index"]);
    e.Gauge("perseus_carbon_paused", "1 while the carbon policy pauses the job (carbon.pause), else 0.", job,
            c.value("paused", false) ? 1 : 0);
    e.Gauge("perseus_carbon_slowdown_ratio", "The carbon policy's average slowdown vs the no-slowdown plan so far.", job,
            c["slowdown_so_far"]);
  }
  if (s.contains("power_cap") && s["power_cap"].is_object()) {
    const Json& p = s["power_cap"];
    e.Gauge("perseus_power_cap_watts", "Average power cap in force for the job's GPUs.", job, p["average_w"]);
    e.Gauge("perseus_power_cap_peak_watts", "Peak power cap in force for the job's GPUs.", job, p["peak_w"]);
    e.Gauge("perseus_power_predicted_watts", "The job's predicted average power under the cap (corrected by measurement).",
            job, p["predicted_w"]);
    e.Gauge("perseus_power_measured_watts", "The job's measured GPU power over recent complete iterations.", job,
            p["measured_w"]);
    e.Gauge("perseus_power_cap_server_share_watts", "The job's share of the server's power cap.", job,
            p["server_share_w"]);
  }
  if (s.contains("frontier")) {
    const Json& f = s["frontier"];
    e.Gauge("perseus_frontier_plans", "Plans on the time-energy frontier.", job, f["plans"]);
    e.Gauge("perseus_frontier_all_max_energy_joules", "Energy per pipeline iteration at all-maximum clocks.", job,
            f["all_max"]["energy_j"]);
    e.Gauge("perseus_frontier_all_max_seconds", "Iteration time at all-maximum clocks.", job, f["all_max"]["time_s"]);
  }
}

void AddJob(Exposition& e, const Json& s) {
  const std::string job = Label("job_id", s["id"].get<std::string>());
  for (const char* phase : {"registering", "profiling", "optimizing", "running"}) {
    e.Gauge("perseus_job_phase", "1 for the job's current phase.", job + "," + Label("phase", phase),
            s["phase"] == phase);
  }
  e.Gauge("perseus_job_ranks_registered", "Ranks registered.", job, s["ranks_registered"]);
  e.Gauge("perseus_job_world_size", "Ranks expected (dp * pp * tp).", job, s["world_size"]);
  e.Gauge("perseus_job_stragglers", "Pipelines currently straggling.", job, s["stragglers"].size());
  if (const Json solving = s.value("solving_s", Json()); solving.is_number()) {
    e.Gauge("perseus_job_solving_seconds", "How long the job's optimisation has run (while it runs).", job, solving);
  }
  AddProfiling(e, job, s["profiling"]);
  std::map<std::string, int> warnings_by_code;
  for (const Json& w : s["warnings"]) ++warnings_by_code[w["code"].get<std::string>()];
  e.Gauge("perseus_job_warnings", "Warnings raised about the job (all codes).", job, s["warnings"].size());
  for (const auto& [code, n] : warnings_by_code) {
    e.Gauge("perseus_job_warnings_by_code", "Warnings raised about the job, by code.", job + "," + Label("code", code),
            n);
  }
  AddPipelines(e, job, s);
  AddCarbonAndFrontier(e, job, s);
}

bool Ended(const Json& summary) { return summary["phase"] == "done" || summary["phase"] == "failed"; }

}  // namespace

std::string RenderMetrics(const std::vector<Json>& summaries, int64_t unknown_rank_requests,
                          const Json& server_power_cap) {
  Exposition e;
  std::map<std::string, int> jobs_by_phase;
  for (const char* phase : {"registering", "profiling", "optimizing", "running", "done", "failed"}) {
    jobs_by_phase[phase] = 0;
  }
  for (const Json& s : summaries) {
    ++jobs_by_phase[s["phase"].get<std::string>()];
    if (!Ended(s)) AddJob(e, s);  // an ended job's series go away (docs/http_api.md, "/metrics")
  }
  for (const auto& [phase, n] : jobs_by_phase) {
    e.Gauge("perseus_jobs", "Jobs the server holds, by phase (ended ones included).", Label("phase", phase), n);
  }
  e.Counter("perseus_unknown_rank_requests_total", "Rank requests that named an unknown job or rank.", "",
            unknown_rank_requests);
  if (server_power_cap.is_object() && server_power_cap["cap"].is_object()) {
    e.Gauge("perseus_server_power_cap_watts", "The server's power cap, shared by its running jobs.", "",
            server_power_cap["cap"]["average_w"]);
    e.Gauge("perseus_server_power_cap_shared_watts", "Watts of the server's cap given to running jobs.", "",
            server_power_cap["shared_w"]);
    e.Gauge("perseus_server_power_cap_feasible", "0 when the running jobs' slowest settings exceed the server's cap.",
            "", server_power_cap["feasible"].get<bool>() ? 1 : 0);
  }
  return e.Text();
}

void AddMetricsRoutes(httplib::Server& server, const RouteContext& ctx) {
  JobService* service = ctx.service;
  server.Get("/metrics", [service](const httplib::Request&, httplib::Response& res) {
    res.status = 200;
    res.set_content(RenderMetrics(service->AllSummaries(), service->UnknownRankRequests(), service->ServerPowerCapJson()),
                    "text/plain; version=0.0.4; charset=utf-8");
  });
  server.Get("/healthz", [](const httplib::Request&, httplib::Response& res) { SendJson(res, 200, {{"ok", true}}); });
}

}  // namespace perseus::server
