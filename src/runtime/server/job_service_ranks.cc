// JobService: rank registration and the plan each rank runs.
#include <algorithm>
#include <mutex>

#include "runtime/server/job_service.h"

namespace perseus::server {

namespace {

Result<RankInfo> ParseRank(const Json& body, const JobSpec& spec) {
  RankInfo r;
  struct Field {
    const char* key;
    int* slot;
    int size;
  };
  Field fields[] = {{"rank", &r.rank, spec.world_size()},
                    {"dp_rank", &r.dp_rank, spec.dp},
                    {"pp_rank", &r.pp_rank, spec.pp},
                    {"tp_rank", &r.tp_rank, spec.tp}};
  for (const Field& f : fields) {
    Result<int64_t> v = GetInt(body, f.key, f.key, 0, f.size - 1);
    if (!v.ok()) return v.status();
    *f.slot = static_cast<int>(*v);
  }
  Result<std::string> name = GetString(body, "gpu_name", "gpu_name", 256);
  if (!name.ok()) return name.status();
  Result<std::string> uuid = GetString(body, "gpu_uuid", "gpu_uuid", 256);
  if (!uuid.ok()) return uuid.status();
  r.gpu_name = *name;
  r.gpu_uuid = *uuid;
  auto clocks = body.find("sm_clocks_mhz");
  if (clocks == body.end()) return FieldError("sm_clocks_mhz", "missing");
  if (!clocks->is_array() || clocks->empty() || clocks->size() > 4096) {
    return FieldError("sm_clocks_mhz", "expected a non-empty array of at most 4096 clocks, got " + Quote(*clocks));
  }
  for (size_t i = 0; i < clocks->size(); ++i) {
    const Json& c = (*clocks)[i];
    if (!c.is_number_integer() || c.get<int64_t>() < 1 || c.get<int64_t>() > 100000) {
      return FieldError("sm_clocks_mhz[" + std::to_string(i) + "]", "expected a clock in [1, 100000] MHz, got " +
                                                                       Quote(c));
    }
    r.sm_clocks_mhz.push_back(c.get<int>());
  }
  std::sort(r.sm_clocks_mhz.rbegin(), r.sm_clocks_mhz.rend());
  r.sm_clocks_mhz.erase(std::unique(r.sm_clocks_mhz.begin(), r.sm_clocks_mhz.end()), r.sm_clocks_mhz.end());
  return r;
}

bool SameRank(const RankInfo& a, const RankInfo& b) {
  return a.rank == b.rank && a.dp_rank == b.dp_rank && a.pp_rank == b.pp_rank && a.tp_rank == b.tp_rank &&
         a.gpu_name == b.gpu_name && a.gpu_uuid == b.gpu_uuid && a.sm_clocks_mhz == b.sm_clocks_mhz;
}

std::string Describe(const RankInfo& r) {
  return "rank " + std::to_string(r.rank) + " (" + r.gpu_uuid + " at dp " + std::to_string(r.dp_rank) + ", pp " +
         std::to_string(r.pp_rank) + ", tp " + std::to_string(r.tp_rank) + ")";
}

}  // namespace

Result<Reply> JobService::RegisterRank(const std::string& job_id, const Json& body) {
  Result<std::shared_ptr<Job>> found = FindJob(job_id);
  if (!found.ok()) {
    unknown_rank_requests_.fetch_add(1, std::memory_order_relaxed);
    return found.status();
  }
  Job& job = **found;
  std::lock_guard<std::mutex> lock(job.mu);
  if (job.deleted) return Status::NotFound("job '" + job_id + "' was deleted");
  job.last_activity_unix_s = Now();
  Result<RankInfo> info = ParseRank(body, job.spec);
  if (!info.ok()) return info.status();
  const std::optional<RankInfo>& existing = job.ranks[info->rank];
  if (existing) {
    if (!SameRank(*existing, *info)) {
      return Status::Unavailable("job '" + job_id + "': " + Describe(*existing) +
                                 " is already registered with different details");
    }
    return Reply{200, {{"job", job_id}, {"rank", info->rank}, {"created", false}}};
  }
  auto taken = job.by_coords.find({info->dp_rank, info->pp_rank, info->tp_rank});
  if (taken != job.by_coords.end()) {
    return Status::Unavailable("job '" + job_id + "': " + Describe(*job.ranks[taken->second]) +
                               " already holds those dp/pp/tp ranks");
  }
  ControlState state = job.state;
  std::optional<RankInfo> saved = job.ranks[info->rank];
  job.ranks[info->rank] = *info;  // StartProfiling reads it; undone if the commit fails
  bool last = job.registered + 1 == job.spec.world_size();
  if (last) StartProfiling(job, &state);
  StoreWrite write;
  write.rank = *info;
  Status st = CommitState(job, state, std::move(write));
  if (!st.ok()) {
    job.ranks[info->rank] = saved;
    return st;
  }
  job.IndexRank(*job.ranks[info->rank]);
  return Reply{201, {{"job", job_id}, {"rank", info->rank}, {"created", true}, {"phase", PhaseName(state.phase)}}};
}

Result<std::string> JobService::RankPlan(const std::string& job_id, int rank, int64_t known_version) {
  Result<LockedRank> locked = LockRank(job_id, rank);
  if (!locked.ok()) return locked.status();
  Job& job = *locked->job;
  const RankInfo& info = *locked->info;
  const int64_t version = job.RankVersion(info);
  if (version == known_version) {
    return std::string("{\"changed\":false,\"version\":") + std::to_string(version) + "}";
  }
  const ControlState& st = job.state;
  Json head = {{"changed", true}, {"version", version}, {"job", job_id}, {"rank", rank},
               {"phase", PhaseName(st.phase)}};
  std::string instructions;
  if (st.phase == Phase::kRunning && job.plans) {
    int index = st.pipelines[info.dp_rank].plan_index;
    head["kind"] = "frontier";
    head["plan_index"] = index;
    head["predicted_time_s"] = job.plans->frontier().plans[index].time_s;
    instructions = *job.plans->StagePlanJson(index, info.pp_rank);
  } else if (st.phase == Phase::kDone) {
    head["kind"] = "reset";
    instructions = "[]";
  } else if (st.phase == Phase::kProfiling && st.profiling.active()) {
    const ProfilingState& p = st.profiling;
    auto [f, b] = p.windows[p.current].stages[info.pp_rank];
    const int forward_mhz = p.clocks_mhz[info.pp_rank][f], backward_mhz = p.clocks_mhz[info.pp_rank][b];
    const ProfilingOptions& o = job.spec.profiling;
    head["kind"] = "profiling";
    head["window"] = {{"id", p.current}, {"warmup_iterations", o.warmup_iterations},
                      {"iterations", o.window_iterations}, {"forward_clock_mhz", forward_mhz},
                      {"backward_clock_mhz", backward_mhz}, {"purpose", p.windows[p.current].purpose}};
    instructions = WindowStagePlanJson(job.schedule, info.pp_rank, forward_mhz, backward_mhz);
  } else {
    const int clock = info.sm_clocks_mhz.front();
    head["kind"] = "max";
    head["sm_clock_mhz"] = clock;
    instructions = WindowStagePlanJson(job.schedule, info.pp_rank, clock, clock);
  }
  if (!st.warnings.empty() && (st.phase == Phase::kRunning || st.phase == Phase::kFailed)) {
    head["warnings"] = JobWarningsJson(st.warnings);
  }
  std::string text = head.dump();
  text.pop_back();
  return text + ",\"instructions\":" + instructions + "}";
}

}  // namespace perseus::server
