// `perseus emulate`.
#include "cli/emulate_command.h"

#include <CLI/CLI.hpp>
#include <cmath>
#include <cstdio>
#include <memory>

#include "cli/cli_util.h"
#include "cli/job_flags.h"
#include "common/flag_checks.h"
#include "common/shared_data.h"
#include "perseus/emulator.h"
#include "perseus/gpu_model.h"

namespace perseus::cli {
namespace {

struct EmulateArgs {
  JobFlags job;
  std::string out;
  int pipelines = 16;
  int iterations = 100;
  double scale = 1;
  double slowdown_budget = 0.05;
  double unit_time_ms = 1;
  std::vector<std::string> stragglers;
  std::vector<std::string> throttles;
  std::vector<double> sweep;
  bool reproduce_paper = false;
  std::string paper_data;  // empty: SharedDataDir()/sosp24
  ClosedLoopOptions closed_loop;
  double clock_latency_ms = 5;
  int max_clock_changes = -1;
};

Status ResolveJob(const EmulateArgs& a, EmulationSpec& spec) {
  Result<ResolvedJob> job = cli::ResolveJob(a.job);
  if (!job.ok()) return job.status();
  spec.profile = std::move(job->profile);
  spec.problem = job->spec;
  spec.job_name = a.job.example.empty() ? job->name : "example " + job->name;
  return Status::Ok();
}

Result<EmulationSpec> BuildSpec(const EmulateArgs& a) {
  EmulationSpec spec;
  PERSEUS_RETURN_IF_ERROR(ResolveJob(a, spec));
  spec.pipelines = a.pipelines;
  spec.iterations = a.iterations;
  spec.profile_scale = a.scale;
  spec.slowdown_budget = a.slowdown_budget;
  spec.unit_time_s = a.unit_time_ms / 1000;
  spec.sweep_factors = a.sweep;
  spec.closed_loop = a.closed_loop;
  spec.max_clock_changes_per_gpu = a.max_clock_changes;
  spec.closed_loop.clock_latency_s = a.clock_latency_ms / 1000;
  for (const std::string& text : a.stragglers) {
    Result<SlowPipelineEvent> e = ParseStragglerFlag(text);
    if (!e.ok()) return e.status();
    spec.stragglers.push_back(*e);
  }
  for (const std::string& text : a.throttles) {
    Result<GpuCapEvent> e = ParseThrottleFlag(text);
    if (!e.ok()) return e.status();
    spec.throttles.push_back(*e);
  }
  return spec;
}

// Percent for the terminal, never "-0.00".
double Pct(double fraction) { return std::abs(fraction) < 5e-5 ? 0.0 : 100 * fraction; }

void PrintSummary(const EmulationResult& r) {
  std::printf(
      "job:       %d stages x %d microbatches (%s), %d pipelines x %d GPUs per stage = %d GPUs, %d iterations\n",
      r.stages, r.microbatches, ScheduleName(r.spec.problem.schedule.kind), r.spec.pipelines, r.gpus_per_stage,
      r.total_gpus, r.spec.iterations);
  std::printf("%-20s %16s %22s %10s %10s\n", "policy", "iteration (s)", "energy/iteration (J)", "savings", "slowdown");
  for (const PolicyResult& p : r.policies) {
    std::printf("%-20s %16.4f %22.1f %9.2f%% %9.2f%%\n", p.name.c_str(), p.iteration_time_s, p.energy_per_iteration_j,
                Pct(p.savings_vs_allmax), Pct(p.slowdown_vs_allmax));
  }
  for (const PolicyResult& p : r.policies) {
    if (p.name != "perseus" || p.lower_bound_energy_j <= 0) continue;
    const double lb_j = p.lower_bound_energy_j / r.spec.iterations;
    std::printf("%-20s %16.4f %22.1f %9.2f%%\n", "ideal (lower bound)", p.iteration_time_s, lb_j,
                100 * (1 - lb_j / r.policies.front().energy_per_iteration_j));
  }
  std::printf("frontier:  %d plans solved in %.2f s\n", r.frontier.plans, r.frontier.solve_s);
  std::printf("emulated:  %d GPUs x %d iterations x %zu policies in %.3f s (%.3g GPU-iterations/s)\n", r.total_gpus,
              r.spec.iterations, r.policies.size(), r.emulation_s, r.gpu_iterations_per_s);
}

int RunReproduce(const EmulateArgs& a) {
  if (!a.job.profile.empty() || !a.job.example.empty()) {
    return ReportError(Status::InvalidArgument("--reproduce-paper takes no PROFILE.csv or --example"));
  }
  PaperReproductionOptions o;
  o.sosp24_dir = a.paper_data.empty() ? SharedDataDir() + "/sosp24" : a.paper_data;
  o.iterations = a.iterations;
  o.slowdown_budget = a.slowdown_budget;
  o.sweep_factors = a.sweep;
  std::string summary;
  auto files = ReproducePaper(o, &summary);
  if (!files.ok()) return ReportError(files.status());
  Status st = WriteOutputs(a.out, *files);
  if (!st.ok()) return ReportError(st);
  std::printf("%swrote:     %s/report.md, report.json and %zu plots\n", summary.c_str(), a.out.c_str(),
              files->size() - 2);
  return 0;
}

int RunEmulate(const EmulateArgs& a) {
  if (Status out = CheckOutDir(a.out); !out.ok()) return ReportError(out);
  if (a.reproduce_paper) return RunReproduce(a);
  Result<EmulationSpec> spec = BuildSpec(a);
  if (!spec.ok()) return ReportError(spec.status());
  Result<EmulationResult> r = Emulate(*spec);
  if (!r.ok()) return ReportError(r.status());
  std::vector<std::pair<std::string, std::string>> files = EmulationReportFiles(*r);
  Status st = WriteOutputs(a.out, files);
  if (!st.ok()) return ReportError(st);
  PrintSummary(*r);
  std::printf("wrote:     %s/", a.out.c_str());
  for (size_t i = 0; i < files.size(); ++i) std::printf("%s%s", i ? "," : "{", files[i].first.c_str());
  std::printf("}\n");
  return 0;
}

// The numbers are read as decimals here (kAnyInt, kAnyNumber: CLI11 took
// "0x2" and octal "010"); their ranges are the emulation spec's to check,
// with its messages.
void AddJobOptions(CLI::App* cmd, EmulateArgs& a) {
  AddJobFlags(cmd, a.job);
  cmd->add_option("--out", a.out, "Output directory")->required();
  cmd->add_option("--pipelines", a.pipelines, "Data-parallel pipelines")->transform(kAnyInt)->capture_default_str();
  cmd->add_option("--iterations", a.iterations, "Training iterations to emulate")
      ->transform(kAnyInt)
      ->capture_default_str();
  cmd->add_option("--scale", a.scale, "Multiply every profiled time and energy (the paper uses 10)")
      ->check(kAnyNumber)
      ->capture_default_str();
}

void AddPolicyOptions(CLI::App* cmd, EmulateArgs& a) {
  cmd->add_option("--straggler", a.stragglers,
                  "Slow pipelines: FACTOR, or factor=F,pipelines=A-B,iterations=START-END (repeatable)")
      ->allow_extra_args(false);
  cmd->add_option("--throttle", a.throttles,
                  "Cap one GPU's clock: pipeline=P,stage=S,gpu=G,freq=MHZ[,iterations=START-END] (repeatable)")
      ->allow_extra_args(false);
  cmd->add_option("--slowdown-budget", a.slowdown_budget, "Slowdown the Zeus-style knobs may cause (fraction)")
      ->check(kAnyNumber)
      ->capture_default_str();
  cmd->add_option("--sweep", a.sweep, "Straggler factors of the savings plot (default 1,1.05,...,1.5)")
      ->delimiter(',')
      ->check(kAnyNumber)
      ->allow_extra_args(false);
  cmd->add_option("--unit-time-ms", a.unit_time_ms, "Frontier sweep step on the unscaled profile, ms")
      ->check(kAnyNumber)
      ->capture_default_str();
  cmd->add_option("--max-clock-changes", a.max_clock_changes,
                  "At most this many clock changes per GPU per iteration in every Perseus plan (-1: no limit)")
      ->transform(kAnyInt)
      ->capture_default_str();
  CLI::Option* closed_loop = cmd->add_flag("--closed-loop", a.closed_loop.enabled,
                "Also emulate perseus as the server runs it: online profiling, straggler detection from noisy "
                "iteration times, plan delivery and clock-switch latency, in virtual time");
  cmd->add_option("--profiling-s", a.closed_loop.profiling_s,
                  "Closed loop: online profiling time, s (-1: the server's profiling sweep for this job)")
      ->check(kAnyNumber)
      ->capture_default_str()
      ->needs(closed_loop);
  cmd->add_option("--optimization-s", a.closed_loop.optimization_s,
                  "Closed loop: optimisation time, s (-1: the solve's measured time)")
      ->check(kAnyNumber)
      ->capture_default_str()
      ->needs(closed_loop);
  cmd->add_option("--plan-delivery-s", a.closed_loop.plan_delivery_s,
                  "Closed loop: from a decision to every rank running the new plan, s")
      ->check(kAnyNumber)
      ->capture_default_str()
      ->needs(closed_loop);
  cmd->add_option("--clock-latency-ms", a.clock_latency_ms, "Closed loop: a clock change takes effect after this, ms")
      ->check(kAnyNumber)
      ->capture_default_str()
      ->needs(closed_loop);
  cmd->add_option("--iteration-jitter", a.closed_loop.iteration_jitter,
                  "Closed loop: relative noise of measured iteration times")
      ->check(kAnyNumber)
      ->capture_default_str()
      ->needs(closed_loop);
  cmd->add_option("--seed", a.closed_loop.seed, "Closed loop: random seed")
      ->transform(IntegerIn(0, 4294967295LL))
      ->capture_default_str()
      ->needs(closed_loop);
  cmd->add_option("--power-cap", a.closed_loop.power_cap_w,
                  "Closed loop: an average power cap on the job's GPUs while running, W (0: none; docs/power.md)")
      ->check(kAnyNumber)
      ->capture_default_str()
      ->needs(closed_loop);
  cmd->add_option("--power-cap-window-s", a.closed_loop.power_cap_window_s,
                  "Closed loop: the power cap's averaging window, s")
      ->check(kAnyNumber)
      ->capture_default_str()
      ->needs(closed_loop);
  cmd->add_flag("--reproduce-paper", a.reproduce_paper, "Reproduce the paper's Table 6 and Fig. 7");
  cmd->add_option("--paper-data", a.paper_data,
                  "The shared sosp24 folder (default: $PERSEUS_SHARED_DATA/sosp24, else the configure-time one)");
}

}  // namespace

void RegisterEmulateCommand(CLI::App& app) {
  auto args = std::make_shared<EmulateArgs>();
  CLI::App* cmd = app.add_subcommand("emulate", "Emulate a whole training job under several frequency policies");
  AddJobOptions(cmd, *args);
  AddPolicyOptions(cmd, *args);
  cmd->callback([args] {
    int rc = RunEmulate(*args);
    if (rc != 0) throw CLI::RuntimeError(rc);
  });
}

}  // namespace perseus::cli
