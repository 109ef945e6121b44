// `perseus powercap`.
#include "cli/powercap_command.h"

#include <CLI/CLI.hpp>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>
#include <vector>

#include "cli/cli_util.h"
#include "cli/job_flags.h"
#include "cli/progress.h"
#include "common/flag_checks.h"
#include "common/strings.h"
#include "emulator/power_cap_report.h"

namespace perseus::cli {
namespace {

struct PowerCapArgs {
  JobFlags job;
  int pipelines = 1;
  std::vector<std::string> stragglers;  // "PIPELINE:SLOWDOWN"
  int caps = 25;
  std::string out;
  bool quiet = false;
};

// Every pipeline's slowdown from --straggler P:S flags; errors name the flag's value.
Result<std::vector<double>> Slowdowns(const PowerCapArgs& a) {
  std::vector<double> slowdowns(a.pipelines, 1.0);
  std::vector<std::string> given(a.pipelines);  // the flag that set each pipeline
  for (const std::string& text : a.stragglers) {
    const size_t colon = text.find(':');
    char* end = nullptr;
    const long pipeline = colon == std::string::npos ? -1 : std::strtol(text.c_str(), &end, 10);
    // Digits only before the colon: strtol would also take "", " 0", "-0" and "+0".
    const bool digits = colon != std::string::npos && colon > 0 &&
                        text.find_first_not_of("0123456789") >= colon;
    const bool pipeline_ok = digits && end == text.c_str() + colon && pipeline >= 0 && pipeline < a.pipelines;
    const std::optional<double> slowdown = pipeline_ok ? ParseDecimal(text.substr(colon + 1)) : std::nullopt;
    if (!slowdown || !(*slowdown >= 1 && *slowdown <= 100)) {
      return Status::InvalidArgument("--straggler " + text + ": expected PIPELINE:SLOWDOWN with PIPELINE in [0, " +
                                     std::to_string(a.pipelines - 1) + "] and SLOWDOWN in [1, 100], e.g. 3:1.2");
    }
    if (!given[pipeline].empty()) {
      return Status::InvalidArgument("--straggler " + text + ": pipeline " + std::to_string(pipeline) +
                                     " is already given (--straggler " + given[pipeline] + ")");
    }
    given[pipeline] = text;
    slowdowns[pipeline] = *slowdown;
  }
  return slowdowns;
}

Result<emulator::PowerCapReport> BuildReport(const PowerCapArgs& a, Progress& progress) {
  Result<std::vector<double>> slowdowns = Slowdowns(a);
  if (!slowdowns.ok()) return slowdowns.status();
  Result<ResolvedJob> job = ResolveJob(a.job);
  if (!job.ok()) return job.status();
  Result<Problem> problem = BuildProblem(job->profile, job->spec);
  if (!problem.ok()) return problem.status();
  FrontierOptions options;
  options.lower_bound_samples = 0;
  FrontierProgress solved;
  DetailScope detail_scope(progress);  // solved's phase
  options.progress = &solved;
  progress.Phase("solving the frontier", [&solved] { return DescribeFrontierProgress(solved); });
  Result<Frontier> frontier = SolveFrontier(*problem, options);
  if (!frontier.ok()) return frontier.status();
  progress.Phase("evaluating " + std::to_string(a.caps) + " caps for " + std::to_string(a.pipelines) + " pipelines");
  return emulator::EvaluatePowerCaps(*problem, *frontier, *slowdowns, JobTitle(*job), a.caps);
}

int RunPowerCap(const PowerCapArgs& a) {
  if (Status out = CheckOutDir(a.out); !out.ok()) return ReportError(out);
  Progress progress(a.quiet);
  Result<emulator::PowerCapReport> r = BuildReport(a, progress);
  if (!r.ok()) return ReportError(r.status());
  progress.Phase("writing " + a.out);
  const std::string markdown = emulator::PowerCapMarkdown(*r);
  Status st = WriteOutputs(a.out, {{"power_cap.md", markdown},
                                   {"power_cap.csv", emulator::PowerCapCsv(*r)},
                                   {"power_cap.svg", emulator::PowerCapSvg(*r)}});
  if (!st.ok()) return ReportError(st);
  progress.Finish();
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
      ->transform(IntegerIn(1, 100000))->capture_default_str();
  cmd->add_option("--straggler", a->stragglers,
                  "PIPELINE:SLOWDOWN: that pipeline runs SLOWDOWN times slower (repeatable); every approach faces it");
  cmd->add_option("--caps", a->caps, "Caps evaluated, from all-max power down to the lowest reachable")
      ->transform(IntegerIn(2, 1000))->capture_default_str();
  cmd->add_option("--out", a->out, "Output directory")->required();
  cmd->add_flag("--quiet", a->quiet, "No progress lines on stderr");
  cmd->callback([a] {
    int rc = RunPowerCap(*a);
    if (rc != 0) throw CLI::RuntimeError(rc);
  });
}

}  // namespace perseus::cli
