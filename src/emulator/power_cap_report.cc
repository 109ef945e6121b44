#include "emulator/power_cap_report.h"

#include <algorithm>
#include <cstdio>
#include <set>

#include "carbon/knob_options.h"
#include "report/line_chart.h"

namespace perseus::emulator {

namespace {

// A baseline's setting: one plan run by every pipeline.
control::JobSetting Uniform(double time_s, double energy_j, const Problem& problem,
                            const std::vector<double>& slowdowns) {
  return control::UniformSetting(time_s, energy_j, problem.pipeline_blocking_power_w(), slowdowns);
}

std::vector<control::JobSetting> GlobalClockSettings(const Problem& problem, const std::vector<double>& slowdowns) {
  std::vector<control::JobSetting> out;
  for (const carbon::KnobOption& o : carbon::GlobalClockKnobs(problem).pareto) {
    out.push_back(Uniform(o.time_s, o.energy_j, problem, slowdowns));
  }
  return out;
}

double PowerPerGpuW(const Problem& problem, const FreqPoint& option) {
  return option.energy_j / option.time_s / problem.gpus_per_stage;
}

std::vector<control::JobSetting> PowerLimitSettings(const Problem& problem, const std::vector<double>& slowdowns) {
  std::set<double> limits;  // every limit at which some computation's clock changes
  for (const ProblemNode& node : problem.nodes) {
    for (const FreqPoint& o : node.options) limits.insert(PowerPerGpuW(problem, o));
  }
  std::vector<control::JobSetting> out;
  for (double limit : limits) {
    const PlanCost cost = EvaluatePlan(problem, PlanForPowerLimit(problem, limit));
    out.push_back(Uniform(cost.time_s, cost.energy_j, problem, slowdowns));
  }
  return out;
}

CapPoint PointAt(const std::vector<control::JobSetting>& settings, double cap_w, double all_max_time_s) {
  const control::CappedPlan plan = control::PlanUnderPowerCap(settings, {cap_w, 0});
  return {cap_w, plan.feasible, plan.IterationTimeS() / all_max_time_s - 1, plan.PowerW()};
}

double LeastPowerW(const std::vector<control::JobSetting>& settings) {
  double least = settings.front().power_w;
  for (const control::JobSetting& s : settings) least = std::min(least, s.power_w);
  return least;
}

std::string Percent(double fraction) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.2f%%", 100 * fraction);
  return buf;
}

}  // namespace

PlanChoice PlanForPowerLimit(const Problem& problem, double limit_w_per_gpu) {
  PlanChoice choice(problem.nodes.size());
  for (size_t i = 0; i < problem.nodes.size(); ++i) {
    const std::vector<FreqPoint>& options = problem.nodes[i].options;  // highest clock first
    int k = 0;
    while (k + 1 < static_cast<int>(options.size()) && PowerPerGpuW(problem, options[k]) > limit_w_per_gpu) ++k;
    choice[i] = k;
  }
  return choice;
}

PowerCapReport EvaluatePowerCaps(const Problem& problem, const Frontier& frontier,
                                 const std::vector<double>& slowdowns, const std::string& job, int caps) {
  PowerCapReport r;
  r.job = job;
  r.pipelines = static_cast<int>(slowdowns.size());
  for (size_t p = 0; p < slowdowns.size(); ++p) {
    if (slowdowns[p] > 1) r.stragglers.emplace_back(static_cast<int>(p), slowdowns[p]);
  }
  const control::JobSetting all_max = Uniform(frontier.all_max.time_s, frontier.all_max.energy_j, problem, slowdowns);
  r.all_max_time_s = all_max.iteration_time_s;
  r.all_max_power_w = all_max.power_w;
  const double pipeline_blocking_w = problem.pipeline_blocking_power_w();
  r.curves = {{"perseus (frontier)",
               control::CapSettings(frontier, pipeline_blocking_w, slowdowns, control::CeilingPlans(problem, frontier)),
               {}},
              {"one SM clock for all GPUs", GlobalClockSettings(problem, slowdowns), {}},
              {"one power limit for all GPUs", PowerLimitSettings(problem, slowdowns), {}}};
  r.lowest_cap_w = r.all_max_power_w;
  for (const CapCurve& c : r.curves) r.lowest_cap_w = std::min(r.lowest_cap_w, LeastPowerW(c.settings));
  for (int i = 0; i < caps; ++i) {
    const double cap_w = r.all_max_power_w - (r.all_max_power_w - r.lowest_cap_w) * i / (caps - 1);
    for (CapCurve& c : r.curves) c.points.push_back(PointAt(c.settings, cap_w, r.all_max_time_s));
  }
  return r;
}

std::string PowerCapMarkdown(const PowerCapReport& r) {
  char buf[512];
  std::string md = "# Running under a power cap: " + r.job + "\n\n";
  std::snprintf(buf, sizeof buf,
                "%d pipeline(s); all-max clocks draw %.0f W on average at %.4f s per iteration. Each row is an average "
                "power cap for the whole job; each column the slowdown (vs all-max) at which that approach meets it "
                "(mixing two of its settings in time), or \"-\" when it cannot.\n\n",
                r.pipelines, r.all_max_power_w, r.all_max_time_s);
  md += buf;
  for (const auto& [pipeline, slowdown] : r.stragglers) {
    std::snprintf(buf, sizeof buf, "Pipeline %d straggles (x%.3g): the others wait for it at blocking power, or, under "
                  "perseus, run slower plans.\n\n", pipeline, slowdown);
    md += buf;
  }
  md += "| cap (W) | cap (% of all-max) |";
  for (const CapCurve& c : r.curves) md += " " + c.name + " |";
  md += "\n| --- | --- |";
  for (size_t i = 0; i < r.curves.size(); ++i) md += " --- |";
  md += "\n";
  for (size_t i = 0; i < r.curves.front().points.size(); ++i) {
    const double cap_w = r.curves.front().points[i].cap_w;
    std::snprintf(buf, sizeof buf, "| %.0f | %.1f%% |", cap_w, 100 * cap_w / r.all_max_power_w);
    md += buf;
    for (const CapCurve& c : r.curves) md += " " + (c.points[i].reachable ? Percent(c.points[i].slowdown) : "-") + " |";
    md += "\n";
  }
  return md;
}

std::string PowerCapCsv(const PowerCapReport& r) {
  std::string csv = "approach,cap_w,reachable,slowdown,power_w\n";
  char buf[256];
  for (const CapCurve& c : r.curves) {
    for (const CapPoint& p : c.points) {
      std::snprintf(buf, sizeof buf, "%s,%.3f,%d,%.6f,%.3f\n", c.name.c_str(), p.cap_w, p.reachable ? 1 : 0,
                    p.slowdown, p.power_w);
      csv += buf;
    }
  }
  return csv;
}

std::string PowerCapSvg(const PowerCapReport& r) {
  report::LineChart chart;
  chart.title = "Slowdown under a power cap: " + r.job;
  chart.x_label = "average power cap, whole job (W)";
  chart.y_label = "slowdown vs all-max (%)";
  for (const CapCurve& c : r.curves) {
    report::Series s{c.name, {}, "", true, true, false};
    for (const CapPoint& p : c.points) {
      if (p.reachable) s.points.emplace_back(p.cap_w, 100 * p.slowdown);
    }
    chart.series.push_back(std::move(s));
  }
  return report::RenderLineChart(chart);
}

}  // namespace perseus::emulator
