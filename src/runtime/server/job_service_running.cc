// JobService: iteration reports, straggler detection and plan switching.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <mutex>

#include "common/stats.h"
#include "control/plan_assignment.h"
#include "control/straggler_detection.h"
#include "runtime/protocol/job_requests.h"
#include "runtime/server/job_service.h"

namespace perseus::server {

namespace {

// How far ahead a new pause takes effect: far enough that every rank has its
// pause plan by then (plans are polled every fraction of a second; kPauseLeadS
// covers a slow poll), so they all stop before the same iteration.
constexpr double kPauseLeadS = 10;
constexpr int64_t kMinPauseLeadIterations = 2;

}  // namespace

int64_t JobService::PauseFromIteration(const Job& job, const ControlState& state) {
  const std::vector<FrontierPlan>& plans = job.plans->frontier().plans;
  const double time_s = plans[std::clamp(state.carbon.plan_index, 0, static_cast<int>(plans.size()) - 1)].time_s;
  const double lead = std::ceil(kPauseLeadS / std::max(time_s, 1e-3));
  int64_t next = std::max<int64_t>(0, job.last_iteration + 1);  // the server's count
  for (const std::optional<RankInfo>& r : job.ranks) {
    if (r) next = std::max(next, r->iteration_base);  // restarted ranks count from their base
  }
  return next + std::max(kMinPauseLeadIterations, static_cast<int64_t>(std::min(lead, 1e6)));
}

void JobService::AssignPlans(const Job& job, ControlState* state) {
  if (!job.plans || state->phase != Phase::kRunning) return;
  std::vector<control::PipelinePace> paces(state->pipelines.size());
  for (const Straggler& s : state->stragglers) {
    if (s.pipeline >= 0 && s.pipeline < static_cast<int>(paces.size())) paces[s.pipeline].slowdown = s.slowdown;
  }
  const int carbon_floor = job.spec.carbon && state->carbon.evaluated ? state->carbon.plan_index : 0;
  std::vector<int> plans = control::AssignPipelinePlans(job.plans->frontier(), paces, carbon_floor);
  std::vector<int> ceilings(plans.size(), 0);
  ApplyPowerCap(job, state, &plans, &ceilings);
  const bool paused = job.CarbonPaused(*state);
  const bool was_paused = std::any_of(state->pipelines.begin(), state->pipelines.end(),
                                      [](const PipelinePlan& p) { return p.paused; });
  if (!paused) state->pause_from_iteration = -1;
  // A pause that starts now (a decision, or running again after profiling) takes
  // effect a few iterations ahead, the same iteration for every rank.
  if (paused && !was_paused) state->pause_from_iteration = PauseFromIteration(job, *state);
  int64_t version = 0;
  for (size_t p = 0; p < plans.size(); ++p) {
    const PipelinePlan& held = state->pipelines[p];
    if (plans[p] == held.plan_index && ceilings[p] == held.clock_ceiling_mhz && paused == held.paused) continue;
    if (version == 0) version = state->NextVersion();
    state->pipelines[p] = {plans[p], version, ceilings[p], paused};
  }
}

void JobService::AddToWindow(Job& job, const IterationReport& report) {
  job.last_iteration = std::max(job.last_iteration, report.iteration);
  if (job.state.phase != Phase::kRunning || !job.plans) return;
  if (report.rank < 0 || report.rank >= static_cast<int>(job.ranks.size()) || !job.ranks[report.rank]) return;
  const RankInfo& info = *job.ranks[report.rank];
  if (report.plan_version != job.RankVersion(info)) return;
  std::map<int64_t, IterationSample>& window = job.windows[info.dp_rank];
  const size_t limit = static_cast<size_t>(4 * job.spec.straggler.window);
  // Older than everything kept in a full window: it would be dropped at once.
  if (window.size() >= limit && report.iteration < window.begin()->first) return;
  IterationSample& s = window[report.iteration];
  if (!s.ranks.insert(report.rank).second) return;  // a retried report
  s.max_compute_time_s = std::max(s.max_compute_time_s, report.compute_time_s);
  s.energy_j += report.energy_j;
  while (window.size() > limit) window.erase(window.begin());
}

bool JobService::DetectStragglers(const Job& job, ControlState* state) {
  std::vector<control::PipelineSamples> samples(job.spec.dp);
  for (int p = 0; p < job.spec.dp; ++p) {
    for (const auto& [iteration, s] : job.windows[p]) {
      if (static_cast<int>(s.ranks.size()) >= job.ranks_per_pipeline()) samples[p].compute_times_s.push_back(s.max_compute_time_s);
    }
    samples[p].predicted_time_s = job.plans->Cost(state->pipelines[p]).time_s;
  }
  std::vector<std::optional<double>> slowdowns = control::EstimateSlowdowns(samples, job.spec.straggler.window);
  bool changed = false;
  std::vector<Straggler> next = control::UpdateDetectedStragglers(state->stragglers, slowdowns, job.spec.straggler, &changed);
  if (!changed) return false;
  state->stragglers = std::move(next);
  AssignPlans(job, state);
  return true;
}

void JobService::ResetStaleWindows(Job& job, const ControlState& before) {
  for (size_t p = 0; p < job.state.pipelines.size() && p < before.pipelines.size(); ++p) {
    if (job.state.pipelines[p].version != before.pipelines[p].version) job.windows[p].clear();
  }
}

void JobService::RecordCompleteIterations(Job& job, int pipeline, const ControlState& ran) const {
  if (ran.phase != Phase::kRunning || !job.plans || pipeline >= static_cast<int>(ran.pipelines.size())) return;
  const int index = ran.pipelines[pipeline].plan_index;
  const PlanCost plan = job.plans->Cost(ran.pipelines[pipeline]);
  for (auto& [iteration, s] : job.windows[pipeline]) {
    if (s.in_history || static_cast<int>(s.ranks.size()) < job.ranks_per_pipeline()) continue;
    job.history.RecordIteration({pipeline, iteration, Now(), index, s.max_compute_time_s,
                                 s.energy_j > 0 ? std::optional<double>(s.energy_j) : std::nullopt, plan.time_s,
                                 plan.energy_j, job.plans->frontier().all_max.energy_j});
    s.in_history = true;
  }
}

bool JobService::WarnAboutMismatches(Job& job, int rank, const std::vector<IterationReport>& reports,
                                     ControlState* state) {
  int64_t mismatches = 0, iterations = 0;
  for (const IterationReport& r : reports) {
    mismatches += r.schedule_mismatches;
    iterations += r.schedule_mismatches > 0 ? 1 : 0;
  }
  if (mismatches == 0 || job.mismatch_warned.count(rank)) return false;
  job.mismatch_warned.insert(rank);
  const RankInfo& info = *job.ranks[rank];
  return state->AddWarning(
      {"schedule_mismatch",
       "rank " + std::to_string(rank) + " ran computations in another order than the declared schedule (" +
           std::string(ScheduleName(job.spec.schedule.kind)) + ", " + std::to_string(job.spec.schedule.microbatches) +
           " microbatches): " + std::to_string(mismatches) + " mismatches in " + std::to_string(iterations) +
           " iterations; plans assign clocks to the wrong computations: register the schedule the framework runs",
       info.pp_rank, rank});
}

Result<IterationsAccepted> JobService::ReportIterations(const std::string& job_id, int rank,
                                                        std::vector<IterationReport> reports,
                                                        const std::string& session) {
  Result<LockedRank> locked = LockRank(job_id, rank);
  if (!locked.ok()) return locked.status();
  Job& job = *locked->job;
  if (!session.empty() && !locked->info->session.empty() && session != locked->info->session) {
    return IterationsAccepted{0, job.state.stragglers, reports.size()};
  }
  const int64_t base = locked->info->iteration_base;  // a restarted process counts from 0 again
  for (size_t k = 0; k < reports.size(); ++k) {
    if (reports[k].iteration > protocol::kMaxIteration - base) {
      return FieldError("iterations[" + std::to_string(k) + "].iteration",
                        "expected at most " + std::to_string(protocol::kMaxIteration - base) +
                            " (this rank's iteration base is " + std::to_string(base) + ")");
    }
    if (reports[k].plan_version > job.state.version_counter) {
      return FieldError("iterations[" + std::to_string(k) + "].plan_version",
                        "job '" + job_id + "' has issued plan versions up to " +
                            std::to_string(job.state.version_counter) + ", not " + std::to_string(reports[k].plan_version));
    }
    reports[k].rank = rank;
    reports[k].iteration += base;
  }
  // The pipeline's samples change only once the reports are stored: a report
  // the client retries after an error is counted once.
  const int pipeline = locked->info->dp_rank;
  const std::map<int64_t, IterationSample> samples_before = job.windows[pipeline];
  const int64_t last_iteration_before = job.last_iteration;
  for (const IterationReport& r : reports) AddToWindow(job, r);
  ControlState before = job.state, state = job.state;
  bool changed = job.state.phase == Phase::kRunning && job.plans && DetectStragglers(job, &state);
  const bool warned = WarnAboutMismatches(job, rank, reports, &state);
  changed = warned || changed;
  StoreWrite write;
  write.job_id = job_id;
  write.iterations = std::move(reports);
  const size_t accepted = write.iterations.size();
  // The stored history keeps the newest `keep` iterations of each rank.
  const int64_t keep = 8 * job.spec.straggler.window + 64;
  int64_t& since_prune = job.stored_since_prune[rank];
  const bool prune = since_prune + static_cast<int64_t>(accepted) > keep;
  if (prune) write.keep_iterations_per_rank = keep;
  const Status st = changed ? CommitState(job, state, std::move(write)) : store_->Commit(write);
  if (!st.ok()) {
    job.windows[pipeline] = samples_before;
    job.last_iteration = last_iteration_before;
    if (warned) job.mismatch_warned.erase(rank);
    return st;
  }
  since_prune = prune ? 0 : since_prune + static_cast<int64_t>(accepted);
  RecordCompleteIterations(job, pipeline, before);
  if (changed) {
    ResetStaleWindows(job, before);
    LogWarnings(job_id, state.warnings, before.warnings.size());
    if (state.stragglers.size() != before.stragglers.size() || !state.stragglers.empty()) {
      Log("stragglers_detected", {{"job", job_id}, {"stragglers", StragglersJson(state.stragglers)}});
    }
  }
  return IterationsAccepted{accepted, job.state.stragglers};
}

Result<std::vector<Straggler>> JobService::DeclareStraggler(const std::string& job_id,
                                                            const protocol::StragglerDeclaration& declared) {
  Result<std::shared_ptr<Job>> found = FindJob(job_id);
  if (!found.ok()) return found.status();
  Job& job = **found;
  std::lock_guard<std::mutex> lock(job.mu);
  const int pipeline = declared.pipeline;
  const double slowdown = declared.slowdown;
  if (pipeline >= job.spec.dp) {
    return FieldError("pipeline", "expected an integer in [0, " + std::to_string(job.spec.dp - 1) + "], got " +
                                      std::to_string(pipeline));
  }
  if (job.state.phase != Phase::kRunning) {
    return Status::Unavailable("job '" + job_id + "' is not running (phase " + PhaseName(job.state.phase) + ")");
  }
  ControlState before = job.state, state = job.state;
  std::erase_if(state.stragglers, [&](const Straggler& s) { return s.pipeline == pipeline; });
  state.stragglers.push_back({pipeline, slowdown, false});
  std::sort(state.stragglers.begin(), state.stragglers.end(),
            [](const Straggler& a, const Straggler& b) { return a.pipeline < b.pipeline; });
  AssignPlans(job, &state);
  PERSEUS_RETURN_IF_ERROR(CommitState(job, state, {}));
  ResetStaleWindows(job, before);
  Log("straggler_declared", {{"job", job_id}, {"pipeline", pipeline}, {"slowdown", slowdown}});
  return state.stragglers;
}

Result<std::vector<Straggler>> JobService::ClearStraggler(const std::string& job_id, int pipeline) {
  Result<std::shared_ptr<Job>> found = FindJob(job_id);
  if (!found.ok()) return found.status();
  Job& job = **found;
  std::lock_guard<std::mutex> lock(job.mu);
  if (job.state.FindStraggler(pipeline) == nullptr) {
    return Status::NotFound("job '" + job_id + "': pipeline " + std::to_string(pipeline) + " is not a straggler");
  }
  ControlState before = job.state, state = job.state;
  std::erase_if(state.stragglers, [&](const Straggler& s) { return s.pipeline == pipeline; });
  AssignPlans(job, &state);
  PERSEUS_RETURN_IF_ERROR(CommitState(job, state, {}));
  ResetStaleWindows(job, before);
  Log("straggler_cleared", {{"job", job_id}, {"pipeline", pipeline}});
  return state.stragglers;
}

Json JobService::ProfilingSummary(const Job& job) {
  const ProfilingState& p = job.state.profiling;
  if (p.windows.empty()) return nullptr;
  Json j = {{"window", p.current}, {"windows", p.windows.size()}, {"rounds", p.rounds},
            {"reported", p.active() ? job.CountReported(p.current) : 0},
            {"clocks_per_stage", p.clocks_mhz.empty() ? 0 : p.clocks_mhz[0].size()}};
  if (p.active()) {
    const ProfilingWindowPlan& w = p.windows[p.current];
    Json stages = Json::array();
    for (size_t s = 0; s < w.stages.size(); ++s) {
      stages.push_back({{"stage", s}, {"forward_clock_mhz", p.clocks_mhz[s][w.stages[s].first]},
                        {"backward_clock_mhz", p.clocks_mhz[s][w.stages[s].second]}});
    }
    j["purpose"] = w.purpose;
    j["stages"] = stages;
  }
  return j;
}

namespace {

// Since the server started: complete iterations, their measured energy and
// the all-max prediction for the same iterations, plan switches.
Json PipelineTotalsJson(const JobHistory& history, int pipeline) {
  auto it = history.Totals().find(pipeline);
  const PipelineTotals t = it == history.Totals().end() ? PipelineTotals{} : it->second;
  return {{"iterations", t.iterations}, {"measured_iterations", t.measured_iterations},
          {"energy_j", t.energy_j}, {"all_max_energy_j", t.all_max_energy_j},
          {"predicted_energy_j", t.predicted_energy_j}, {"plan_switches", t.plan_switches}};
}

}  // namespace

Json JobService::Summary(const Job& job) const {
  const ControlState& st = job.state;
  Json j = {{"id", job.spec.id}, {"spec", RedactedJobSpecJson(job.spec)}, {"phase", PhaseName(st.phase)},
            {"error", st.error}, {"ranks_registered", job.registered}, {"world_size", job.spec.world_size()},
            {"blocking_power_w", st.blocking_power_w}, {"stragglers", StragglersJson(st.stragglers)}};
  j["profiling"] = ProfilingSummary(job);
  // How long the job's solve has run, while it runs (--max-solve-s stops it).
  j["solving_s"] = job.solve_started ? Json(std::chrono::duration<double>(std::chrono::steady_clock::now() -
                                                                          *job.solve_started).count())
                                     : Json(nullptr);
  j["warnings"] = protocol::JobWarningsToJson(st.warnings);
  Json pipelines = Json::array();
  for (size_t p = 0; p < st.pipelines.size() && job.plans; ++p) {
    const PlanCost plan = job.plans->Cost(st.pipelines[p]);
    std::vector<double> times;
    double energy = 0;
    int complete = 0;
    for (const auto& [it, s] : job.windows[p]) {
      if (static_cast<int>(s.ranks.size()) < job.ranks_per_pipeline()) continue;
      times.push_back(s.max_compute_time_s);
      energy += s.energy_j;
      ++complete;
    }
    Json pj = {{"pipeline", p}, {"plan_index", st.pipelines[p].plan_index}, {"version", st.pipelines[p].version},
               {"predicted_time_s", plan.time_s}, {"predicted_energy_j", plan.energy_j}};
    pj["clock_ceiling_mhz"] = st.pipelines[p].clock_ceiling_mhz > 0 ? Json(st.pipelines[p].clock_ceiling_mhz) : Json(nullptr);
    pj["measured_time_s"] = complete ? Json(Median(times)) : Json(nullptr);
    pj["measured_energy_j"] = complete ? Json(energy / complete) : Json(nullptr);
    pj["totals"] = PipelineTotalsJson(job.history, static_cast<int>(p));
    pipelines.push_back(pj);
  }
  j["pipelines"] = pipelines;
  if (job.spec.carbon) j["carbon"] = CarbonSummary(job);
  j["power_cap"] = PowerCapSummary(job);
  if (job.plans) {
    const Frontier& f = job.plans->frontier();
    j["frontier"] = {{"plans", f.plans.size()},
                     {"all_max", {{"time_s", f.all_max.time_s}, {"energy_j", f.all_max.energy_j}}},
                     {"fastest", {{"time_s", f.plans.front().time_s}, {"energy_j", f.plans.front().energy_j}}},
                     {"min_energy", {{"time_s", f.plans.back().time_s}, {"energy_j", f.plans.back().energy_j}}}};
  }
  return j;
}

}  // namespace perseus::server
