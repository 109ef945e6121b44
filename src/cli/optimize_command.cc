// `perseus optimize`.
#include "cli/optimize_command.h"

#include <CLI/CLI.hpp>
#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <filesystem>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <thread>

#include "cli/cli_util.h"
#include "cli/job_flags.h"
#include "cli/progress.h"
#include "common/flag_checks.h"
#include "perseus/frontier_io.h"
#include "perseus/gpu_model.h"
#include "perseus/optimizer.h"
#include "report/frontier_plots.h"

namespace perseus::cli {
namespace {

struct OptimizeArgs {
  JobFlags job;
  std::string out;
  double unit_time_ms = 1.0;
  int threads = 0;
  int lower_bound_samples = -1;
  double timeline_slowdown = 0;
  int max_plans = kDefaultMaxPlans;
  int max_clock_changes = -1;
  bool zeus_plans = false;
  std::vector<double> zeus_plan_times_s;
  bool quiet = false;
  double time_limit_s = 0;  // 0: none
};

// Sets `cancel` once `limit_s` (> 0) has passed, unless destroyed first: the
// solve (FrontierOptions::cancel) then stops at its next step.
class CancelAfter {
 public:
  CancelAfter(double limit_s, std::atomic<bool>& cancel) {
    if (!(limit_s > 0)) return;
    thread_ = std::thread([this, limit_s, &cancel] {
      std::unique_lock<std::mutex> lock(mu_);
      if (!done_cv_.wait_for(lock, std::chrono::duration<double>(limit_s), [this] { return done_; })) cancel = true;
    });
  }
  ~CancelAfter() {
    {
      std::lock_guard<std::mutex> lock(mu_);
      done_ = true;
    }
    done_cv_.notify_all();
    if (thread_.joinable()) thread_.join();
  }
  CancelAfter(const CancelAfter&) = delete;
  CancelAfter& operator=(const CancelAfter&) = delete;

