// Emulation plots.
#include "emulator/report_plots.h"

#include <algorithm>
#include <cstdio>

#include "report/color_scale.h"
#include "report/gantt_chart.h"

namespace perseus::emulator {
namespace {

using report::Series;

std::vector<std::pair<double, double>> Thinned(const std::vector<double>& y) {
  std::vector<std::pair<double, double>> points;
  const size_t stride = std::max<size_t>(1, (y.size() + kMaxPlotPoints - 1) / kMaxPlotPoints);
  for (size_t i = 0; i < y.size(); i += stride) points.emplace_back(static_cast<double>(i), y[i]);
  if (!y.empty() && (y.size() - 1) % stride != 0) points.emplace_back(static_cast<double>(y.size() - 1), y.back());
  return points;
}

std::string GpuName(const GpuId& g) {
  char buf[96];
  std::snprintf(buf, sizeof buf, "pipeline %d/stage %d/gpu %d", g.pipeline, g.stage, g.gpu);
  return buf;
}

// " (+4.9% time)" when policy k's savings cost iteration time somewhere in the
// sweep (Zeus's budgeted clocks do), so the legend does not compare unequal speeds silently.
std::string SlowdownNote(const std::vector<SweepPoint>& sweep, size_t k) {
  double worst = 0;
  for (const SweepPoint& p : sweep) {
    if (k < p.slowdowns_vs_allmax.size()) worst = std::max(worst, p.slowdowns_vs_allmax[k]);
  }
  if (worst < 0.001) return "";
  char note[48];
  std::snprintf(note, sizeof note, " (up to +%.1f%% time)", 100 * worst);
  return note;
}

}  // namespace

std::string SavingsVsStragglerSvg(const std::vector<SweepPoint>& sweep, const std::string& title,
                                  const std::vector<report::Annotation>& annotations) {
  report::LineChart chart;
  chart.title = title;
  chart.x_label = "straggler slowdown factor";
  chart.y_label = "energy savings vs AllMax (%)";
  chart.annotations = annotations;
  if (sweep.empty()) return report::RenderLineChart(chart);
  for (size_t k = 0; k < sweep.front().savings_vs_allmax.size(); ++k) {
    const std::string& name = sweep.front().savings_vs_allmax[k].first;
    if (name == "allmax") continue;
    Series s{name + SlowdownNote(sweep, k), {}, "", true, true, false};
    for (const SweepPoint& p : sweep) s.points.emplace_back(p.factor, 100 * p.savings_vs_allmax[k].second);
    chart.series.push_back(std::move(s));
  }
  Series bound{"ideal (lower bound)", {}, "#888888", false, true, true};
  for (const SweepPoint& p : sweep) {
    if (p.lower_bound_savings > 0) bound.points.emplace_back(p.factor, 100 * p.lower_bound_savings);
  }
  if (!bound.points.empty()) chart.series.push_back(std::move(bound));
  return report::RenderLineChart(chart);
}

std::string EnergyPerGpuSvg(const EmulationResult& r) {
  report::LineChart chart;
  chart.title = "Energy of one GPU per iteration (solid: " + GpuName(r.tracked_gpus[0]) + ", on time";
  if (r.tracked_gpus.size() > 1) chart.title += "; dashed: " + GpuName(r.tracked_gpus[1]);
  chart.title += ")";
  chart.width_px = 1000;
  chart.x_label = "iteration";
  chart.y_label = "energy per GPU per iteration (J)";
  for (size_t t = 0; t < r.tracked_gpus.size() && t < 2; ++t) {
    for (size_t k = 0; k < r.policies.size(); ++k) {
      const PolicyResult& p = r.policies[k];
      if (t == 1 && p.name != "allmax" && p.name != "perseus") continue;
      Series s{p.name + (t == 0 ? " (on time)" : " (straggling)"),
               Thinned(p.tracked_gpu_energies_j[t]),
               report::CategoricalColor(k),
               false,
               true,
               t == 1};
      chart.series.push_back(std::move(s));
    }
  }
  return report::RenderLineChart(chart);
}

std::string PoliciesSvg(const EmulationResult& r) {
  report::LineChart chart;
  chart.title = "Policies on the time-energy plane (whole job, mean per iteration)";
  chart.x_label = "iteration time (s)";
  chart.y_label = "energy per iteration (MJ)";
  for (size_t k = 0; k < r.policies.size(); ++k) {
    const PolicyResult& p = r.policies[k];
    chart.series.push_back(Series{p.name,
                                  {{p.iteration_time_s, p.energy_per_iteration_j / 1e6}},
                                  report::CategoricalColor(k),
                                  true,
                                  false,
                                  false});
  }
  return report::RenderLineChart(chart);
}

std::string TimelineSvg(const PipelineTimeline& t) {
  report::GanttChart chart;
  chart.title = t.title;
  chart.x_label = "time (s)";
  chart.value_label = "SM frequency (MHz)";
  for (int s = 0; s < t.stages; ++s) chart.row_names.push_back("stage " + std::to_string(s));
  for (const TimelineBox& b : t.boxes) {
    chart.boxes.push_back({b.stage, b.start_s, b.end_s, b.label, static_cast<double>(b.freq_mhz), ""});
  }
  chart.value_min = t.min_freq_mhz;
  chart.value_max = t.max_freq_mhz;
  return report::RenderGanttChart(chart);
}

}  // namespace perseus::emulator
