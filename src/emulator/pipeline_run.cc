// Replaying one pipeline's iteration.
#include "emulator/pipeline_run.h"

#include <algorithm>

namespace perseus::emulator {
namespace {

// The option a GPU capped at `max_freq_mhz` runs instead of `planned`
// (options are sorted highest frequency first).
int CappedOption(const std::vector<FreqPoint>& options, int planned, int max_freq_mhz) {
  if (options[planned].freq_mhz <= max_freq_mhz) return planned;
  for (int k = planned; k < static_cast<int>(options.size()); ++k) {
    if (options[k].freq_mhz <= max_freq_mhz) return k;
  }
  return static_cast<int>(options.size()) - 1;
}

}  // namespace

PipelineRun RunPipeline(const Problem& problem, const PlanChoice& choice, const PipelineConditions& conditions,
                        double clock_latency_s) {
  const int stages = problem.num_stages(), gpus = problem.gpus_per_stage, n = problem.num_nodes();
  const double f = conditions.slowdown;
  PipelineRun run;
  run.start_s.assign(n, 0.0);
  run.duration_s.assign(n, 0.0);
  run.freq_mhz.assign(n, 0);
  std::vector<double> stage_time_s(stages, 0.0), stage_energy_j(stages, 0.0);
  std::vector<double> cap_time_s(conditions.caps.size(), 0.0), cap_energy_j(conditions.caps.size(), 0.0);
  for (int i = 0; i < n; ++i) {  // nodes are topologically ordered
    const ProblemNode& node = problem.nodes[i];
    const FreqPoint& planned = node.options[choice[i]];
    // The latency's extra time and energy, not stretched by the slowdown.
    const FreqPoint late = OptionWithClockLatency(problem, choice, i, clock_latency_s);
    const double busy_s = planned.time_s * f + (late.time_s - planned.time_s);
    double group_s = busy_s;
    run.freq_mhz[i] = planned.freq_mhz;
    stage_time_s[node.stage] += busy_s;
    stage_energy_j[node.stage] += (planned.energy_j * f + (late.energy_j - planned.energy_j)) / gpus;
    for (size_t c = 0; c < conditions.caps.size(); ++c) {
      if (conditions.caps[c].stage != node.stage) continue;
      const FreqPoint& capped = node.options[CappedOption(node.options, choice[i], conditions.caps[c].max_freq_mhz)];
      cap_time_s[c] += capped.time_s * f;
      cap_energy_j[c] += capped.energy_j * f / gpus;
      group_s = std::max(group_s, capped.time_s * f);
      run.freq_mhz[i] = std::min(run.freq_mhz[i], capped.freq_mhz);
    }
    run.duration_s[i] = group_s;
    const double finish_s = run.start_s[i] + group_s;
    run.time_s = std::max(run.time_s, finish_s);
    for (int v : node.succs) run.start_s[v] = std::max(run.start_s[v], finish_s);
  }
  run.busy_time_s.resize(static_cast<size_t>(stages) * gpus);
  run.busy_energy_j.resize(run.busy_time_s.size());
  for (int s = 0; s < stages; ++s) {
    std::fill_n(run.busy_time_s.begin() + s * gpus, gpus, stage_time_s[s]);
    std::fill_n(run.busy_energy_j.begin() + s * gpus, gpus, stage_energy_j[s]);
  }
  for (size_t c = 0; c < conditions.caps.size(); ++c) {
    const int k = conditions.caps[c].stage * gpus + conditions.caps[c].gpu;
    run.busy_time_s[k] = cap_time_s[c];
    run.busy_energy_j[k] = cap_energy_j[c];
  }
  for (size_t k = 0; k < run.busy_time_s.size(); ++k) {
    run.total_busy_time_s += run.busy_time_s[k];
    run.total_busy_energy_j += run.busy_energy_j[k];
  }
  return run;
}

}  // namespace perseus::emulator
