// The emulation loop.
#include "emulator/emulation_loop.h"

#include <algorithm>
#include <cstdio>
#include <map>

#include "emulator/job_evaluation.h"
#include "emulator/pipeline_run.h"

namespace perseus::emulator {
namespace {

// Everything about an iteration under one set of conditions. Regimes are
// shared by conditions with the same classes and counts; which pipeline is in
// which class comes from the iteration's own JobConditions.
struct Regime {
  JobConditions conditions;
  std::vector<PipelineRun> runs;  // per class
  JobOutcome outcome;
  std::vector<std::vector<double>> gpu_j;  // per class, per GPU of the pipeline
  std::vector<double> pipeline_j;          // per class
  double lower_bound_j = -1;               // job, -1 if not computable
};

Regime MakeRegime(const Problem& problem, Policy& policy, JobConditions conditions) {
  Regime r;
  r.conditions = std::move(conditions);
  Decision d = policy.Decide(r.conditions);
  const size_t classes = r.conditions.classes.size();
  for (size_t c = 0; c < classes; ++c) r.runs.push_back(RunPipeline(problem, d.plans[c], r.conditions.classes[c]));
  std::vector<const PipelineRun*> ptrs;
  for (const PipelineRun& run : r.runs) ptrs.push_back(&run);
  r.outcome = CombineRuns(problem, r.conditions, ptrs);
  const double block_w = BlockingPowerPerGpuW(problem);
  bool lb_ok = d.lower_bound_j.size() == classes;
  double lb = 0;
  for (size_t c = 0; c < classes; ++c) {
    const PipelineRun& run = r.runs[c];
    std::vector<double> gpu(run.busy_time_s.size());
    for (size_t k = 0; k < gpu.size(); ++k) gpu[k] = GpuEnergyJ(run, static_cast<int>(k), r.outcome.time_s, block_w);
    r.gpu_j.push_back(std::move(gpu));
    r.pipeline_j.push_back(PipelineEnergyJ(run, r.outcome.time_s, block_w));
    if (!lb_ok || r.conditions.pipeline_count[c] == 0) continue;
    if (d.lower_bound_j[c] <= 0) {
      lb_ok = false;
      continue;
    }
    const double idle_s = static_cast<double>(run.busy_time_s.size()) * (r.outcome.time_s - run.time_s);
    lb += r.conditions.pipeline_count[c] * (d.lower_bound_j[c] + block_w * idle_s);
  }
  if (lb_ok) r.lower_bound_j = lb;
  return r;
}

PipelineTimeline MakeTimeline(const Problem& problem, const Regime& r, int c, int pipeline, const std::string& policy,
                              int iteration) {
  const PipelineRun& run = r.runs[c];
  PipelineTimeline t;
  char title[256];
  std::snprintf(title, sizeof title, "%s: pipeline %d in iteration %d (%s), job iteration %.4g s", policy.c_str(),
                pipeline, iteration, r.conditions.classes[c].nominal() ? "on time" : "straggling", r.outcome.time_s);
  t.policy = policy;
  t.title = title;
  t.stages = problem.num_stages();
  t.iteration_time_s = r.outcome.time_s;
  for (int i = 0; i < problem.num_nodes(); ++i) {
    const ProblemNode& n = problem.nodes[i];
    std::string label = std::string(InstructionSymbol(n.comp.instruction)) + std::to_string(n.comp.microbatch);
    t.boxes.push_back({n.stage, run.start_s[i], run.start_s[i] + run.duration_s[i], run.freq_mhz[i], label});
    t.min_freq_mhz =
        t.min_freq_mhz == 0 ? n.options.back().freq_mhz : std::min(t.min_freq_mhz, n.options.back().freq_mhz);
    t.max_freq_mhz = std::max(t.max_freq_mhz, n.options.front().freq_mhz);
  }
  return t;
}

class Loop {
 public:
  Loop(const Problem& problem, Policy& policy, const LoopSpec& spec)
      : problem_(problem),
        policy_(policy),
        spec_(spec),
        gpus_per_pipeline_(problem.num_stages() * problem.gpus_per_stage) {}

