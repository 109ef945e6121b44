// The closed loop in virtual time.
#include "emulator/closed_loop.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <random>
#include <string>
#include <unordered_map>

#include "control/plan_assignment.h"
#include "control/power_cap.h"
#include "control/straggler_detection.h"
#include "emulator/job_evaluation.h"
#include "emulator/pipeline_run.h"

namespace perseus::emulator {
namespace {

constexpr int kAllMax = -1;  // a pipeline's plan before the frontier is deployed

enum class Phase { kProfiling, kOptimizing, kRunning };

class ClosedLoop {
 public:
  ClosedLoop(const Problem& problem, const Frontier& frontier, const LoopSpec& loop, const ClosedLoopOptions& o,
             double optimization_s)
      : problem_(problem),
        frontier_(frontier),
        loop_(loop),
        o_(o),
        optimization_s_(optimization_s),
        block_w_(BlockingPowerPerGpuW(problem)),
        rng_(o.seed),
        held_(loop.pipelines, kAllMax),
        assigned_(loop.pipelines, kAllMax),
        samples_(loop.pipelines),
        counts_(loop.pipelines) {
    if (o.power_cap_w > 0 && !frontier.plans.empty()) {
      ceilings_ = control::CeilingPlans(problem, frontier);
      for (const control::CeilingPlan& c : ceilings_) {
        ceiling_choices_.push_back(WithClockCeiling(problem, frontier.plans.back().choice, c.clock_ceiling_mhz));
      }
    }
  }

  ClosedLoopReport Run() {
    PolicyResult& r = out_.result;
    r.name = "perseus-closed-loop";
    r.description = "Perseus as the server runs it: online profiling, detection from noisy iteration times, plan "
                    "delivery and clock-switch latency";
    out_.optimization_s = optimization_s_;
    double running_gpu_iterations = 0;
    for (int it = 0; it < loop_.iterations; ++it) {
      const Phase phase = PhaseAt(now_s_);
      if (phase == Phase::kRunning && !deployed_) Deploy();
      DeliverDue();
      const JobConditions conditions = ConditionsAt(loop_.pipelines, loop_.stragglers, loop_.throttles, it);
      const double time_s = Iteration(phase, conditions);
      if (phase == Phase::kProfiling) ++out_.profiling_iterations;
      if (phase == Phase::kOptimizing) ++out_.optimizing_iterations;
      if (phase == Phase::kRunning) {
        CountChanges(conditions, &running_gpu_iterations);
        Detect();
        MeasurePower(time_s);
      }
      now_s_ += time_s;
      if (phase == Phase::kRunning && o_.power_cap_w > 0) Assign();  // the cap window's clock moves on
    }
    Totals();
    FinishCapWindow(/*run_ended=*/true);
    if (running_gpu_iterations > 0) out_.clock_changes_per_gpu_iteration /= running_gpu_iterations;
    return std::move(out_);
  }

 private:
  Phase PhaseAt(double t) const {
    // A phase that ends exactly at an iteration's end (within rounding) ends there.
    if (t < o_.profiling_s * (1 - 1e-9)) return Phase::kProfiling;
    if (t < (o_.profiling_s + optimization_s_) * (1 - 1e-9)) return Phase::kOptimizing;
    return Phase::kRunning;
  }

  // Plan ids: kAllMax, frontier plans, then the ceiling plans (a power cap
  // below the frontier's least power): plans.size() + index in ceilings_.
  int NumFrontierPlans() const { return static_cast<int>(frontier_.plans.size()); }
  const PlanChoice& Choice(int plan) const {
    if (plan == kAllMax) return frontier_.all_max.choice;
    return plan < NumFrontierPlans() ? frontier_.plans[plan].choice : ceiling_choices_[plan - NumFrontierPlans()];
  }
  double PredictedTime(int plan) const {
    if (plan == kAllMax) return frontier_.all_max.time_s;
    return plan < NumFrontierPlans() ? frontier_.plans[plan].time_s : ceilings_[plan - NumFrontierPlans()].time_s;
  }
  double PredictedPowerW(int plan) const {
    if (plan == kAllMax) return frontier_.all_max.energy_j / frontier_.all_max.time_s;
    if (plan < NumFrontierPlans()) return frontier_.plans[plan].energy_j / frontier_.plans[plan].time_s;
    const control::CeilingPlan& c = ceilings_[plan - NumFrontierPlans()];
    return c.energy_j / c.time_s;
  }

