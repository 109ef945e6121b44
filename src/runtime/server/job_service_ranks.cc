// JobService: rank registration and the plan each rank runs.
#include <algorithm>
#include <functional>
#include <mutex>

#include "runtime/server/job_service.h"

namespace perseus::server {

namespace {

std::string Describe(const RankInfo& r) {
  return "rank " + std::to_string(r.rank) + " (" + r.gpu_uuid + " at dp " + std::to_string(r.dp_rank) + ", pp " +
         std::to_string(r.pp_rank) + ", tp " + std::to_string(r.tp_rank) + ")";
}

// Rank iteration numbers start at 0 in every process. The base a rank's
// numbers are offset by: the newest base while no iteration has been
// reported at it (every rank of one launch or restart registers before any
// of them can complete an iteration, so they all get it, even after a launch
// that failed before its first iteration); otherwise a new one past every
// iteration seen, kRestartGapIterations beyond the last to leave room for
// iterations the old processes still report.
constexpr int64_t kRestartGapIterations = 10000;

int64_t NextIterationBase(const Job& job) {
  int64_t newest = 0;
  for (const std::optional<RankInfo>& r : job.ranks) {
    if (r) newest = std::max(newest, r->iteration_base);
  }
  if (job.last_iteration < newest) return newest;
  return std::min(job.last_iteration + 1 + kRestartGapIterations, protocol::kMaxIteration / 2);
}

// A paused job's pause for one rank (docs/carbon.md, "Pausing in the server"):
// from the iteration the decision chose, in the rank's own count; a rank the
// server stops answering waits at most two windows (the next decision is due
// within one).
protocol::PlanPause PauseFor(const Job& job, const RankInfo& info) {
  const CarbonConfig& cfg = *job.spec.carbon;
  protocol::PlanPause pause;
  pause.hold_clock_mhz = info.sm_clocks_mhz.back();  // descending: the lowest
  pause.release = cfg.pause == CarbonPause::kRelease;
  pause.from_iteration = std::max<int64_t>(0, job.state.pause_from_iteration - info.iteration_base);
  pause.max_s = 2.0 * static_cast<double>(cfg.window_s);
  pause.reason = job.state.carbon.explanation.substr(0, 1024);
  return pause;
}

}  // namespace

Result<Registered> JobService::RegisterRank(const std::string& job_id, const RankInfo& rank) {
  Result<std::shared_ptr<Job>> found = FindJob(job_id);
  if (!found.ok()) {
    unknown_rank_requests_.fetch_add(1, std::memory_order_relaxed);
    return found.status();
  }
  Job& job = **found;
  std::lock_guard<std::mutex> lock(job.mu);
  if (job.deleted) return Status::NotFound("job '" + job_id + "' was deleted");
  job.last_activity_unix_s = Now();
  PERSEUS_RETURN_IF_ERROR(CheckRankFitsJob(rank, job.spec.dp, job.spec.pp, job.spec.tp));
  if (rank.sm_clocks_mhz.empty() || !std::is_sorted(rank.sm_clocks_mhz.begin(), rank.sm_clocks_mhz.end(), std::greater_equal<int>())) {
    return FieldError("sm_clocks_mhz", "expected distinct clocks, highest first (protocol::ParseRankRegistration)");
  }
  const std::optional<RankInfo>& existing = job.ranks[rank.rank];
  if (existing) {
    // A new process (another session) may land on another GPU of the same
    // model (a requeue on other nodes); anything else must match.
    const bool restarted = !rank.session.empty() && rank.session != existing->session;
    RankInfo same_gpu = rank;
    if (restarted && rank.gpu_name == existing->gpu_name) same_gpu.gpu_uuid = existing->gpu_uuid;
    if (!protocol::SameRankAndGpu(*existing, same_gpu)) {
      return Status::Unavailable("job '" + job_id + "': " + Describe(*existing) +
                                 " is already registered with different details" +
                                 (restarted ? " (a restarted rank must keep its dp/pp/tp ranks and GPU model)" : ""));
    }
    if (!restarted) return Registered{false, job.state.phase};  // a retried registration
    PERSEUS_RETURN_IF_ERROR(RestartRank(job_id, job, rank));
    return Registered{false, job.state.phase};
  }
  auto taken = job.by_coords.find({rank.dp_rank, rank.pp_rank, rank.tp_rank});
  if (taken != job.by_coords.end()) {
    return Status::Unavailable("job '" + job_id + "': " + Describe(*job.ranks[taken->second]) +
                               " already holds those dp/pp/tp ranks");
  }
  ControlState state = job.state;
  std::optional<RankInfo> saved = job.ranks[rank.rank];
  job.ranks[rank.rank] = rank;  // StartProfiling reads it; undone if the commit fails
  job.ranks[rank.rank]->iteration_base = NextIterationBase(job);
  bool last = job.registered + 1 == job.spec.world_size();
  if (last) StartProfiling(job, &state);
  StoreWrite write;
  write.rank = job.ranks[rank.rank];
  Status st = CommitState(job, state, std::move(write));
  if (!st.ok()) {
    job.ranks[rank.rank] = saved;
    return st;
  }
  job.IndexRank(*job.ranks[rank.rank]);
  return Registered{true, state.phase};
}

Status JobService::RestartRank(const std::string& job_id, Job& job, const RankInfo& rank) {
  RankInfo restarted = rank;
  restarted.iteration_base = NextIterationBase(job);
  StoreWrite write;
  write.job_id = job_id;
  write.rank = restarted;
  PERSEUS_RETURN_IF_ERROR(store_->Commit(write));
  job.ranks[rank.rank] = restarted;
  job.stored_since_prune[rank.rank] = 0;
  Log("rank_restarted", {{"job", job_id},
                         {"rank", rank.rank},
                         {"iteration_base", restarted.iteration_base},
                         {"hint", "a new process registered this rank: its iterations are numbered from the base"}});
  return Status::Ok();
}

Result<std::string> JobService::RankPlan(const std::string& job_id, int rank, int64_t known_version) {
  Result<LockedRank> locked = LockRank(job_id, rank);
  if (!locked.ok()) return locked.status();
  Job& job = *locked->job;
  const RankInfo& info = *locked->info;
  const int64_t version = job.RankVersion(info);
  if (version == known_version) return protocol::UnchangedPlanJson(version);
  const ControlState& st = job.state;
  protocol::RankPlan plan;
  plan.version = version;
  plan.job = job_id;
  plan.rank = rank;
  plan.phase = PhaseName(st.phase);
  if (!st.warnings.empty() && (st.phase == Phase::kRunning || st.phase == Phase::kFailed)) plan.warnings = st.warnings;
  if (st.phase == Phase::kRunning && job.plans) {
    plan.kind = protocol::PlanKind::kFrontier;
    const PipelinePlan& held = st.pipelines[info.dp_rank];
    plan.plan_index = held.plan_index;
    plan.predicted_time_s = job.plans->Cost(held).time_s;
    if (held.paused) {
      plan.kind = protocol::PlanKind::kPause;
      plan.pause = PauseFor(job, info);
    }
    return protocol::RankPlanJson(plan, *job.plans->StagePlanJson(plan.plan_index, info.pp_rank, held.clock_ceiling_mhz));
  }
  if (st.phase == Phase::kDone) {
    plan.kind = protocol::PlanKind::kReset;
    return protocol::RankPlanJson(plan, "[]");
  }
  if (st.phase == Phase::kProfiling && st.profiling.active()) {
    const ProfilingState& p = st.profiling;
    auto [f, b] = p.windows[p.current].stages[info.pp_rank];
    const ProfilingOptions& o = job.spec.profiling;
    plan.kind = protocol::PlanKind::kProfiling;
    plan.window = {p.current, o.warmup_iterations, o.window_iterations, p.clocks_mhz[info.pp_rank][f],
                   p.clocks_mhz[info.pp_rank][b], p.windows[p.current].purpose};
    return protocol::RankPlanJson(plan, WindowStagePlanJson(job.schedule, info.pp_rank, plan.window.forward_clock_mhz,
                                                            plan.window.backward_clock_mhz));
  }
  const int clock = info.sm_clocks_mhz.front();
  plan.kind = protocol::PlanKind::kMax;
  plan.sm_clock_mhz = clock;
  return protocol::RankPlanJson(plan, WindowStagePlanJson(job.schedule, info.pp_rank, clock, clock));
}

}  // namespace perseus::server
