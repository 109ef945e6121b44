// report.json and energy_per_gpu.csv.
#include "emulator/report_json.h"

#include <algorithm>
#include <cstdio>
#include <numeric>

namespace perseus::emulator {
namespace {

using nlohmann::json;

json EventsJson(const EmulationSpec& s) {
  json stragglers = json::array(), throttles = json::array();
  for (const SlowPipelineEvent& e : s.stragglers) {
    stragglers.push_back({{"factor", e.factor},
                          {"first_pipeline", e.first_pipeline},
                          {"last_pipeline", e.last_pipeline},
                          {"start_iteration", e.start_iteration},
                          {"end_iteration", e.end_iteration < 0 ? s.iterations : e.end_iteration}});
  }
  for (const GpuCapEvent& e : s.throttles) {
    throttles.push_back({{"pipeline", e.pipeline},
                         {"stage", e.stage},
                         {"gpu", e.gpu},
                         {"max_freq_mhz", e.max_freq_mhz},
                         {"start_iteration", e.start_iteration},
                         {"end_iteration", e.end_iteration < 0 ? s.iterations : e.end_iteration}});
  }
  return {{"stragglers", stragglers}, {"throttles", throttles}};
}

json GpuStats(const std::vector<double>& v) {
  if (v.empty()) return nullptr;
  auto [lo, hi] = std::minmax_element(v.begin(), v.end());
  return {{"min", *lo}, {"mean", std::accumulate(v.begin(), v.end(), 0.0) / v.size()}, {"max", *hi}};
}

json LowerBoundJson(const EmulationResult& r) {
  const PolicyResult& base = r.policies.front();
  for (const PolicyResult& p : r.policies) {
    if (p.name != "perseus" || p.lower_bound_energy_j <= 0) continue;
    return {{"energy_per_iteration_j", p.lower_bound_energy_j / r.spec.iterations},
            {"savings_vs_allmax", 1 - p.lower_bound_energy_j / base.total_energy_j}};
  }
  return nullptr;
}

json SweepJson(const EmulationResult& r) {
  json sweep = json::array();
  for (const SweepPoint& p : r.sweep) {
    json savings = json::object();
    for (const auto& [name, s] : p.savings_vs_allmax) savings[name] = s;
    sweep.push_back({{"factor", p.factor},
                     {"savings_vs_allmax", savings},
                     {"lower_bound_savings", p.lower_bound_savings > 0 ? json(p.lower_bound_savings) : json(nullptr)}});
  }
  return sweep;
}

json FrontierJson(const FrontierSummary& f) {
  return {{"all_max_time_s", f.all_max_time_s},
          {"all_max_energy_j", f.all_max_energy_j},
          {"fastest_time_s", f.fastest_time_s},
          {"fastest_energy_j", f.fastest_energy_j},
          {"min_energy_time_s", f.min_energy_time_s},
          {"min_energy_j", f.min_energy_j},
          {"intrinsic_savings", 1 - f.fastest_energy_j / f.all_max_energy_j},
          {"plans", f.plans},
          {"solve_s", f.solve_s}};
}

}  // namespace

json JobJson(const EmulationResult& r) {
  const EmulationSpec& s = r.spec;
  json job = {{"name", s.job_name},
              {"schedule", ScheduleName(s.problem.schedule.kind)},
              {"stages", r.stages},
              {"microbatches", r.microbatches},
              {"chunks", s.problem.schedule.chunks},
              {"pipelines", s.pipelines},
              {"gpus_per_stage", r.gpus_per_stage},
              {"gpus", r.total_gpus},
              {"blocking_power_w", s.problem.blocking_power_w},
              {"profile_scale", s.profile_scale},
              {"iterations", s.iterations},
              {"slowdown_budget", s.slowdown_budget},
              {"max_clock_changes_per_gpu", s.max_clock_changes_per_gpu}};
  json events = EventsJson(s);
  job["stragglers"] = events["stragglers"];
  job["throttles"] = events["throttles"];
  return job;
}

json PolicyJson(const EmulationResult& r, const PolicyResult& p) {
  json j = {{"name", p.name},
            {"description", p.description},
            {"iteration_time_s", p.iteration_time_s},
            {"energy_per_iteration_j", p.energy_per_iteration_j},
            {"total_time_s", p.total_time_s},
            {"total_energy_j", p.total_energy_j},
            {"savings_vs_allmax", p.savings_vs_allmax},
            {"slowdown_vs_allmax", p.slowdown_vs_allmax},
            {"energy_per_gpu_j", GpuStats(p.energy_per_gpu_j)}};
  if (r.spec.pipelines <= kMaxPipelinesInJson) j["energy_per_pipeline_j"] = p.energy_per_pipeline_j;
  if (r.spec.iterations <= kMaxSeriesInJson) {
    j["iteration_times_s"] = p.iteration_times_s;
    j["iteration_energies_j"] = p.iteration_energies_j;
    for (size_t t = 0; t < r.tracked_gpus.size() && t < 2; ++t) {
      j[t == 0 ? "on_time_gpu_energies_j" : "straggling_gpu_energies_j"] = p.tracked_gpu_energies_j[t];
    }
  }
  return j;
}

json LoopFiguresJson(const LoopFigures& f) {
  return {{"savings_vs_allmax", f.savings_vs_allmax}, {"slowdown_vs_allmax", f.slowdown_vs_allmax}};
}

std::string EmulationJson(const EmulationResult& r) {
  json policies = json::array();
  for (const PolicyResult& p : r.policies) policies.push_back(PolicyJson(r, p));
  json tracked = json::array();
  for (const GpuId& g : r.tracked_gpus)
    tracked.push_back({{"pipeline", g.pipeline}, {"stage", g.stage}, {"gpu", g.gpu}});
  json doc = {{"schema", "perseus.emulation/v1"},
              {"job", JobJson(r)},
              {"policies", policies},
              {"lower_bound", LowerBoundJson(r)},
              {"pipeline_frontier", FrontierJson(r.frontier)},
              {"straggler_sweep", SweepJson(r)},
              {"tracked_gpus", tracked},
              {"emulation", {{"wall_s", r.emulation_s}, {"gpu_iterations_per_s", r.gpu_iterations_per_s}}}};
  if (r.closed_loop) {
    const ClosedLoopReport& c = *r.closed_loop;
    const ClosedLoopOptions& o = r.spec.closed_loop;
    doc["closed_loop"] = {
        {"options", {{"profiling_s", c.profiling_s}, {"profiling_windows", c.profiling_windows},
                     {"profiling_time_factor", o.profiling_time_factor},
                     {"profiling_energy_factor", o.profiling_energy_factor}, {"optimization_s", c.optimization_s},
                     {"plan_delivery_s", o.plan_delivery_s}, {"clock_latency_s", o.clock_latency_s},
                     {"iteration_jitter", o.iteration_jitter}, {"detection_window", o.detection_window},
                     {"detection_threshold", o.detection_threshold}, {"seed", o.seed}}},
        {"savings_vs_allmax", c.result.savings_vs_allmax},
        {"slowdown_vs_allmax", c.result.slowdown_vs_allmax},
        {"without_profiling", LoopFiguresJson(c.without_profiling)},
        {"without_clock_latency", LoopFiguresJson(c.without_clock_latency)},
        {"instant_detection", LoopFiguresJson(c.instant_detection)},
        {"profiling_iterations", c.profiling_iterations},
        {"optimizing_iterations", c.optimizing_iterations},
        {"off_ideal_iterations", c.off_ideal_iterations},
        {"detections", c.detections},
        {"plan_switches", c.plan_switches},
        {"clock_changes_per_gpu_iteration", c.clock_changes_per_gpu_iteration},
        {"clock_change_limit", c.clock_change_limit},
        {"clock_runs_moved", c.clock_change_limit >= 0 ? json(c.clock_runs_moved) : json(nullptr)},
        {"power_cap",
         o.power_cap_w > 0 ? json{{"average_w", o.power_cap_w}, {"window_s", o.power_cap_window_s},
                                  {"running_power_w", c.running_power_w > 0 ? json(c.running_power_w) : json(nullptr)},
                                  {"worst_window_power_w",
                                   c.cap_windows > 0 ? json(c.worst_window_power_w) : json(nullptr)},
                                  {"windows", c.cap_windows},
                                  {"windows_over", c.cap_windows_over}}
                           : json(nullptr)},
        {"without_clock_change_limit",
         c.without_clock_change_limit ? LoopFiguresJson(*c.without_clock_change_limit) : nlohmann::json(nullptr)}};
  }
  return doc.dump(2) + "\n";
}

std::string GpuEnergyCsv(const EmulationResult& r) {
  if (r.total_gpus > kMaxGpusInCsv) return "";
  std::string out = "policy,pipeline,stage,gpu,energy_j\n";
  char line[160];
  for (const PolicyResult& p : r.policies) {
    for (size_t k = 0; k < p.energy_per_gpu_j.size(); ++k) {
      const int gpu = static_cast<int>(k % r.gpus_per_stage);
      const int stage = static_cast<int>(k / r.gpus_per_stage % r.stages);
      const int pipeline = static_cast<int>(k / (static_cast<size_t>(r.gpus_per_stage) * r.stages));
      std::snprintf(line, sizeof line, "%s,%d,%d,%d,%.6f\n", p.name.c_str(), pipeline, stage, gpu,
                    p.energy_per_gpu_j[k]);
      out += line;
    }
  }
  return out;
}

}  // namespace perseus::emulator