  const PipelineRun& RunFor(int plan, const PipelineConditions& cond) {
    const std::string key = std::to_string(plan) + "|" + cond.Key();
    auto it = runs_.find(key);
    if (it == runs_.end()) it = runs_.emplace(key, RunPipeline(problem_, Choice(plan), cond, o_.clock_latency_s)).first;
    return it->second;
  }

  // The optimisation is done: every pipeline gets the rule's plan.
  void Deploy() {
    deployed_ = true;
    Assign();
  }

  void Assign() {
    std::vector<control::PipelinePace> paces(loop_.pipelines);
    for (const control::Straggler& s : stragglers_) {
      if (s.pipeline < loop_.pipelines) paces[s.pipeline].slowdown = s.slowdown;
    }
    std::vector<int> plans = control::AssignPipelinePlans(frontier_, paces);
    if (o_.power_cap_w > 0) ApplyPowerCap(paces, &plans);
    if (plans == assigned_) return;
    assigned_ = plans;
    pending_.push_back({now_s_ + o_.plan_delivery_s, std::move(plans)});
  }

  // As the server (JobService::ApplyPowerCap): each pipeline runs the slower
  // of the rule's plan and the cap's current setting.
  void ApplyPowerCap(const std::vector<control::PipelinePace>& paces, std::vector<int>* plans) const {
    std::vector<double> slowdowns;
    for (const control::PipelinePace& p : paces) slowdowns.push_back(p.slowdown);
    const control::CappedPlan capped = control::PlanUnderPowerCap(
        control::CapSettings(frontier_, problem_.pipeline_blocking_power_w(), slowdowns, ceilings_),
        {o_.power_cap_w, 0}, correction_);
    const bool fast = capped.mix.fast == capped.mix.slow ||
                      control::FastPartOfWindow(capped.mix.fast_share, o_.power_cap_window_s, now_s_);
    const control::JobSetting& setting = capped.settings[fast ? capped.mix.fast : capped.mix.slow];
    for (size_t i = 0; i < plans->size(); ++i) (*plans)[i] = std::max((*plans)[i], setting.plan_index[i]);
    if (setting.clock_ceiling_mhz <= 0) return;
    for (size_t k = 0; k < ceilings_.size(); ++k) {
      if (ceilings_[k].clock_ceiling_mhz != setting.clock_ceiling_mhz) continue;
      std::fill(plans->begin(), plans->end(), NumFrontierPlans() + static_cast<int>(k));
    }
  }

  // The power the last running iteration drew, against the held plans'
  // prediction (the server's correction), and the cap windows' averages.
  void MeasurePower(double time_s) {
    const double energy_j = out_.result.iteration_energies_j.back();
    running_energy_j_ += energy_j;
    running_time_s_ += time_s;
    if (o_.power_cap_w <= 0) return;
    double predicted_w = 0;
    for (int p = 0; p < loop_.pipelines; ++p) {
      predicted_w += PredictedPowerW(held_[p]);
    }
    if (predicted_w > 0) correction_ = energy_j / time_s / predicted_w;
    const double window = std::floor(now_s_ / o_.power_cap_window_s);
    if (window != cap_window_) FinishCapWindow(/*run_ended=*/false);
    cap_window_ = window;
    window_energy_j_ += energy_j;
    window_time_s_ += time_s;
  }

  // Closes the cap window being measured; it counts when it ran at least
  // half a window (the first and last may be partial). The job stops within
  // the last one, so that one's average is over the whole window (a mix
  // that ran its fast part first would otherwise read over the cap).
  void FinishCapWindow(bool run_ended) {
    out_.running_power_w = running_time_s_ > 0 ? running_energy_j_ / running_time_s_ : 0;
    if (window_time_s_ >= 0.5 * o_.power_cap_window_s) {
      const double w = window_energy_j_ / (run_ended ? std::max(window_time_s_, o_.power_cap_window_s) : window_time_s_);
      ++out_.cap_windows;
      out_.cap_windows_over += w > o_.power_cap_w * 1.01;
      out_.worst_window_power_w = std::max(out_.worst_window_power_w, w);
    }
    window_energy_j_ = window_time_s_ = 0;
  }