  LoopResult Run() {
    PolicyResult& r = out_.result;
    r.name = policy_.name();
    r.description = policy_.description();
    if (spec_.per_gpu_totals) {
      r.energy_per_gpu_j.assign(static_cast<size_t>(spec_.pipelines) * gpus_per_pipeline_, 0.0);
      r.energy_per_pipeline_j.assign(spec_.pipelines, 0.0);
    }
    out_.lower_bound_valid = true;
    std::vector<int> active;
    for (int it = 0; it < spec_.iterations; ++it) {
      std::vector<int> now = ActiveEvents(spec_.stragglers, spec_.throttles, it);
      if (it == 0 || now != active) {
        Flush();
        active = std::move(now);
        now_ = ConditionsAt(spec_.pipelines, spec_.stragglers, spec_.throttles, it);
        current_ = &RegimeFor(now_);
      }
      Record(it);
    }
    Flush();
    r.iteration_time_s = r.total_time_s / spec_.iterations;
    r.energy_per_iteration_j = r.total_energy_j / spec_.iterations;
    if (!out_.lower_bound_valid) r.lower_bound_energy_j = 0;
    return std::move(out_);
  }

 private:
  const Regime& RegimeFor(const JobConditions& conditions) {
    std::string key = conditions.Key();
    auto it = regimes_.find(key);
    if (it == regimes_.end()) it = regimes_.emplace(key, MakeRegime(problem_, policy_, conditions)).first;
    return it->second;
  }

  void Record(int iteration) {
    PolicyResult& r = out_.result;
    const Regime& g = *current_;
    r.total_time_s += g.outcome.time_s;
    r.total_energy_j += g.outcome.energy_j;
    r.iteration_times_s.push_back(g.outcome.time_s);
    r.iteration_energies_j.push_back(g.outcome.energy_j);
    for (size_t t = 0; t < spec_.tracked.size() && t < 2; ++t) {
      const GpuId& id = spec_.tracked[t];
      const int k = id.stage * problem_.gpus_per_stage + id.gpu;
      r.tracked_gpu_energies_j[t].push_back(g.gpu_j[now_.class_of[id.pipeline]][k]);
    }
    if (g.lower_bound_j < 0) out_.lower_bound_valid = false;
    r.lower_bound_energy_j += g.lower_bound_j;
    if (iteration == spec_.timeline_iteration) {
      const int p = spec_.timeline_pipeline;
      out_.timeline = MakeTimeline(problem_, g, now_.class_of[p], p, r.name, iteration);
    }
    ++pending_;
  }

  // Adds the per-GPU energies of the iterations since the last flush.
  void Flush() {
    if (pending_ == 0 || !spec_.per_gpu_totals) {
      pending_ = 0;
      return;
    }
    PolicyResult& r = out_.result;
    const Regime& g = *current_;
    for (int p = 0; p < spec_.pipelines; ++p) {
      const int c = now_.class_of[p];
      const std::vector<double>& gpu = g.gpu_j[c];
      double* dst = r.energy_per_gpu_j.data() + static_cast<size_t>(p) * gpus_per_pipeline_;
      for (int k = 0; k < gpus_per_pipeline_; ++k) dst[k] += pending_ * gpu[k];
      r.energy_per_pipeline_j[p] += pending_ * g.pipeline_j[c];
    }
    pending_ = 0;
  }

  const Problem& problem_;
  Policy& policy_;
  const LoopSpec& spec_;
  const int gpus_per_pipeline_;
  std::map<std::string, Regime> regimes_;
  JobConditions now_;  // of the current iteration
  const Regime* current_ = nullptr;
  int pending_ = 0;
  LoopResult out_;
};

}  // namespace

LoopResult RunPolicyLoop(const Problem& problem, Policy& policy, const LoopSpec& spec) {
  return Loop(problem, policy, spec).Run();
}

}  // namespace perseus::emulator
