// JobService: online profiling and the background optimisation.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <mutex>
#include <optional>

#include "common/strings.h"
#include "control/clock_change_limit.h"
#include "control/profiling_sweep.h"
#include "perseus/gpu_model.h"
#include "profiling/profile_checks.h"
#include "runtime/server/job_service.h"

namespace perseus::server {

namespace {

double UnixNowS() {
  return std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
}

// The blocking power the built-in GPU model publishes for the stage's GPUs,
// when all of them are one known model.
std::optional<double> PublishedBlockingPowerW(const std::vector<const RankInfo*>& stage_ranks) {
  std::optional<double> power;
  for (const RankInfo* r : stage_ranks) {
    Result<GpuSpec> spec = FindGpu(r->gpu_name);
    if (!spec.ok() || spec->blocking_power_w <= 0) return std::nullopt;
    if (power && *power != spec->blocking_power_w) return std::nullopt;
    power = spec->blocking_power_w;
  }
  return power;
}

// What a stage's powers may be: from its GPU model when all of the stage's
// GPUs are one known model (half the idle power up to 1.5x the default power
// limit: boards ship with raised limits, A100-SXM4-80GB at 500 W, and the
// Perseus paper's A100 GPT-3 profile draws up to 482 W), else the defaults,
// which fit A100 and H100 boards.
profiling::PlausibilityLimits PlausibilityLimitsFor(const std::vector<const RankInfo*>& stage_ranks,
                                                    double target_relative_se) {
  profiling::PlausibilityLimits limits;
  limits.target_relative_se = target_relative_se;
  std::optional<GpuSpec> model;
  for (const RankInfo* r : stage_ranks) {
    Result<GpuSpec> spec = FindGpu(r->gpu_name);
    if (!spec.ok() || spec->tdp_w <= 0 || (model && model->name != spec->name)) return limits;
    model = *spec;
  }
  if (!model) return limits;
  limits.min_power_w = model->idle_power_w / 2;
  limits.max_power_w = model->tdp_w * 1.5;
  return limits;
}

// A GPU's blocking power (waiting at the highest clock) as a share of its
// busiest power, when nothing better is known: an H200 idled at 118-134 W
// against 695 W busy (17-19%, docs/real_gpu.md), the Perseus paper's A100
// GPT-3 profile has 83.64 W against 300-400 W (21-28%).
constexpr double kAssumedBlockingShare = 0.2;
// The prior's spread when a blocking power outside the plausible limits is held at one of them.
constexpr double kHeldBlockingSdW = 0.5;

// Powers are reported as of the last window: the GPU is as warm as it will
// be while the plans run. The blocking power is what window totals pin down
// least (every busy power moves with it), so a known value anchors the fit:
// the job's declared blocking power (tight), else the published one of the
// stage's GPU model, else (`*assumed_blocking` set) a loose kAssumedBlockingShare
// of the busiest window's power, which only matters where the windows cannot
// tell the blocking power: a stage that never waits, as in a one-stage job,
// where on an H200 the fit otherwise took -53 kW to absorb noise.
profiling::EstimatorOptions EstimatorOptionsFor(const JobSpec& spec, const std::vector<const RankInfo*>& stage_ranks,
                                                const std::vector<profiling::WindowObservation>& observations,
                                                bool* assumed_blocking) {
  profiling::EstimatorOptions e;
  *assumed_blocking = false;
  if (spec.profiling.thermal_time_constant_s > 0) e.drift_time_constant_s = spec.profiling.thermal_time_constant_s;
  e.equal_power_split = spec.profiling.single_clock_windows;
  if (spec.blocking_power_w) {
    e.blocking_power_prior_w = *spec.blocking_power_w;
    e.blocking_power_prior_sd_w = 2;
  } else if (std::optional<double> published = PublishedBlockingPowerW(stage_ranks)) {
    e.blocking_power_prior_w = *published;
    e.blocking_power_prior_sd_w = 10;
  } else {
    double busiest_w = 0;
    for (const profiling::WindowObservation& w : observations) {
      if (w.cycle_time_s > 0) busiest_w = std::max(busiest_w, w.energy_j / w.cycle_time_s);
    }
    if (busiest_w > 0) {
      e.blocking_power_prior_w = kAssumedBlockingShare * busiest_w;
      e.blocking_power_prior_sd_w = 0.5 * *e.blocking_power_prior_w;
      *assumed_blocking = true;
    }
  }
  for (const profiling::WindowObservation& w : observations) {
    e.reference_time_s = std::max(e.reference_time_s.value_or(w.mid_time_s), w.mid_time_s);
  }
  return e;
}

// The warning for a stage whose blocking power was assumed and that its
// windows did not pin down (the fit's uncertainty is over half the assumption's).
std::optional<JobWarning> AssumedBlockingWarning(int stage, const profiling::StageEstimate& e,
                                                 const profiling::EstimatorOptions& options,
                                                 const std::vector<profiling::WindowObservation>& observations) {
  if (e.blocking_power_se_w <= 0.5 * options.blocking_power_prior_sd_w) return std::nullopt;
  double cycle_s = 0, waiting_s = 0;
  for (const profiling::WindowObservation& w : observations) {
    cycle_s += w.cycle_time_s;
    waiting_s += std::max(w.cycle_time_s - w.forward_time_s - w.backward_time_s, 0.0);
  }
  return JobWarning{"blocking_power_assumed",
                    Format("stage %d's windows cannot tell its blocking power (its GPUs waited %.2f%% of the "
                           "time): assumed %.0f W ± %.0f W, a fifth of its busiest window's power, since perseus "
                           "does not know its GPU model; declare blocking_power_w in the job spec (the GPU's power "
                           "while idle at its highest clock) if the plans' waiting matters",
                           stage, cycle_s > 0 ? 100 * waiting_s / cycle_s : 0.0, e.blocking_power_w,
                           e.blocking_power_se_w),
                    stage, -1};
}

// Checks one rank's report against the window it claims and its stage's clocks.
Status CheckReportFits(const WindowReport& r, const ProfilingState& p, const RankInfo& info) {
  auto [f, b] = p.windows[r.window].stages[info.pp_rank];
  const std::vector<int>& clocks = p.clocks_mhz[info.pp_rank];
  const struct {
    const char* field;
    const char* what;
    int want_mhz, got_mhz;
  } checks[] = {{"forward_clock_mhz", "forwards", clocks[f], r.forward_clock_mhz},
                {"backward_clock_mhz", "backwards", clocks[b], r.backward_clock_mhz}};
  for (const auto& c : checks) {
    if (c.got_mhz == c.want_mhz) continue;
    return FieldError(c.field, "window " + std::to_string(r.window) + " runs stage " + std::to_string(info.pp_rank) +
                                   "'s " + c.what + " at " + std::to_string(c.want_mhz) + " MHz, not " +
                                   std::to_string(c.got_mhz));
  }
  return Status::Ok();
}

// Warnings a single report can raise: clocks that do not stick.
void WarnAboutReport(const WindowReport& r, const RankInfo& info, ControlState* state) {
  const bool steady = r.forward_clock_mhz == r.backward_clock_mhz;
  if (steady && r.achieved_clock_mhz > 0 && std::abs(r.achieved_clock_mhz - r.forward_clock_mhz) > 1) {
    state->AddWarning({"achieved_clock",
                       "rank " + std::to_string(info.rank) + " (" + info.gpu_name + "): locked at " +
                           std::to_string(r.forward_clock_mhz) + " MHz but the GPU ran at " +
                           std::to_string(r.achieved_clock_mhz) +
                           " MHz (power or thermal capping, or a driver that did not apply the lock); "
                           "its profile describes the achieved clock",
                       info.pp_rank, info.rank});
  }
  state->clock_switch_latency_s = std::max(state->clock_switch_latency_s, r.clock_switch_latency_s);
  const int64_t computations = r.forward.count + r.backward.count;
  const double mean_computation_s = computations > 0 ? (r.forward.time_s + r.backward.time_s) / computations : 0;
  if (control::IsSlowClockSwitch(r.clock_switch_latency_s, mean_computation_s)) {
    state->AddWarning({"slow_clock_switch",
                       "rank " + std::to_string(info.rank) + " (" + info.gpu_name + "): a locked SM clock takes " +
                           Format("%.1f ms", r.clock_switch_latency_s * 1e3) + " to take effect (the lock call's "
                           "duration on an NVIDIA GPU), against " +
                           Format("%.1f ms", mean_computation_s * 1e3) +
                           " per computation: plans that change clocks between computations run them partly at "
                           "the previous clock and save less than predicted; limit clock changes "
                           "(max_clock_changes_per_gpu, docs/schedules.md \"Clock changes\")",
                       info.pp_rank, info.rank});
  }
  if (r.late_clocks * 2 > computations) {
    state->AddWarning({"clock_late",
                       "rank " + std::to_string(info.rank) + ": " + std::to_string(r.late_clocks) + " of " +
                           std::to_string(computations) +
                           " computations began before the clock control applied their clock (NVML or perseusd "
                           "takes longer than the gap between computations, so computations start at the previous "
                           "computation's clock)",
                       info.pp_rank, info.rank});
  }
}

// What the server says when slow clock switches made it limit clock changes.
JobWarning ClockChangesLimitedWarning(const control::ClockChangeDecision& d, double clock_switch_latency_s) {
  auto slower = [&](double time_s) { return Format("%.2f%%", 100 * (time_s / d.all_max_time_s - 1)); };
  return {"clock_changes_limited",
          "plans make at most " + std::to_string(d.limit) + " clock changes per GPU per iteration: a clock switch takes " +
              Format("%.1f ms", clock_switch_latency_s * 1e3) +
              " on this job's GPUs, which would make the unlimited no-slowdown plan " + slower(d.unlimited.time_s) +
              " slower than all-max (modelled: docs/schedules.md \"Clock changes\"); the limited plan is " +
              slower(d.limited.time_s) + " slower and uses " +
              Format("%.2f%%", 100 * (d.limited.energy_j / d.unlimited.energy_j - 1)) +
              " more energy than the unlimited one would with such switches; set max_clock_changes_per_gpu to choose",
          -1, -1};
}

// Clears a job's solve_started however Optimize returns (taking job.mu, so it
// must be declared before any lock of it in the same scope).
class SolveClock {
 public:
  explicit SolveClock(Job& job) : job_(job) {}
  ~SolveClock() {
    std::lock_guard<std::mutex> lock(job_.mu);
    job_.solve_started.reset();
  }
  SolveClock(const SolveClock&) = delete;
  SolveClock& operator=(const SolveClock&) = delete;

