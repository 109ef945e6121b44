// `perseus powercap`.
#include "cli/powercap_command.h"

#include <CLI/CLI.hpp>
#include <cstdio>
#include <memory>

#include "cli/cli_util.h"
#include "cli/job_flags.h"
#include "emulator/power_cap_report.h"

namespace perseus::cli {
namespace {

struct PowerCapArgs {
  JobFlags job;
  int pipelines = 1;
  int caps = 25;
  std::string out;
};

Result<emulator::PowerCapReport> BuildReport(const PowerCapArgs& a) {
  Result<ResolvedJob> job = ResolveJob(a.job);
  if (!job.ok()) return job.status();
  Result<Problem> problem = BuildProblem(job->profile, job->spec);
  if (!problem.ok()) return problem.status();
  FrontierOptions options;
  options.lower_bound_samples = 0;
  Result<Frontier> frontier = SolveFrontier(*problem, options);
  if (!frontier.ok()) return frontier.status();
  return emulator::EvaluatePowerCaps(*problem, *frontier, a.pipelines, JobTitle(*job), a.caps);
}

int RunPowerCap(const PowerCapArgs& a) {
  Result<emulator::PowerCapReport> r = BuildReport(a);
  if (!r.ok()) return ReportError(r.status());
  const std::string markdown = emulator::PowerCapMarkdown(*r);
  Status st = WriteOutputs(a.out, {{"power_cap.md", markdown},
                                   {"power_cap.csv", emulator::PowerCapCsv(*r)},
                                   {"power_cap.svg", emulator::PowerCapSvg(*r)}});
  if (!st.ok()) return ReportError(st);
  std::fputs(markdown.c_str(), stdout);
  std::printf("\nwrote:   %s/{power_cap.md,power_cap.csv,power_cap.svg}\n", a.out.c_str());
  return 0;
}

}  // namespace

void RegisterPowerCapCommand(CLI::App& app) {
  auto a = std::make_shared<PowerCapArgs>();
  CLI::App* cmd = app.add_subcommand("powercap", "Slowdown against an average power cap: perseus vs one clock or one power limit for all GPUs");
  AddJobFlags(cmd, a->job);
  cmd->add_option("--pipelines", a->pipelines, "Data-parallel pipelines (the cap is for all of them)")
      ->check(CLI::Range(1, 100000))->capture_default_str();
  cmd->add_option("--caps", a->caps, "Caps evaluated, from all-max power down to the lowest reachable")
      ->check(CLI::Range(2, 1000))->capture_default_str();
  cmd->add_option("--out", a->out, "Output directory")->required();
  cmd->callback([a] {
    int rc = RunPowerCap(*a);
    if (rc != 0) throw CLI::RuntimeError(rc);
  });
}

}  // namespace perseus::cli