 private:
  std::mutex mu_;
  std::condition_variable done_cv_;
  bool done_ = false;
  std::thread thread_;
};

// Why --time-limit-s stopped the solve.
Status TimeLimitStatus(double limit_s, const Problem& problem) {
  char text[64];
  std::snprintf(text, sizeof text, "%.10g", limit_s);
  return Status::Unavailable("stopped after " + std::string(text) + " s (--time-limit-s): " +
                             std::to_string(problem.num_nodes()) +
                             " computations take the optimizer longer (docs/design.md, \"Speed\", gives its run "
                             "times by size); nothing was written");
}

std::string Seconds(double s) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.6g", s);
  return buf;
}

// What plans.json and zeus/ hold, as indices into the full frontier.
struct Selection {
  std::vector<size_t> written;  // plans.json
  std::vector<size_t> zeus;     // zeus/, each also in `written`
};

Result<Selection> Select(const OptimizeArgs& a, const Frontier& f) {
  Selection sel;
  sel.zeus = KeyPlanIndices(f);
  for (double t : a.zeus_plan_times_s) {
    const FrontierPlan* p = f.PlanForTime(t);
    if (!p) {
      return Status::InvalidArgument("--zeus-plan-time " + Seconds(t) + ": no plan is that fast (the fastest takes " +
                                     Seconds(f.plans.front().time_s) + " s)");
    }
    sel.zeus.push_back(static_cast<size_t>(p - f.plans.data()));
  }
  std::sort(sel.zeus.begin(), sel.zeus.end());
  sel.zeus.erase(std::unique(sel.zeus.begin(), sel.zeus.end()), sel.zeus.end());
  if (!a.zeus_plans && a.zeus_plan_times_s.empty()) sel.zeus.clear();
  std::vector<size_t> keep = KeyPlanIndices(f);
  keep.insert(keep.end(), sel.zeus.begin(), sel.zeus.end());
  std::sort(keep.begin(), keep.end());
  keep.erase(std::unique(keep.begin(), keep.end()), keep.end());
  if (a.max_plans > 0 && static_cast<size_t>(a.max_plans) < keep.size()) {
    return Status::InvalidArgument("--max-plans " + std::to_string(a.max_plans) + ": fewer than the " +
                                   std::to_string(keep.size()) +
                                   " plans always kept (fastest, no-slowdown, minimum-energy and --zeus-plan-time)");
  }
  sel.written = ThinPlanIndices(f, static_cast<size_t>(a.max_plans), keep);
  return sel;
}

std::vector<OutputFile> Outputs(const OptimizeArgs& a, const ResolvedJob& job, const Problem& problem,
                                const Frontier& f, const Selection& sel) {
  std::vector<OutputFile> files;
  auto text = [&files](std::string name, std::string contents) {
    files.push_back(TextOutput(std::move(name), std::move(contents)));
  };
  // A thinned copy only when thinning (a full copy of 16 x 256's plans is 200 MB).
  auto thinned = std::make_shared<Frontier>();
  if (sel.written.size() < f.plans.size()) *thinned = SubFrontier(f, sel.written);
  const Frontier* written = sel.written.size() < f.plans.size() ? thinned.get() : &f;
  files.push_back({"plans.json", [&problem, written, thinned, total = f.plans.size()](std::ostream& out) {
                     WritePlansJson(problem, *written, out, total);
                   }});
  text("frontier.csv", FrontierToCsv(f));
  text("frontier.svg", report::RenderFrontierSvg(f, "Time-energy frontier: " + JobTitle(job)));
  const FrontierPlan* shown = f.PlanForTime(f.all_max.time_s * (1 + a.timeline_slowdown));
  if (!shown) shown = &f.plans.front();
  char title[160];
  std::snprintf(title, sizeof title, "Plan at %.4f s (%.1f%% less energy than all-max)", shown->time_s,
                100 * (1 - shown->energy_j / f.all_max.energy_j));
  text("timeline.svg", report::RenderTimelineSvg(problem, *shown, title));
  for (size_t i : sel.zeus) {
    // Named by the plan's index in plans.json.
    const size_t index = static_cast<size_t>(std::lower_bound(sel.written.begin(), sel.written.end(), i) - sel.written.begin());
    char name[64];
    std::snprintf(name, sizeof name, "zeus/freqs_pipeline_%05zu.py", index);
    text(name, PlanToZeusPython(problem, f.plans[i], static_cast<int>(index)));
  }
  return files;
}

// Zeus plan files an earlier run left in out/zeus/ that this run did not
// write: they would no longer match plans.json (their names are its indices).
Status RemoveStaleZeusPlans(const std::string& dir, const std::vector<OutputFile>& written) {
  std::error_code ec;
  std::filesystem::directory_iterator it(dir + "/zeus", ec);
  if (ec) return Status::Ok();  // no zeus/ folder
  std::set<std::string> kept;
  for (const OutputFile& file : written) kept.insert(file.name);
  for (const auto& entry : it) {
    const std::string name = entry.path().filename().string();
    if (!name.starts_with("freqs_pipeline_") || !name.ends_with(".py") || kept.contains("zeus/" + name)) continue;
    if (!std::filesystem::remove(entry.path(), ec) && ec) {
      return Status::IoError(entry.path().string() + ": cannot remove a stale Zeus plan: " + ec.message());
    }
  }
  return Status::Ok();
}

// A schedule other than 1F1B is also measured against 1F1B at all-max (same
// profile and shape): the schedule's own gain, next to perseus's.
void PrintAgainst1F1B(const ResolvedJob& job, const Frontier& f) {
  if (job.spec.schedule.kind == ScheduleKind::k1F1B) return;
  ProblemSpec spec = job.spec;
  spec.schedule.kind = ScheduleKind::k1F1B;
  spec.schedule.chunks = 1;
  Result<Problem> baseline = BuildProblem(job.profile, spec);
  if (!baseline.ok()) {
    std::printf("vs 1f1b all-max:    not comparable (%s)\n", baseline.status().message().c_str());
    return;
  }
  const PlanCost b = EvaluatePlan(*baseline, AllMaxPlan(*baseline));
  std::printf("vs 1f1b all-max:    %.6f s, %.3f J; this schedule at all-max %+.2f%% time, %+.2f%% energy; ", b.time_s,
              b.energy_j, 100 * (f.all_max.time_s / b.time_s - 1), 100 * (f.all_max.energy_j / b.energy_j - 1));
  // A clock-change limit can leave no plan as fast as all-max (a GPU whose
  // computations share no clock): found in review, it crashed here.
  if (const FrontierPlan* ns = f.NoSlowdownPlan()) {
    std::printf("its no-slowdown plan %+.2f%% energy\n", 100 * (ns->energy_j / b.energy_j - 1));
  } else {
    std::printf("no plan as fast as all-max\n");
  }
}

// Mean and largest clock changes per GPU per iteration.
std::pair<double, int> ClockChangeStats(const Problem& problem, const PlanChoice& plan) {
  const std::vector<int> changes = ClockChangesPerGpu(problem, plan);
  double mean = 0;
  for (int c : changes) mean += c / static_cast<double>(changes.size());
  return {mean, *std::max_element(changes.begin(), changes.end())};
}

// What the clock-change limit cost at no slowdown.
void PrintClockLimit(const Problem& problem, int limit, const Frontier& f, const FrontierPlan* unlimited) {
  const FrontierPlan* ns = f.NoSlowdownPlan();
  if (limit < 0 || !ns || !unlimited) return;
  std::printf("clock-change limit: %d per GPU per iteration; no-slowdown plan %.2f%% less energy than all-max "
              "(%.2f%% without the limit), %.1f changes per GPU (%.1f without)\n",
              limit, 100 * (1 - ns->energy_j / f.all_max.energy_j), 100 * (1 - unlimited->energy_j / f.all_max.energy_j),
              ClockChangeStats(problem, ns->choice).first, ClockChangeStats(problem, unlimited->choice).first);
}

// `value` with `decimals` decimals, or six significant digits below `small`,
// where those decimals would show nothing (sub-millisecond iterations).
std::string Readable(double value, int decimals, double small) {
  char buf[32];
  if (value >= small) {
    std::snprintf(buf, sizeof buf, "%.*f", decimals, value);
  } else {
    std::snprintf(buf, sizeof buf, "%.6g", value);
  }
  return buf;
}
std::string Secs(double s) { return Readable(s, 6, 1e-3); }
std::string Joules(double j) { return Readable(j, 3, 1); }

void PrintSummary(const Problem& problem, const Frontier& f, double seconds) {
  const FrontierPlan* ns = f.NoSlowdownPlan();
  std::printf("computations:       %d (%d stages x %d microbatches, %s)\n", problem.num_nodes(), problem.num_stages(),
              problem.schedule.spec.microbatches, ScheduleName(problem.schedule.spec.kind));
  std::printf("frontier:           %zu plans, iteration time %s .. %s s\n", f.plans.size(),
              Secs(f.plans.front().time_s).c_str(), Secs(f.plans.back().time_s).c_str());
  std::printf("all-max:            %s s, %s J\n", Secs(f.all_max.time_s).c_str(), Joules(f.all_max.energy_j).c_str());
  if (ns) {
    std::printf("no-slowdown plan:   %s s, %s J, %.2f%% less energy", Secs(ns->time_s).c_str(),
                Joules(ns->energy_j).c_str(), 100 * (1 - ns->energy_j / f.all_max.energy_j));
    if (ns->lower_bound_j > 0) std::printf(" (within %.2f%% of the lower bound)", 100 * (ns->energy_j / ns->lower_bound_j - 1));
    std::printf("\n");
  }
  const FrontierPlan& m = f.MinEnergyPlan();
  // A lower clock measured faster than the highest makes it faster than all-max.
  std::printf("min-energy plan:    %s s (%+.2f%%), %.2f%% less energy\n", Secs(m.time_s).c_str(),
              100 * (m.time_s / f.all_max.time_s - 1), 100 * (1 - m.energy_j / f.all_max.energy_j));
  if (ns) {
    const auto [mean, most] = ClockChangeStats(problem, ns->choice);
    std::printf("clock changes:      %.1f per GPU per iteration in the no-slowdown plan (at most %d, of %zu "
                "computations)\n", mean, most, problem.gpu_order.front().size());
  }
  std::printf("run time:           %.3f s (sweep %.3f s, %d steps; %d plans made", seconds,
              f.stats.solve_s - f.stats.plans_s, f.stats.sweep_steps, f.stats.candidate_plans);
  if (f.stats.plans_during_sweep > 0) std::printf(" (%d while it ran)", f.stats.plans_during_sweep);
  std::printf(" in %.3f s after it on %d thread%s; lower bound %.3f s, %s)\n", f.stats.plans_s, f.stats.plan_threads,
              f.stats.plan_threads == 1 ? "" : "s", f.stats.lower_bound_s,
              f.stats.lower_bound_checked ? "checked" : "not checked");
  if (!f.stats.sweep_complete) {
    std::fprintf(stderr, "perseus: warning: the sweep stopped before the fastest possible iteration time; plans "
                         "between all-max and %.6f s may be missing (please report this profile)\n", f.plans.front().time_s);
  }
}

int RunOptimize(const OptimizeArgs& a) {
  if (Status out = CheckOutDir(a.out); !out.ok()) return ReportError(out);
  auto t0 = std::chrono::steady_clock::now();
  Progress progress(a.quiet);
  Result<ResolvedJob> job = ResolveJob(a.job);
  if (!job.ok()) return ReportError(job.status());
  Result<Problem> problem = BuildProblem(job->profile, job->spec);
  if (!problem.ok()) return ReportError(problem.status());
  FrontierProgress solved;
  DetailScope detail_scope(progress);  // solved's phase
  FrontierOptions options;
  options.unit_time_s = a.unit_time_ms / 1000.0;
  options.lower_bound_samples = a.lower_bound_samples;
  options.threads = a.threads;
  options.max_plans = MakePlansFor(a.max_plans);
  options.progress = &solved;
  progress.Phase("solving the frontier", [&solved] { return DescribeFrontierProgress(solved); });
  std::atomic<bool> out_of_time{false};
  options.cancel = &out_of_time;
  Result<Frontier> f = Status::Internal("not solved");
  std::optional<FrontierPlan> unlimited;
  bool stopped = false;  // by the limit, before the work ended
  {
    const CancelAfter limit(a.time_limit_s, out_of_time);
    f = SolveFrontier(*problem, options);
    // Limited here rather than through FrontierOptions, to report what the limit cost.
    if (f.ok() && a.max_clock_changes >= 0) {
      if (const FrontierPlan* ns = f->NoSlowdownPlan()) unlimited = *ns;
      progress.Phase("limiting clock changes to " + std::to_string(a.max_clock_changes) + " per GPU");
      LimitFrontierClockChanges(*problem, a.max_clock_changes, &*f, &out_of_time, a.threads);
    }
    stopped = out_of_time;  // a limit passing from here on stopped nothing
  }
  if (stopped) return ReportError(TimeLimitStatus(a.time_limit_s, *problem));
  if (!f.ok()) return ReportError(f.status());
  Result<Selection> sel = Select(a, *f);
  if (!sel.ok()) return ReportError(sel.status());
  progress.Phase("writing " + std::to_string(sel->written.size()) + " plans to " + a.out);
  const std::vector<OutputFile> outputs = Outputs(a, *job, *problem, *f, *sel);
  Status st = WriteOutputs(a.out, outputs);
  if (st.ok()) st = RemoveStaleZeusPlans(a.out, outputs);
  if (!st.ok()) return ReportError(st);
  progress.Finish();
  PrintSummary(*problem, *f, std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
  PrintClockLimit(*problem, a.max_clock_changes, *f, unlimited ? &*unlimited : nullptr);
  PrintAgainst1F1B(*job, *f);
  std::printf("plans.json:         %zu of %zu plans%s\n", sel->written.size(), f->plans.size(),
              sel->written.size() < f->plans.size() ? " (--max-plans)" : "");
  std::printf("wrote:              %s/{plans.json,frontier.csv,frontier.svg,timeline.svg%s}\n", a.out.c_str(),
              sel->zeus.empty() ? "" : (",zeus/ (" + std::to_string(sel->zeus.size()) + " plans)").c_str());
  return 0;
}

}  // namespace

void RegisterOptimizeCommand(CLI::App& app) {
  auto args = std::make_shared<OptimizeArgs>();
  CLI::App* cmd = app.add_subcommand("optimize", "Compute the iteration time-energy frontier of a pipeline");
  AddJobFlags(cmd, args->job);
  cmd->add_option("--out", args->out, "Output directory")->required();
  cmd->add_option("--unit-time-ms", args->unit_time_ms, "Step between the iteration times plans are made for, ms (coarser where --max-plans asks; finer where that leaves fewer than 64 before the least-energy time)")
      ->check(kPositive)->capture_default_str();
  cmd->add_option("--lower-bound-samples", args->lower_bound_samples, "Independent min-cost-flow checks of the lower bound (0: off; -1: a dual-flow certificate at the all-max time, then one min-cost flow if it fails and <= 4096 computations)")
      ->transform(IntegerIn(-1, 10000))->capture_default_str();
  cmd->add_option("--timeline-slowdown", args->timeline_slowdown,
                  "timeline.svg shows the plan for all-max time x (1 + this)")->check(NumberIn(0, 10));
  cmd->add_option("--max-plans", args->max_plans,
                  "Write at most this many plans to plans.json, spread evenly in time; plans are made at about "
                  "max(this, " + std::to_string(kDefaultMaxPlans) + ") evenly spread times (0: made one every "
                  "--unit-time-ms, all written); the fastest, no-slowdown and minimum-energy plans are always kept")
      ->transform(kNonNegativeInt)->capture_default_str();
  cmd->add_option("--time-limit-s", args->time_limit_s,
                  "Stop with an error, writing nothing, if the frontier takes longer than this many seconds (0: no "
                  "limit); jobs of tens of thousands of computations take minutes to hours")
      ->transform(NumberIn(0, 1e9))
      ->capture_default_str();
  cmd->add_option("--max-clock-changes", args->max_clock_changes,
                  "At most this many clock changes per GPU per iteration in every plan, for jobs whose "
                  "communication stalls when clocks change often (-1: no limit); each frontier plan is limited and its runs of one clock moved within its time, and plans on one clock per GPU are added (docs/schedules.md, \"Clock changes\")")
      ->transform(IntegerIn(-1, 1000000))->capture_default_str();
  cmd->add_option("--threads", args->threads,
                  "Threads that make the discrete plans, at most one per CPU this process may run on (0: one per "
                  "CPU); with two or more, all but one start while the sweep runs; the plans are the same for any "
                  "count")
      ->transform(kNonNegativeInt)->capture_default_str();
  cmd->add_flag("--zeus-plans", args->zeus_plans,
                "Also write the fastest, no-slowdown and minimum-energy plans as Zeus frequency-plan files");
  cmd->add_option("--zeus-plan-time", args->zeus_plan_times_s,
                  "Also write a Zeus file for the least-energy plan no slower than this many seconds (repeatable)")
      ->check(kPositive);
  cmd->add_flag("--quiet", args->quiet, "No progress lines on stderr");
  cmd->callback([args] {
    int rc = RunOptimize(*args);
    if (rc != 0) throw CLI::RuntimeError(rc);
  });
}

}  // namespace perseus::cli
