#include "runtime/server/metrics.h"

#include <map>
#include <sstream>

#include "runtime/server/http_util.h"
#include "runtime/server/job_state.h"

namespace perseus::server {

namespace {

// Collects samples per metric so each metric's HELP/TYPE header appears once.
class Exposition {
 public:
  void Add(const std::string& name, const std::string& help, const std::string& labels, const Json& value) {
    if (value.is_null()) return;
    Family& f = families_[name];
    f.help = help;
    std::ostringstream line;
    line.precision(10);
    line << name << "{" << labels << "} " << (value.is_boolean() ? (value.get<bool>() ? 1.0 : 0.0) : value.get<double>());
    f.lines.push_back(line.str());
  }
  std::string Text() const {
    std::string out;
    for (const auto& [name, f] : families_) {
      out += "# HELP " + name + " " + f.help + "\n# TYPE " + name + " gauge\n";
      for (const std::string& l : f.lines) out += l + "\n";
    }
    return out;
  }

 private:
  struct Family {
    std::string help;
    std::vector<std::string> lines;
  };
  std::map<std::string, Family> families_;
};

void AddPipelines(Exposition& e, const std::string& job, const Json& s) {
  for (const Json& p : s["pipelines"]) {
    const std::string l = job + ",pipeline=\"" + std::to_string(p["pipeline"].get<int>()) + "\"";
    e.Add("perseus_pipeline_plan_index", "Frontier plan in use (0 = fastest).", l, p["plan_index"]);
    e.Add("perseus_pipeline_predicted_iteration_seconds", "Predicted iteration time of the plan in use.", l,
          p["predicted_time_s"]);
    e.Add("perseus_pipeline_predicted_energy_joules", "Predicted energy per iteration of the plan in use.", l,
          p["predicted_energy_j"]);
    e.Add("perseus_pipeline_measured_iteration_seconds", "Median measured compute time of recent iterations.", l,
          p["measured_time_s"]);
    e.Add("perseus_pipeline_measured_energy_joules", "Mean measured GPU energy of recent iterations.", l,
          p["measured_energy_j"]);
  }
  for (const Json& st : s["stragglers"]) {
    const std::string l = job + ",pipeline=\"" + std::to_string(st["pipeline"].get<int>()) + "\",source=\"" +
                          st["source"].get<std::string>() + "\"";
    e.Add("perseus_straggler_slowdown", "Slowdown of a straggling pipeline.", l, st["slowdown"]);
  }
}

}  // namespace

std::string RenderMetrics(const std::vector<Json>& summaries) {
  Exposition e;
  for (const Json& s : summaries) {
    const std::string job = "job=\"" + s["id"].get<std::string>() + "\"";
    for (const char* phase : {"registering", "profiling", "optimizing", "running", "done", "failed"}) {
      e.Add("perseus_job_phase", "1 for the job's current phase.", job + ",phase=\"" + phase + "\"",
            s["phase"] == phase);
    }
    e.Add("perseus_job_ranks_registered", "Ranks registered.", job, s["ranks_registered"]);
    e.Add("perseus_job_world_size", "Ranks expected (dp * pp * tp).", job, s["world_size"]);
    e.Add("perseus_job_stragglers", "Pipelines currently straggling.", job, s["stragglers"].size());
    const Json& prof = s["profiling"];
    if (prof.is_object()) {
      e.Add("perseus_profiling_window", "Profiling window the job runs (0-based).", job, prof["window"]);
      e.Add("perseus_profiling_windows", "Profiling windows planned so far.", job, prof["windows"]);
      for (const Json& st : prof.value("stages", Json::array())) {
        const std::string l = job + ",stage=\"" + std::to_string(st["stage"].get<int>()) + "\"";
        e.Add("perseus_profiling_forward_sm_clock_mhz", "SM clock of the stage's forwards in this window.", l,
              st["forward_clock_mhz"]);
        e.Add("perseus_profiling_backward_sm_clock_mhz", "SM clock of the stage's backwards in this window.", l,
              st["backward_clock_mhz"]);
      }
    }
    std::map<std::string, int> warnings_by_code;
    for (const Json& w : s["warnings"]) ++warnings_by_code[w["code"].get<std::string>()];
    e.Add("perseus_job_warnings", "Warnings raised about the job (all codes).", job, s["warnings"].size());
    for (const auto& [code, n] : warnings_by_code) {
      e.Add("perseus_job_warnings_by_code", "Warnings raised about the job, by code.", job + ",code=\"" + code + "\"", n);
    }
    AddPipelines(e, job, s);
    if (s.contains("carbon")) {
      const Json& c = s["carbon"];
      e.Add("perseus_carbon_intensity_g_per_kwh", "Grid carbon intensity at the last carbon decision.", job,
            c["intensity_g_per_kwh"]);
      e.Add("perseus_carbon_forecast_g_per_kwh", "Forecast intensity of the next window at the last decision.", job,
            c["forecast_g_per_kwh"]);
      e.Add("perseus_carbon_plan_index", "Frontier plan the carbon policy chose (0 = fastest).", job, c["plan_index"]);
      e.Add("perseus_carbon_slowdown_so_far", "The carbon policy's average slowdown vs the fastest plan so far.", job,
            c["slowdown_so_far"]);
    }
    if (s.contains("frontier")) {
      const Json& f = s["frontier"];
      e.Add("perseus_frontier_plans", "Plans on the time-energy frontier.", job, f["plans"]);
      e.Add("perseus_frontier_all_max_energy_joules", "Energy per pipeline iteration at all-maximum clocks.", job,
            f["all_max"]["energy_j"]);
      e.Add("perseus_frontier_all_max_seconds", "Iteration time at all-maximum clocks.", job, f["all_max"]["time_s"]);
    }
  }
  return e.Text();
}

void AddMetricsRoutes(httplib::Server& server, const RouteContext& ctx) {
  JobService* service = ctx.service;
  server.Get("/metrics", [service](const httplib::Request&, httplib::Response& res) {
    res.status = 200;
    std::string text = RenderMetrics(service->AllSummaries());
    text += "# HELP perseus_unknown_rank_requests_total Rank requests that named an unknown job or rank.\n"
            "# TYPE perseus_unknown_rank_requests_total counter\n"
            "perseus_unknown_rank_requests_total " + std::to_string(service->UnknownRankRequests()) + "\n";
    res.set_content(text, "text/plain; version=0.0.4");
  });
  server.Get("/healthz", [](const httplib::Request&, httplib::Response& res) { SendJson(res, 200, {{"ok", true}}); });
}

}  // namespace perseus::server
