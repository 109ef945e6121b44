// The emulator: whole data-parallel pipeline training jobs (D pipelines x S
// stages x G tensor-parallel GPUs per stage) run for many iterations under
// several frequency policies, with stragglers, so a user can see how much
// energy Perseus saves on their job, at their scale, against what they run
// today, and what it costs in time.
//
// Every computation runs at the frequency its policy planned, with its
// profiled time and energy; a GPU that is not computing draws blocking power,
// both inside its pipeline and while waiting at the data-parallel gradient
// synchronisation; the iteration ends when the slowest pipeline ends. The
// model and its assumptions are in docs/emulator.md.
//
// Usage: fill an EmulationSpec, call Emulate, then EmulationReportFiles for
// report.md, report.json (schema "perseus.emulation/v1") and SVG plots.
// Thread safety: Emulate is reentrant (it shares nothing between calls).
#pragma once

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "perseus/problem.h"
#include "perseus/profile.h"
#include "perseus/status.h"

namespace perseus {

// The paper's straggler: pipelines whose every computation takes `factor`
// times longer at unchanged power (so energy also grows by `factor`), from
// iteration `start_iteration` up to, not including, `end_iteration`.
struct SlowPipelineEvent {
  double factor = 1;
  int first_pipeline = 0, last_pipeline = 0;  // inclusive
  int start_iteration = 0;
  int end_iteration = -1;  // -1: until the last iteration
};

// Thermal throttling: one GPU (tensor-parallel rank `gpu` of `stage` in
// `pipeline`) cannot run above `max_freq_mhz`; the rest of its tensor-parallel
// group waits for it.
struct GpuCapEvent {
  int pipeline = 0, stage = 0, gpu = 0;
  int max_freq_mhz = 0;
  int start_iteration = 0;
  int end_iteration = -1;  // -1: until the last iteration
};

// Parses the CLI forms (errors quote the text):
//   "1.2"  or  "factor=1.2,pipelines=0-3,iterations=10-20"  (end exclusive; "10-" = open)
Result<SlowPipelineEvent> ParseStragglerFlag(const std::string& text);
//   "pipeline=3,stage=5,gpu=2,freq=1100,iterations=10-20"
Result<GpuCapEvent> ParseThrottleFlag(const std::string& text);

// Closed-loop emulation (docs/emulator.md, "Closed loop"): perseus as the
// server runs it, in virtual time: online profiling, then the optimisation,
// then the no-slowdown plans; stragglers detected from noisy iteration times
// by the control library's detector, plans reassigned by its rule and
// delivered to the ranks after a delay, and every clock change taking effect
// after a latency. Defaults are measured where we have a measurement.
struct ClosedLoopOptions {
  bool enabled = false;
  // Online profiling's length; -1: the server's own sweep for this job
  // (control/profiling_sweep.h, default options: its base windows over the
  // profile's clocks, each a warm-up, the measured iterations and one for the
  // switch; repeat rounds not counted). Its cost per iteration as measured
  // (profiling_bench, README: 66 windows in 25.0 min): about 20% longer and
  // 9% cheaper than at all-max (it runs lower clocks).
  double profiling_s = -1;
  double profiling_time_factor = 1.20;
  double profiling_energy_factor = 0.91;
  double optimization_s = -1;       // at all-max meanwhile; -1: the frontier's measured solve time
  double plan_delivery_s = 0.2;     // decision to every rank running it (runtime bench: about 0.2 s)
  double clock_latency_s = 0.005;   // a locked clock takes effect after this (the realistic GPU's default)
  double iteration_jitter = 0.01;   // relative standard deviation of a measured iteration time
  int detection_window = 5;         // the server's straggler defaults
  double detection_threshold = 1.05;
  unsigned seed = 1;
  // An average power cap on the job's GPUs while running (watts; 0: none),
  // run as the server runs one (control/power_cap.h): the fastest mix of two
  // settings under the cap, alternated within each window, predictions
  // corrected by the power the last iteration drew.
  double power_cap_w = 0;
  double power_cap_window_s = 60;
};

struct EmulationSpec {
  std::string job_name;      // shown in reports, e.g. the profile path
  Profile profile;           // per-GPU time and energy per computation
  ProblemSpec problem;       // schedule, per-GPU blocking power, GPUs per stage
  double profile_scale = 1;  // multiplies every profiled time and energy (the paper uses 10)
  int pipelines = 1;         // data-parallel degree D
  int iterations = 100;
  std::vector<SlowPipelineEvent> stragglers;
  std::vector<GpuCapEvent> throttles;
  double slowdown_budget = 0.05;      // Zeus-style knobs may slow the job by this fraction
  double unit_time_s = 1e-3;          // frontier sweep step on the unscaled profile
  int max_clock_changes_per_gpu = -1; // FrontierOptions::max_clock_changes_per_gpu for every Perseus plan
  std::vector<double> sweep_factors;  // straggler factors of the savings plot; empty: 1.0, 1.05, ..., 1.5
  ClosedLoopOptions closed_loop;
};

// One policy's figures for the whole job (all GPUs).
struct PolicyResult {
  std::string name;  // "allmax", "zeus-global", "zeus-per-stage", "envpipe", "perseus-intrinsic", "perseus"
  std::string description;
  double iteration_time_s = 0;        // mean over iterations
  double energy_per_iteration_j = 0;  // mean over iterations
  double total_time_s = 0, total_energy_j = 0;
  double savings_vs_allmax = 0;                   // 1 - energy / allmax energy (fraction)
  double slowdown_vs_allmax = 0;                  // time / allmax time - 1 (fraction)
  std::vector<double> energy_per_pipeline_j;      // totals over all iterations
  std::vector<double> energy_per_gpu_j;           // totals; index (pipeline * S + stage) * G + gpu
  std::vector<double> iteration_times_s;          // per iteration
  std::vector<double> iteration_energies_j;       // per iteration, whole job
  std::vector<double> tracked_gpu_energies_j[2];  // per iteration: [0] an on-time GPU, [1] a straggling GPU
  double lower_bound_energy_j = 0;  // "perseus" only: the ideal, summed over iterations (0: not computable)
};

// One computation in a timeline plot.
struct TimelineBox {
  int stage = 0;
  double start_s = 0, end_s = 0;
  int freq_mhz = 0;
  std::string label;  // "F3", "B3"
};

struct PipelineTimeline {
  std::string policy;  // "allmax", "perseus"
  std::string title;
  int stages = 0;
  double iteration_time_s = 0;             // when the job's iteration ends (gradient sync)
  int min_freq_mhz = 0, max_freq_mhz = 0;  // the profile's clock range (colour scale)
  std::vector<TimelineBox> boxes;
};

// Savings of every policy with one straggler pipeline slowed by `factor`.
struct SweepPoint {
  double factor = 1;
  std::vector<std::pair<std::string, double>> savings_vs_allmax;  // (policy, fraction)
  std::vector<double> slowdowns_vs_allmax;                        // same order: time / allmax time - 1
  double lower_bound_savings = 0;                                 // ideal savings (0: not computable)
};

struct FrontierSummary {
  double all_max_time_s = 0, all_max_energy_j = 0;  // one pipeline, one iteration
  double fastest_time_s = 0, fastest_energy_j = 0;  // the no-slowdown plan
  double min_energy_time_s = 0, min_energy_j = 0;   // T* and its energy
  int plans = 0;
  double solve_s = 0;
};

struct GpuId {
  int pipeline = 0, stage = 0, gpu = 0;
};

// Savings and slowdown against all-max over the same iterations.
struct LoopFigures {
  double savings_vs_allmax = 0;
  double slowdown_vs_allmax = 0;
};

// What the closed loop delivered, and what each part of it cost: the
// figures with that part made ideal (free, instantaneous or noise-free).
struct ClosedLoopReport {
  PolicyResult result;                 // "perseus-closed-loop"; also in EmulationResult::policies
  int profiling_iterations = 0, optimizing_iterations = 0;
  // Running, but some pipeline on a plan more than 1% slower or faster than
  // the one the rule gives with the true slowdowns.
  int off_ideal_iterations = 0;
  int detections = 0;                  // changes of the detected straggler set
  int plan_switches = 0;               // (pipeline, plan) changes delivered
  double clock_changes_per_gpu_iteration = 0;  // mean over running iterations and GPUs
  double optimization_s = 0;
  double profiling_s = 0;              // as run (computed from the sweep when the option is -1)
  int profiling_windows = 0;           // the sweep's windows (0 when profiling_s was given)
  LoopFigures without_profiling;       // no profiling or optimisation phase
  LoopFigures without_clock_latency;   // clock changes take effect at once
  LoopFigures instant_detection;       // noise-free iteration times, plans delivered at once
                                       // (detection still takes its window of iterations)
  // Clock changes per GPU per iteration the loop's plans make at most, chosen
  // as the server does for the clock latency
  // (control::LimitClockChangesForLatency; -1: no limit), and, when that
  // limit was chosen (not the spec's), the figures without it.
  int clock_change_limit = -1;
  // Whether the limited plans' runs of one clock were moved within each
  // plan's time (false where late switches would make them late, or no limit).
  bool clock_runs_moved = false;
  std::optional<LoopFigures> without_clock_change_limit;
  // With a power cap: the running phase's average power, the highest average
  // of a complete cap window, and how many complete windows averaged over the
  // cap by more than 1% (watts of the whole job).
  double running_power_w = 0, worst_window_power_w = 0;
  int cap_windows = 0, cap_windows_over = 0;
};

struct EmulationResult {
  EmulationSpec spec;
  int stages = 0, microbatches = 0, gpus_per_stage = 1;
  int total_gpus = 0;
  std::vector<GpuId> tracked_gpus;     // [0] on time, [1] straggling (absent without events)
  std::vector<PolicyResult> policies;  // allmax first
  FrontierSummary frontier;
  std::vector<SweepPoint> sweep;
  std::vector<PipelineTimeline> timelines;  // a pipeline under allmax and under perseus
  double emulation_s = 0;                   // wall time of the iteration loop, all policies
  double gpu_iterations_per_s = 0;          // GPUs x iterations x policies / emulation_s
  std::optional<ClosedLoopReport> closed_loop;  // with spec.closed_loop.enabled
};

// Validates the spec (errors name the field or flag), solves the frontier once,
// and runs every policy over every iteration.
Result<EmulationResult> Emulate(const EmulationSpec& spec);

// report.md, report.json, energy_per_gpu.csv and the SVG plots, as
// (file name, contents) pairs for the caller to write.
std::vector<std::pair<std::string, std::string>> EmulationReportFiles(const EmulationResult& result);

// Reproduces the Perseus paper's large-scale emulation (Table 6, Fig. 7) from
// the artifact profiles in `sosp24_dir` (shared/data/sosp24) and returns the
// report files (report.md and report.json with ours beside the paper's
// numbers, and savings-against-straggler plots). `summary`, if not null,
// receives a short text table for the terminal.
struct PaperReproductionOptions {
  std::string sosp24_dir;
  int iterations = 10;
  double slowdown_budget = 0.05;
  std::vector<double> sweep_factors;  // empty: 1.0, 1.05, ..., 1.5
};
Result<std::vector<std::pair<std::string, std::string>>> ReproducePaper(const PaperReproductionOptions& options,
                                                                        std::string* summary);

}  // namespace perseus
