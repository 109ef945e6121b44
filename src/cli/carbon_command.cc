// `perseus carbon`.
#include "cli/carbon_command.h"

#include <CLI/CLI.hpp>
#include <algorithm>
#include <atomic>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <functional>
#include <memory>
#include <string>

#include "emulator/carbon_report.h"
#include "carbon/electricitymaps_source.h"
#include "carbon/power_limit_profile.h"
#include "cli/cli_util.h"
#include "cli/job_flags.h"
#include "cli/progress.h"
#include "common/flag_checks.h"
#include "common/file_util.h"
#include "common/shared_data.h"

namespace perseus::cli {
namespace {

using namespace perseus::carbon;

struct CarbonArgs {
  std::string trace, eia, em_zone, em_url = "https://api.electricitymap.org", em_token_file;
  double fixed_g_per_kwh = -1;
  JobFlags job;
  std::string out, power_limit_profile, shared_data;
  int week = -1;
  int start_stride_h = 24;
  int threads = 0;
  bool quiet = false;
  double deadline_slack = 0;
  double slowdown_budget = 0.05;
};

Result<IntensityTrace> ResolveTrace(const CarbonArgs& a) {
  const int given = !a.trace.empty() + !a.eia.empty() + !a.em_zone.empty() + (a.fixed_g_per_kwh >= 0);
  if (given != 1) {
    return Status::InvalidArgument("give exactly one of --trace FILE, --eia CISO|NYIS, --fixed G, --electricitymaps-zone Z");
  }
  if (!a.trace.empty()) return LoadTraceFile(a.trace);
  if (!a.eia.empty()) {
    Result<std::string> path = EiaTracePath(a.shared_data.empty() ? SharedDataDir() : a.shared_data, a.eia);
    if (!path.ok()) return path.status();
    return LoadEiaTrace(*path);
  }
  if (!a.em_zone.empty()) {
    ElectricityMapsConfig config;
    config.base_url = a.em_url;
    config.zone = a.em_zone;
    if (!a.em_token_file.empty()) {
      Result<std::string> token = ReadToken(a.em_token_file, "--electricitymaps-token-file");
      if (!token.ok()) return token.status();
      config.token = *token;
    }
    ElectricityMapsSource source(config, [](const std::string& l) { std::fprintf(stderr, "%s\n", l.c_str()); });
    return source.FetchHistory();
  }
  IntensityTrace t;
  t.source = "fixed " + std::to_string(a.fixed_g_per_kwh) + " gCO2/kWh";
  t.start_unix_s = 1640995200;  // 2022-01-01T00:00Z: deterministic; the value never changes anyway
  t.carbon_g_per_kwh.assign(static_cast<size_t>(168 * (1 + a.slowdown_budget)) + 2, a.fixed_g_per_kwh);
  return t;
}

// "8 stages x 12 microbatches (1f1b), 8 GPU(s) per stage, 83.64 W blocking power".
std::string DescribeJob(const ProblemSpec& spec) {
  char buf[200];
  std::snprintf(buf, sizeof buf, "%d stages x %d microbatches (%s), %d GPU(s) per stage, %.2f W blocking power",
                spec.schedule.stages, spec.schedule.microbatches, ScheduleName(spec.schedule.kind),
                spec.gpus_per_stage, spec.blocking_power_w);
  return buf;
}

Result<TradeoffCurve> Curve(const std::string& name, const IntensityTrace& trace, const KnobSet& knobs,
                            const StartHours& starts) {
  TradeoffCurve c{name, {}};
  for (double budget : {0.0, 0.01, 0.025, 0.05, 0.1}) {
    ReplayConfig config;
    config.slowdown_budget = budget;
    Result<std::vector<PolicyOutcome>> o = EvaluateStarts(trace, {{name, knobs, config}}, starts);
    if (!o.ok()) return o.status();
    c.time_added_vs_saved.emplace_back((*o)[0].mean_time_added_frac, (*o)[0].carbon_saved_frac);
  }
  return c;
}

// The runs of the current phase replayed so far, for the progress lines.
struct RunCount {
  std::atomic<size_t> done{0};
  size_t total = 0;
  // The phase's detail: "1200 of 2028 runs".
  std::function<std::string()> Detail() {
    return [this] { return std::to_string(done.load()) + " of " + std::to_string(total) + " runs"; };
  }
  // A new phase of `runs` runs.
  void Start(size_t runs) {
    done = 0;
    total = runs;
  }
};

Result<CarbonReport> BuildReport(const CarbonArgs& a, std::string& decisions, Progress& progress) {
  Result<IntensityTrace> trace = ResolveTrace(a);
  if (!trace.ok()) return trace.status();
  Result<ResolvedJob> job = ResolveJob(a.job);
  if (!job.ok()) return job.status();
  CarbonReport r;
  r.trace = std::move(*trace);
  r.slowdown_budget = a.slowdown_budget;
  r.work_h = std::min(168.0, std::floor(r.trace.size() / (1 + a.slowdown_budget)));
  if (r.work_h < 1) {
    return Status::InvalidArgument(r.trace.source + ": " + std::to_string(r.trace.size()) +
                                   " hour(s) of trace are too short for a job");
  }
  Result<PipelineKnobs> knobs = BuildPipelineKnobs(job->profile, job->spec);
  if (!knobs.ok()) return knobs.status();
  r.job_name = job->name;
  r.job_description = DescribeJob(job->spec);
  r.all_max_time_s = knobs->frontier.all_max.time_s;
  r.all_max_energy_j = knobs->frontier.all_max.energy_j;
  progress.Phase("evaluating the forecasters over the trace");
  if (r.trace.size() > 48) r.forecast = EvaluateForecasters(r.trace);
  RunCount count;
  DetailScope detail_scope(progress);  // count's phases
  r.starts.work_h = r.work_h;
  r.starts.start_stride_h = a.start_stride_h;
  r.starts.threads = a.threads;
  r.starts.runs_done = &count.done;
  const size_t starts = r.starts.Of(r.trace).size();
  const std::vector<PolicySpec> pipeline_policies = PipelinePolicies(*knobs, a.slowdown_budget);
  count.Start(pipeline_policies.size() * starts);
  progress.Phase("replaying the policies from " + std::to_string(starts) + " start hours", count.Detail());
  Result<std::vector<PolicyOutcome>> policies = EvaluateStarts(r.trace, pipeline_policies, r.starts);
  if (!policies.ok()) return policies.status();
  r.policies = std::move(*policies);
  r.split = SplitSaving(r.policies);
  if (a.deadline_slack > 0) {
    const std::vector<PolicySpec> deadline_policies = DeadlinePolicies(*knobs, a.deadline_slack);
    count.Start(deadline_policies.size() * starts);
    progress.Phase("replaying deadline mode", count.Detail());
    Result<std::vector<PolicyOutcome>> deadline = EvaluateStarts(r.trace, deadline_policies, r.starts);
    if (!deadline.ok()) return deadline.status();
    r.deadline_slack = a.deadline_slack;
    r.deadline = std::move(*deadline);
  }
  std::vector<std::pair<std::string, KnobSet>> curves = {{"Perseus frontier, carbon-aware", knobs->frontier_knobs},
                                                         {"global SM clock, carbon-aware", knobs->global_clock_knobs}};
  if (!a.power_limit_profile.empty()) {
    Result<PowerLimitProfile> pl = LoadPowerLimitProfile(a.power_limit_profile);
    if (!pl.ok()) return pl.status();
    ReplayConfig aware;
    aware.slowdown_budget = a.slowdown_budget;
    KnobSet plk = PowerLimitKnobs(*pl);
    count.Start(starts);
    progress.Phase("replaying the power-limit policy", count.Detail());
    Result<std::vector<PolicyOutcome>> o =
        EvaluateStarts(r.trace, {{"power limit, carbon-aware (data-parallel job)", plk, aware}}, r.starts);
    if (!o.ok()) return o.status();
    r.power_limit = (*o)[0];
    r.power_limit_source = pl->source;
    curves.emplace_back("power limit, carbon-aware (data-parallel job)", plk);
  }
  StartHours weekly = r.starts;  // the curves' five budgets each: weekly starts keep the run short
  weekly.start_stride_h = std::max(weekly.start_stride_h, 168);
  count.Start(curves.size() * 5 * weekly.Of(r.trace).size());
  progress.Phase("the trade-off curves", count.Detail());
  for (const auto& [name, k] : curves) {
    Result<TradeoffCurve> c = Curve(name, r.trace, k, weekly);
    if (!c.ok()) return c.status();
    r.tradeoff.push_back(std::move(*c));
  }
  const int weeks = static_cast<int>(std::floor((r.trace.size() - r.work_h) / 168)) + 1;  // week starts that fit
  const int week = a.week >= 0 ? a.week : std::min(3, weeks - 1);
  if (week >= weeks) {
    return Status::InvalidArgument("--week " + std::to_string(a.week) + ": the trace has " + std::to_string(weeks) +
                                   " week(s) (0.." + std::to_string(weeks - 1) + ")");
  }
  r.shown_week_start = week * 168;
  r.shown_knobs = knobs->frontier_knobs;
  ReplayConfig aware;
  aware.slowdown_budget = a.slowdown_budget;
  aware.work_h = r.work_h;
  r.shown_week = ReplayJob(r.trace, r.shown_week_start, r.shown_knobs, aware,
                           [&](const std::string& l) { decisions += l + "\n"; });
  return r;
}

void PrintSummary(const CarbonReport& r) {
  std::printf("trace:   %s (%d hours)\n", r.trace.source.c_str(), r.trace.size());
  for (const std::string& n : r.trace.notes) std::printf("note:    %s\n", n.c_str());
  for (const ForecastScore& s : r.forecast) {
    std::printf("forecast 1 h ahead, %-27s MAE %5.2f gCO2/kWh, MAPE %4.2f%%\n", s.name.c_str(), s.mae_g_per_kwh,
                s.mape_percent);
  }
  std::printf("%zu start hour(s) (every %d h), slowdown budget %.1f%%:\n", r.policies.front().runs.size(),
              r.starts.start_stride_h, 100 * r.slowdown_budget);
  auto row = [](const PolicyOutcome& p) {
    std::printf("  %-80s carbon saved %6.2f%% (std %.2f)  time added %5.2f%% (worst run %5.2f%%)\n", p.name.c_str(),
                100 * p.carbon_saved_frac, 100 * p.saved_std_frac, 100 * p.mean_time_added_frac,
                100 * p.max_time_added_frac);
  };
  for (const PolicyOutcome& p : r.policies) row(p);
  if (r.power_limit) row(*r.power_limit);
  std::printf("  %-80s carbon saved %6.1f%%  time added %5.1f%%\n", "Chase (published, ResNet-50)", 100 * kChaseCarbonSavedFrac,
              100 * kChaseTimeAddedFrac);
  const SavingSplit& s = r.split;
  std::printf("split:   no-slowdown plan %.2f + slowing down %.2f + carbon awareness %.2f points; optimum gain over "
              "the fixed mix %.2f points",
              100 * s.no_slowdown_frac, 100 * s.slowing_down_frac, 100 * s.carbon_awareness_frac,
              100 * s.optimum_gain_frac);
  if (s.captured_frac && s.captured_told_length_frac) {
    std::printf(", captured %.0f%%\n         told the job's length: captured %.0f%%\n", 100 * *s.captured_frac,
                100 * *s.captured_told_length_frac);
  } else {
    std::printf(": the trace does not vary enough for carbon awareness to gain anything\n");
  }
  if (r.deadline_slack > 0) std::printf("deadline mode, slack %.0f%%:\n", 100 * r.deadline_slack);
  for (const PolicyOutcome& p : r.deadline) row(p);
}

int RunCarbon(const CarbonArgs& a) {
  if (Status out = CheckOutDir(a.out); !out.ok()) return ReportError(out);
  std::string decisions;
  Progress progress(a.quiet);
  Result<CarbonReport> r = BuildReport(a, decisions, progress);
  if (!r.ok()) return ReportError(r.status());
  progress.Finish();
  Status st = WriteOutputs(a.out, {{"report.json", CarbonReportJson(*r)},
                                   {"report.md", CarbonReportMarkdown(*r)},
                                   {"week_intensity.svg", WeekIntensitySvg(*r)},
                                   {"week_plan.svg", WeekPlanSvg(*r)},
                                   {"tradeoff.svg", TradeoffSvg(*r)},
                                   {"decisions.log", decisions}});
  if (!st.ok()) return ReportError(st);
  PrintSummary(*r);
  std::printf("wrote:   %s/{report.md,report.json,week_intensity.svg,week_plan.svg,tradeoff.svg,decisions.log}\n",
              a.out.c_str());
  return 0;
}

}  // namespace

void RegisterCarbonCommand(CLI::App& app) {
  auto a = std::make_shared<CarbonArgs>();
  CLI::App* cmd = app.add_subcommand("carbon", "Replay a grid carbon-intensity trace against a job (carbon-aware mode)");
  AddJobFlags(cmd, a->job);
  cmd->add_option("--trace", a->trace,
                  "Carbon-intensity CSV: timestamp,gco2_per_kwh (ISO-8601 UTC), or an EIA-format file (avg_CI and "
                  "the fuel columns)");
  cmd->add_option("--eia", a->eia, "A shared EIA 2022 hourly trace")->check(CLI::IsMember({"CISO", "NYIS"}));
  cmd->add_option("--fixed", a->fixed_g_per_kwh, "A constant intensity, gCO2/kWh")->check(NumberIn(0, carbon::kMaxCarbonGPerKwh));
  cmd->add_option("--electricitymaps-zone", a->em_zone, "Replay the last 24 h of this ElectricityMaps zone")
      ->check(CLI::Validator([](std::string& zone) { return carbon::CheckElectricityMapsZone(zone).message(); },
                             "ZONE"));
  cmd->add_option("--electricitymaps-url", a->em_url, "ElectricityMaps API base URL")->capture_default_str();
  cmd->add_option("--electricitymaps-token-file", a->em_token_file, "File holding the ElectricityMaps auth token");
  cmd->add_option("--shared-data", a->shared_data, "Shared data folder for --eia (default: $PERSEUS_SHARED_DATA, else the configure-time one)");
  cmd->add_option("--slowdown-budget", a->slowdown_budget, "Allowed average slowdown vs all-max (0.05 = 5%)")
      ->check(NumberIn(0, 1))->capture_default_str();
  cmd->add_option("--power-limit-profile", a->power_limit_profile,
                  "Also evaluate Chase's power-limit knob on this Zeus power-limit profile (data-parallel job)");
  cmd->add_option("--week", a->week, "Week (0-based) shown in the week plots and decisions.log (default: 3 or the last)")
      ->transform(kNonNegativeInt);
  cmd->add_option("--start-stride-h", a->start_stride_h,
                  "Evaluate a job started every this many hours (from three weeks into the trace)")
      ->transform(IntegerIn(1, 24 * 366 * 100))  // a century of hours; more would overflow the hour arithmetic
      ->capture_default_str();
  cmd->add_option("--deadline-slack", a->deadline_slack,
                  "Also evaluate deadline mode: finish within all-max time x (1 + this); may pause (0.25 = 25%)")
      ->check(NumberIn(0, 1));
  cmd->add_option("--threads", a->threads,
                  "Runs replayed at once, at most one per CPU this process may run on (0: one per CPU); the "
                  "results are the same for any count")
      ->transform(kNonNegativeInt)->capture_default_str();
  cmd->add_flag("--quiet", a->quiet, "No progress lines on stderr");
  cmd->add_option("--out", a->out, "Output directory")->required();
  cmd->callback([a] {
    int rc = RunCarbon(*a);
    if (rc != 0) throw CLI::RuntimeError(rc);
  });
}

}  // namespace perseus::cli
