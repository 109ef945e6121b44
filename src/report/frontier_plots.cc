// Frontier and timeline plots.
#include "report/frontier_plots.h"

#include <algorithm>
#include <cstdio>

#include "report/gantt_chart.h"
#include "report/line_chart.h"

namespace perseus::report {
namespace {

std::string Percent(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f%%", v * 100);
  return buf;
}

}  // namespace

std::string RenderFrontierSvg(const Frontier& frontier, const std::string& title) {
  LineChart chart;
  chart.title = title;
  chart.x_label = "iteration time (s)";
  chart.y_label = "energy per iteration (J)";
  Series plans{"frontier plans", {}, "#1f77b4", true, true, false};
  Series bound{"lower bound (convex relaxation)", {}, "#7f7f7f", false, true, true};
  for (const FrontierPlan& p : frontier.plans) {
    plans.points.emplace_back(p.time_s, p.energy_j);
    if (p.lower_bound_j > 0) bound.points.emplace_back(p.time_s, p.lower_bound_j);
  }
  if (plans.points.size() > 400) plans.markers = false;
  chart.series.push_back(std::move(plans));
  if (!bound.points.empty()) chart.series.push_back(std::move(bound));
  Series all_max{"all GPUs at max frequency", {{frontier.all_max.time_s, frontier.all_max.energy_j}}, "#d62728",
                 true, false, false};
  chart.series.push_back(std::move(all_max));
  chart.annotations.push_back({frontier.all_max.time_s, frontier.all_max.energy_j, "all-max"});
  if (const FrontierPlan* p = frontier.NoSlowdownPlan()) {
    chart.annotations.push_back(
        {p->time_s, p->energy_j, "no slowdown: " + Percent(1 - p->energy_j / frontier.all_max.energy_j) + " less"});
  }
  if (!frontier.plans.empty()) {
    const FrontierPlan& m = frontier.MinEnergyPlan();
    chart.annotations.push_back({m.time_s, m.energy_j, "min energy (T*)"});
  }
  return RenderLineChart(chart);
}

std::string RenderTimelineSvg(const Problem& problem, const FrontierPlan& plan, const std::string& title) {
  GanttChart chart;
  chart.title = title;
  chart.x_label = "time (s)";
  chart.value_label = "SM frequency (MHz)";
  std::vector<double> start = EarliestStarts(problem, plan.choice);
  int lo = 1 << 30, hi = 0;
  for (int s = 0; s < problem.num_stages(); ++s) chart.row_names.push_back("stage " + std::to_string(s));
  for (int i = 0; i < problem.num_nodes(); ++i) {
    const ProblemNode& n = problem.nodes[i];
    const FreqPoint& o = n.options[plan.choice[i]];
    std::string label = std::string(InstructionSymbol(n.comp.instruction)) + std::to_string(n.comp.microbatch);
    chart.boxes.push_back({n.stage, start[i], start[i] + o.time_s, label, static_cast<double>(o.freq_mhz), ""});
    for (const FreqPoint& opt : n.options) lo = std::min(lo, opt.freq_mhz), hi = std::max(hi, opt.freq_mhz);
  }
  chart.value_min = lo;
  chart.value_max = hi;
  return RenderGanttChart(chart);
}

}  // namespace perseus::report