  void DeliverDue() {
    while (!pending_.empty() && pending_.front().first <= now_s_) {
      const std::vector<int>& plans = pending_.front().second;
      for (int p = 0; p < loop_.pipelines; ++p) {
        if (plans[p] == held_[p]) continue;
        held_[p] = plans[p];
        samples_[p].clear();  // the server keeps only samples of the plan in use
        ++out_.plan_switches;
      }
      pending_.erase(pending_.begin());
    }
  }

  // Replays the iteration; returns its time. Profiling and optimising run all-max.
  double Iteration(Phase phase, const JobConditions& conditions) {
    std::vector<const PipelineRun*> runs(loop_.pipelines);
    double time_s = 0;
    for (int p = 0; p < loop_.pipelines; ++p) {
      const int plan = phase == Phase::kRunning ? held_[p] : kAllMax;
      runs[p] = &RunFor(plan, conditions.classes[conditions.class_of[p]]);
      time_s = std::max(time_s, runs[p]->time_s);
    }
    double energy_j = 0;
    for (int p = 0; p < loop_.pipelines; ++p) energy_j += PipelineEnergyJ(*runs[p], time_s, block_w_);
    const double energy_factor = phase == Phase::kProfiling ? o_.profiling_energy_factor : 1.0;
    for (int p = 0; p < loop_.pipelines; ++p) {
      Tally& tally = counts_[p][runs[p]];
      tally.iterations += energy_factor;
      tally.job_time_s += time_s * energy_factor;
    }
    last_times_.resize(runs.size());
    for (int p = 0; p < loop_.pipelines; ++p) last_times_[p] = runs[p]->time_s;
    if (phase == Phase::kProfiling) {
      time_s *= o_.profiling_time_factor;
      energy_j *= energy_factor;
    }
    PolicyResult& r = out_.result;
    r.total_time_s += time_s;
    r.total_energy_j += energy_j;
    r.iteration_times_s.push_back(time_s);
    r.iteration_energies_j.push_back(energy_j);
    for (size_t t = 0; t < loop_.tracked.size() && t < 2; ++t) {
      const GpuId& id = loop_.tracked[t];
      const int k = id.stage * problem_.gpus_per_stage + id.gpu;
      r.tracked_gpu_energies_j[t].push_back(
          GpuEnergyJ(*runs[id.pipeline], k, time_s / (phase == Phase::kProfiling ? o_.profiling_time_factor : 1.0),
                     block_w_) *
          (phase == Phase::kProfiling ? o_.profiling_energy_factor : 1.0));
    }
    return time_s;
  }

  // Clock changes of the plans run, and whether they are the ideal rule's.
  void CountChanges(const JobConditions& conditions, double* gpu_iterations) {
    for (int p = 0; p < loop_.pipelines; ++p) {
      const int plan = held_[p];
      auto it = changes_.find(plan);
      if (it == changes_.end()) {
        const std::vector<int> c = ClockChangesPerGpu(problem_, Choice(plan));
        double sum = 0;
        for (int v : c) sum += v;
        it = changes_.emplace(plan, sum).first;
      }
      out_.clock_changes_per_gpu_iteration += it->second;
      *gpu_iterations += problem_.num_stages();
    }
    const std::vector<int>& ideal = IdealPlans(conditions);  // per class
    for (int p = 0; p < loop_.pipelines; ++p) {
      if (std::abs(PredictedTime(held_[p]) / PredictedTime(ideal[conditions.class_of[p]]) - 1) > 0.01) {
        ++out_.off_ideal_iterations;
        break;
      }
    }
  }

  // Per class of the conditions, the plan the rule gives with the true paces,
  // as the idealised policy sees them: the no-slowdown plan's time under the
  // class's conditions (slowdown and caps) over its own. Conditions repeat
  // (their key names the classes, not which pipeline is in which): decided
  // once each.
  const std::vector<int>& IdealPlans(const JobConditions& conditions) {
    const std::string key = conditions.Key();
    auto it = ideal_.find(key);
    if (it != ideal_.end()) return it->second;
    const int base = control::NoSlowdownPlanIndex(frontier_);
    const double nominal_s = RunFor(base, PipelineConditions{}).time_s;
    std::vector<control::PipelinePace> paces(conditions.classes.size());
    for (size_t c = 0; c < paces.size(); ++c) {
      // A class without pipelines (the nominal class may have none) sets no pace.
      if (conditions.pipeline_count[c] > 0) paces[c].slowdown = RunFor(base, conditions.classes[c]).time_s / nominal_s;
    }
    return ideal_.emplace(key, control::AssignPipelinePlans(frontier_, paces)).first->second;
  }