 private:
  Job& job_;
};

// Why a job's solve was stopped by ServiceLimits::max_solve_s, and the ways
// out: this server keeps the job failed until it is profiled again.
Status SolveTimeLimitStatus(double max_solve_s, const JobSpec& spec, int computations) {
  char limit[32];
  std::snprintf(limit, sizeof limit, "%.10g", max_solve_s);
  return Status::Unavailable(
      "stopped after " + std::string(limit) + " s, the server's limit (--max-solve-s): this job's " +
      std::to_string(computations) + " computations per iteration (" + std::to_string(spec.schedule.stages) +
      " stages x " + std::to_string(spec.schedule.microbatches) + " microbatches, " +
      ScheduleName(spec.schedule.kind) + ") take the optimizer longer. Its profile stays readable (GET /jobs/" +
      spec.id + "/profile) for perseus optimize offline; to optimise it here, restart the server with a higher "
      "--max-solve-s and POST /jobs/" + spec.id + "/optimize");
}

}  // namespace

void JobService::StartProfiling(Job& job, ControlState* state) {
  std::vector<std::vector<const RankInfo*>> by_stage = job.RanksByStage();
  std::vector<std::vector<int>> clocks;
  for (int s = 0; s < job.spec.pp; ++s) {
    std::vector<std::vector<int>> rank_clocks;
    for (const RankInfo* r : by_stage[s]) rank_clocks.push_back(r->sm_clocks_mhz);
    clocks.push_back(control::SweepClocks(rank_clocks, job.spec.profiling));
    if (clocks.back().empty()) {
      state->phase = Phase::kFailed;
      state->error = "stage " + std::to_string(s) + ": its ranks share no supported SM clock at or above " +
                     std::to_string(job.spec.profiling.min_clock_mhz) + " MHz";
      return;
    }
  }
  ProfilingState p = control::StartSweep(std::move(clocks), job.spec.profiling);
  p.started_unix_s = UnixNowS();
  p.version = state->NextVersion();
  state->profiling = std::move(p);
  state->phase = Phase::kProfiling;
}

// Fits every stage; appends repeat windows for clocks above the target while
// rounds remain, else ends profiling with the profile and its warnings.
Status JobService::FinishProfilingRound(Job& job, ControlState* state, StoreWrite* write) {
  const ProfilingOptions& o = job.spec.profiling;
  std::vector<std::vector<const RankInfo*>> by_stage = job.RanksByStage();
  std::vector<profiling::StageEstimate> estimates;
  std::vector<std::vector<int>> repeat(job.spec.pp);
  std::vector<JobWarning> assumed_blocking;
  std::vector<std::vector<profiling::WindowObservation>> stage_observations;
  std::vector<profiling::EstimatorOptions> stage_options;
  for (int s = 0; s < job.spec.pp; ++s) {
    const std::vector<profiling::WindowObservation>& observations = stage_observations.emplace_back(
        StageObservations(state->profiling, s, by_stage[s], job.window_reports));
    bool assumed = false;
    const profiling::EstimatorOptions& options =
        stage_options.emplace_back(EstimatorOptionsFor(job.spec, by_stage[s], observations, &assumed));
    Result<profiling::StageEstimate> e = profiling::EstimateStage(state->profiling.clocks_mhz[s], observations, options);
    if (!e.ok()) return e.status().WithContext("stage " + std::to_string(s));
    repeat[s] = profiling::ClockIndicesAboveTarget(*e, o.target_relative_error);
    if (assumed) {
      if (std::optional<JobWarning> w = AssumedBlockingWarning(s, *e, options, observations)) {
        assumed_blocking.push_back(std::move(*w));
      }
    }
    estimates.push_back(std::move(*e));
  }
  // Appends repeat windows for clocks above the target while rounds and time remain.
  if (control::AddRepeatRound(&state->profiling, repeat, o, ProfilingJobTimeS(state->profiling, job.window_reports, o)) >
      0) {
    return Status::Ok();
  }
  std::vector<double> max_power_w;
  for (int s = 0; s < job.spec.pp; ++s) {
    const profiling::PlausibilityLimits limits = PlausibilityLimitsFor(by_stage[s], o.target_relative_error);
    max_power_w.push_back(limits.max_power_w);
    for (profiling::ProfileIssue& issue : profiling::CheckStage(s, estimates[s], limits)) {
      state->AddWarning({issue.code, issue.message, s, -1});
    }
    // A blocking power outside the limits (warned about above when beyond its uncertainty; a negative one
    // would fail the optimisation) is held at the nearest limit and the stage fitted again, so that its busy
    // powers agree with it.
    const double held_w = std::clamp(estimates[s].blocking_power_w, limits.min_power_w, limits.max_power_w);
    if (held_w != estimates[s].blocking_power_w) {
      profiling::EstimatorOptions options = stage_options[s];
      options.blocking_power_prior_w = held_w;
      options.blocking_power_prior_sd_w = kHeldBlockingSdW;
      Result<profiling::StageEstimate> e =
          profiling::EstimateStage(state->profiling.clocks_mhz[s], stage_observations[s], options);
      if (!e.ok()) return e.status().WithContext("stage " + std::to_string(s));
      estimates[s] = std::move(*e);
      estimates[s].blocking_power_w = held_w;
    }
  }
  for (JobWarning& w : assumed_blocking) state->AddWarning(std::move(w));
  Result<Profile> profile = ProfileFromEstimates(estimates, job.spec.schedule.chunks, max_power_w);
  if (!profile.ok()) return profile.status();
  state->blocking_power_w = job.spec.blocking_power_w.value_or(MedianBlockingPowerW(estimates));
  state->phase = Phase::kOptimizing;
  state->base_version = state->NextVersion();
  write->profile_csv = ProfileToCsv(*profile);
  return Status::Ok();
}

// Moves to the next window once every rank reported the current one.
Status JobService::AdvanceProfiling(Job& job, ControlState* state, StoreWrite* write) {
  ProfilingState& p = state->profiling;
  if (job.CountReported(p.current) < job.spec.world_size()) return Status::Ok();
  const double now_s = UnixNowS() - p.started_unix_s;
  if (control::CloseWindow(&p, now_s)) PERSEUS_RETURN_IF_ERROR(FinishProfilingRound(job, state, write));
  if (state->phase == Phase::kProfiling) {
    control::OpenWindow(&p, now_s);
    p.version = state->NextVersion();
  }
  return Status::Ok();
}

Result<WindowAccepted> JobService::ReportWindow(const std::string& job_id, const protocol::WindowReport& report) {
  const int rank = report.rank;
  Result<LockedRank> locked = LockRank(job_id, rank);
  if (!locked.ok()) return locked.status();
  Job& job = *locked->job;
  const RankInfo& info = *locked->info;
  const ProfilingState& p = job.state.profiling;
  if (job.state.phase != Phase::kProfiling) {
    return Status::Unavailable("job '" + job_id + "' is not profiling (phase " + PhaseName(job.state.phase) + ")");
  }
  if (report.window >= static_cast<int>(p.windows.size())) {
    return FieldError("window", "job '" + job_id + "' has no window " + std::to_string(report.window));
  }
  if (report.window > p.current) {
    return Status::Unavailable("window " + std::to_string(report.window) + " has not started (the job runs window " +
                               std::to_string(p.current) + ")");
  }
  PERSEUS_RETURN_IF_ERROR(CheckReportFits(report, p, info));
  if (job.window_reports.count({report.window, rank})) {
    return WindowAccepted{false, job.state.phase};
  }
  if (report.window != p.current) {
    return Status::Unavailable("window " + std::to_string(report.window) + " is over (the job runs window " +
                               std::to_string(p.current) + ")");
  }
  ControlState state = job.state;
  const size_t warned_before = state.warnings.size();
  StoreWrite write;
  write.window_reports.push_back(report);
  WarnAboutReport(report, info, &state);
  job.window_reports[{report.window, rank}] = report;
  Status st = AdvanceProfiling(job, &state, &write);
  if (st.ok()) st = CommitState(job, state, write);
  if (!st.ok()) {
    job.window_reports.erase({report.window, rank});
    return st;
  }
  LogWarnings(job_id, state.warnings, warned_before);
  if (write.profile_csv) job.profile_csv = *write.profile_csv;
  if (state.profiling.current != report.window) {
    Log("profiling_window_done", {{"job", job_id}, {"window", report.window},
                                  {"purpose", state.profiling.windows[report.window].purpose},
                                  {"windows", state.profiling.windows.size()}});
  }
  if (state.phase == Phase::kOptimizing) Enqueue(job_id);
  return WindowAccepted{true, state.phase};
}

void JobService::Enqueue(const std::string& job_id) { optimizer_->Enqueue(job_id); }

void JobService::WaitForOptimizer() { optimizer_->WaitUntilIdle(); }

void JobService::Optimize(const std::string& job_id) {
  Result<std::shared_ptr<Job>> found = FindJob(job_id);
  if (!found.ok()) return;
  Job& job = **found;
  JobSpec spec;
  std::string csv;
  double blocking_power_w = 0, clock_switch_latency_s = -1;
  control::ClockChangeDecision changes;  // the limit slow clock switches chose, if any
  {
    std::lock_guard<std::mutex> lock(job.mu);
    if (job.state.phase != Phase::kOptimizing || job.deleted) return;
    spec = job.spec;
    csv = job.profile_csv;
    blocking_power_w = job.state.blocking_power_w;
    clock_switch_latency_s = job.state.clock_switch_latency_s;
    job.solve_started = std::chrono::steady_clock::now();
    job.solve_timed_out = false;
    job.cancel_solve = cancel_solves_.load();
  }
  const SolveClock solve_clock(job);
  Log("optimization_started", {{"job", job_id}});
  Result<Frontier> frontier = Status::Internal("not solved");
  int computations = 0;
  Result<Profile> profile = ParseProfileCsv(csv, "job " + job_id + " profile", spec.pp, ProfileOrigin::kMeasured);
  if (!profile.ok()) {
    frontier = profile.status();
  } else {
    Result<Problem> problem = BuildProblem(*profile, JobProblemSpec(spec, blocking_power_w));
    FrontierOptions options;
    options.unit_time_s = spec.unit_time_s;
    // Under slow clock switches the frontier is solved unlimited and the
    // limit (the spec's or one chosen) applied below, runs moved or not.
    options.max_clock_changes_per_gpu =
        control::SolveClockChangeLimit(spec.max_clock_changes_per_gpu, clock_switch_latency_s);
    options.cancel = &job.cancel_solve;
    options.threads = limits_.optimizer_threads;
    options.max_plans = MakePlansFor(limits_.max_frontier_plans);
    if (problem.ok()) computations = problem->num_nodes();
    frontier = problem.ok() ? solver_(*problem, options) : Result<Frontier>(problem.status());
    if (frontier.ok()) {
      changes = control::LimitClockChangesForLatency(*problem, spec.max_clock_changes_per_gpu, clock_switch_latency_s,
                                                     &*frontier, &job.cancel_solve, limits_.optimizer_threads);
    }
  }
  if (cancel_solves_) return;  // stopping: the job stays optimizing and is solved after a restart
  // The flag only goes from false to true during a solve: if it is still
  // false, the frontier is complete, even if the limit fires from now on.
  if (job.cancel_solve) {
    std::lock_guard<std::mutex> lock(job.mu);
    if (job.deleted || job.state.phase != Phase::kOptimizing) return;  // deleted or finished meanwhile
    if (job.solve_timed_out) frontier = SolveTimeLimitStatus(limits_.max_solve_s, spec, computations);
  }
  // The plan book and the stored frontier are built here, without the job's
  // lock: polls, reports and reads go on meanwhile.
  Result<std::shared_ptr<const PlanBook>> book =
      frontier.ok() && profile.ok()
          ? PlanBook::Create(spec, *profile, blocking_power_w,
                             ThinFrontier(std::move(*frontier), static_cast<size_t>(limits_.max_frontier_plans)))
          : Result<std::shared_ptr<const PlanBook>>(frontier.status());
  std::string frontier_json = book.ok() ? StoredFrontierJson((*book)->frontier()).dump() : std::string();
  std::lock_guard<std::mutex> lock(job.mu);
  job.solve_started.reset();  // before the phase changes (SolveClock clears it on the other returns)
  if (job.deleted || job.state.phase != Phase::kOptimizing) return;
  ControlState state = job.state;
  StoreWrite write;
  if (book.ok() && changes.automatic) state.AddWarning(ClockChangesLimitedWarning(changes, clock_switch_latency_s));
  if (book.ok()) {
    state.phase = Phase::kRunning;
    state.base_version = state.NextVersion();
    state.pipelines.assign(spec.dp, PipelinePlan{0, state.base_version});
    job.plans = *book;  // AssignPlans reads it
    AssignPlans(job, &state);
    write.frontier_json = std::move(frontier_json);
  } else {
    state.phase = Phase::kFailed;
    state.error = "optimization: " + book.status().message();
  }
  Status st = CommitState(job, state, std::move(write));
  if (!st.ok()) {
    job.plans = nullptr;
    // The job stays optimizing; MaintenanceTick solves it again.
    if (log_) log_->Error("optimization_not_saved", {{"job", job_id}, {"error", st.message()}});
    return;
  }
  if (book.ok()) {
    const Frontier& f = (*book)->frontier();
    Log("optimization_done", {{"job", job_id}, {"plans", f.plans.size()}, {"fastest_time_s", f.plans.front().time_s},
                              {"fastest_energy_j", f.plans.front().energy_j},
                              {"all_max_energy_j", f.all_max.energy_j}, {"solve_s", f.stats.solve_s},
                              {"sweep_complete", f.stats.sweep_complete}});
  } else if (log_) {
    log_->Error("optimization_failed", {{"job", job_id}, {"error", state.error}});
  }
}

}  // namespace perseus::server