  // What the ranks report: each pipeline's compute time, with noise.
  void Detect() {
    std::normal_distribution<double> noise(0, o_.iteration_jitter);
    std::vector<control::PipelineSamples> samples(loop_.pipelines);
    const size_t keep = static_cast<size_t>(4 * o_.detection_window);
    for (int p = 0; p < loop_.pipelines; ++p) {
      std::vector<double>& s = samples_[p];
      s.push_back(last_times_[p] * (o_.iteration_jitter > 0 ? 1 + noise(rng_) : 1.0));
      if (s.size() > keep) s.erase(s.begin());
      samples[p] = {s, PredictedTime(held_[p])};
    }
    if (!pending_.empty()) return;  // the server's detector waits for samples of the plans it assigned
    control::StragglerOptions options{o_.detection_window, o_.detection_threshold};
    bool changed = false;
    std::vector<control::Straggler> next = control::UpdateDetectedStragglers(
        stragglers_, control::EstimateSlowdowns(samples, o_.detection_window), options, &changed);
    if (!changed) return;
    stragglers_ = std::move(next);
    ++out_.detections;
    Assign();
  }

  // Per-GPU and per-pipeline energies from the tallies of each run.
  void Totals() {
    PolicyResult& r = out_.result;
    const int gpus = problem_.num_stages() * problem_.gpus_per_stage;
    r.energy_per_gpu_j.assign(static_cast<size_t>(loop_.pipelines) * gpus, 0.0);
    r.energy_per_pipeline_j.assign(loop_.pipelines, 0.0);
    for (int p = 0; p < loop_.pipelines; ++p) {
      for (const auto& [run, tally] : counts_[p]) {
        for (int k = 0; k < gpus; ++k) {
          const double j = tally.iterations * run->busy_energy_j[k] +
                           block_w_ * (tally.job_time_s - tally.iterations * run->busy_time_s[k]);
          r.energy_per_gpu_j[static_cast<size_t>(p) * gpus + k] += j;
          r.energy_per_pipeline_j[p] += j;
        }
      }
    }
    const double n = std::max(1, loop_.iterations);
    r.iteration_time_s = r.total_time_s / n;
    r.energy_per_iteration_j = r.total_energy_j / n;
  }

  // Iterations (weighted by the phase's energy factor) and their job time, per run.
  struct Tally {
    double iterations = 0, job_time_s = 0;
  };

  const Problem& problem_;
  const Frontier& frontier_;
  const LoopSpec& loop_;
  const ClosedLoopOptions o_;
  const double optimization_s_;
  const double block_w_;
  std::mt19937 rng_;
  double now_s_ = 0;
  bool deployed_ = false;
  std::vector<int> held_;      // the plan each pipeline's ranks run
  std::vector<int> assigned_;  // the plan the control loop last assigned
  std::vector<std::pair<double, std::vector<int>>> pending_;  // (delivered at, plans)
  std::vector<control::Straggler> stragglers_;
  std::vector<std::vector<double>> samples_;  // measured times under the held plan
  std::vector<double> last_times_;  // each pipeline's time in the last iteration (noise-free)
  std::map<std::string, PipelineRun> runs_;
  std::map<int, double> changes_;  // plan -> clock changes summed over GPUs
  std::map<std::string, std::vector<int>> ideal_;  // conditions' key -> IdealPlans (per class)
  std::vector<std::unordered_map<const PipelineRun*, Tally>> counts_;
  std::vector<control::CeilingPlan> ceilings_;  // with a power cap (as the server's PlanBook)
  std::vector<PlanChoice> ceiling_choices_;     // [k]: ceilings_[k]'s plan
  double correction_ = 1;  // measured / predicted power of the plans held
  double running_energy_j_ = 0, running_time_s_ = 0;
  double cap_window_ = -1, window_energy_j_ = 0, window_time_s_ = 0;  // the cap window being measured
  ClosedLoopReport out_;
};

}  // namespace

ClosedLoopReport RunClosedLoop(const Problem& problem, const Frontier& frontier, const LoopSpec& loop,
                               const ClosedLoopOptions& options, double optimization_s) {
  return ClosedLoop(problem, frontier, loop, options, optimization_s).Run();
}

}  // namespace perseus::emulator
