// JobService: running under a power cap (docs/power.md). The decision is the
// control library's (control/power_cap.h); this file keeps the cap in force,
// measures the job's power, and alternates the two settings of the capped
// mix within each cap window.
#include <cmath>
#include <mutex>

#include "control/power_cap.h"
#include "runtime/server/job_service.h"

namespace perseus::server {

namespace {

// The spec's cap applies until the API sets or clears one.
void AdoptSpecCap(const Job& job, PowerCapState* p) {
  if (p->from_api || p->set || !job.spec.power_cap) return;
  p->set = true;
  p->cap = *job.spec.power_cap;
}

// The schedule's cap at `now` applies until the API sets or clears one.
void AdoptScheduledCap(const Job& job, int64_t now_unix_s, PowerCapState* p) {
  if (p->from_api || !job.cap_schedule) return;
  std::optional<protocol::PowerCapRequest> cap = job.cap_schedule->At(now_unix_s);
  p->set = cap.has_value();
  if (cap) p->cap = *cap;
}

// The cap in force: the job's own (spec, schedule or API) and its share of
// the server's, whichever is lower on average (the peak and window are the
// own cap's when it has one).
std::optional<protocol::PowerCapRequest> CapInForce(const Job& job, const PowerCapState& p) {
  if (!p.set) return job.server_cap_share;
  protocol::PowerCapRequest cap = p.cap;
  if (job.server_cap_share) cap.average_w = std::min(cap.average_w, job.server_cap_share->average_w);
  return cap;
}

bool MayHaveCap(const Job& job) {
  const PowerCapState& p = job.state.power_cap;
  return p.set || job.server_cap_share || (!p.from_api && (job.spec.power_cap || job.cap_schedule));
}

// The job's settings, their hull and the mix under `in_force` (nullopt: no
// cap, the fastest setting).
control::CappedPlan CappedPlanFor(const Job& job, const ControlState& state,
                                  const std::optional<protocol::PowerCapRequest>& in_force) {
  std::vector<double> slowdowns(job.spec.dp, 1.0);
  for (const Straggler& s : state.stragglers) {
    if (s.pipeline >= 0 && s.pipeline < job.spec.dp) slowdowns[s.pipeline] = s.slowdown;
  }
  const Problem& problem = job.plans->problem();
  const double pipeline_blocking_w = problem.pipeline_blocking_power_w();
  control::PowerCap cap;
  if (in_force) cap = {in_force->average_w, in_force->peak_w};
  return control::PlanUnderPowerCap(
      control::CapSettings(job.plans->frontier(), pipeline_blocking_w, slowdowns, job.plans->ceilings()), cap,
      job.power_correction);
}

control::CappedPlan CappedPlanFor(const Job& job, const ControlState& state) {
  return CappedPlanFor(job, state, CapInForce(job, state.power_cap));
}

// The job's measured power (every pipeline over its complete iterations under
// its current plan) and the same pipelines' predicted power; 0, 0 until every
// pipeline has one.
std::pair<double, double> MeasuredAndPredictedW(const Job& job) {
  double measured_w = 0, predicted_w = 0;
  for (int p = 0; p < job.spec.dp; ++p) {
    double energy_j = 0, time_s = 0;
    for (const auto& [iteration, s] : job.windows[p]) {
      if (static_cast<int>(s.ranks.size()) < job.ranks_per_pipeline() || s.energy_j <= 0) continue;
      energy_j += s.energy_j;
      time_s += s.max_compute_time_s;
    }
    if (time_s <= 0) return {0, 0};
    measured_w += energy_j / time_s;
    const PlanCost plan = job.plans->Cost(job.state.pipelines[p]);
    predicted_w += plan.energy_j / plan.time_s;
  }
  return {measured_w, predicted_w};
}

}  // namespace

void JobService::ApplyPowerCap(const Job& job, ControlState* state, std::vector<int>* plans,
                               std::vector<int>* ceilings) {
  PowerCapState& p = state->power_cap;
  AdoptSpecCap(job, &p);
  if (!CapInForce(job, p)) return;
  const control::CappedPlan capped = CappedPlanFor(job, *state);
  if (capped.mix.fast == capped.mix.slow) p.run_fast = true;
  const control::JobSetting& setting = capped.settings[p.run_fast ? capped.mix.fast : capped.mix.slow];
  for (size_t i = 0; i < plans->size(); ++i) {
    (*plans)[i] = std::max((*plans)[i], setting.plan_index[i]);
    (*ceilings)[i] = setting.clock_ceiling_mhz;
  }
}

Result<Json> JobService::SetPowerCap(const std::string& job_id, const std::optional<protocol::PowerCapRequest>& cap) {
  Result<std::shared_ptr<Job>> found = FindJob(job_id);
  if (!found.ok()) return found.status();
  Job& job = **found;
  std::lock_guard<std::mutex> lock(job.mu);
  if (job.deleted) return Status::NotFound("job '" + job_id + "' was deleted");
  ControlState before = job.state, state = job.state;
  state.power_cap.from_api = true;
  state.power_cap.set = cap.has_value();
  if (cap) state.power_cap.cap = *cap;
  state.power_cap.run_fast = true;
  AssignPlans(job, &state);
  PERSEUS_RETURN_IF_ERROR(CommitState(job, state, {}));
  ResetStaleWindows(job, before);
  Log(cap ? "power_cap_set" : "power_cap_cleared",
      {{"job", job_id}, {"cap", cap ? protocol::PowerCapRequestToJson(*cap) : Json(nullptr)}});
  return PowerCapSummary(job);
}

void JobService::PowerCapTick() {
  const int64_t now = Now();
  ShareServerPowerCap();
  for (const std::shared_ptr<Job>& found : jobs_.All()) {
    Job& job = *found;
    std::lock_guard<std::mutex> lock(job.mu);
    if (job.deleted || job.state.phase != Phase::kRunning || !job.plans) continue;
    if (!MayHaveCap(job)) continue;
    // Until the current plans have measured iterations, the last measurement stands.
    auto [measured_w, predicted_w] = MeasuredAndPredictedW(job);
    if (measured_w > 0 && predicted_w > 0) {
      job.measured_power_w = measured_w;
      job.power_correction = measured_w / predicted_w;
    }
    ControlState before = job.state, state = job.state;
    AdoptSpecCap(job, &state.power_cap);
    AdoptScheduledCap(job, now, &state.power_cap);
    if (const std::optional<protocol::PowerCapRequest> cap = CapInForce(job, state.power_cap)) {
      const control::CappedPlan capped = CappedPlanFor(job, state, cap);
      state.power_cap.run_fast = control::FastPartOfWindow(capped.mix.fast_share, cap->window_s, static_cast<double>(now));
    }
    AssignPlans(job, &state);
    bool changed = state.power_cap.run_fast != before.power_cap.run_fast || state.power_cap.set != before.power_cap.set;
    for (size_t p = 0; p < state.pipelines.size(); ++p) changed = changed || state.pipelines[p].version != before.pipelines[p].version;
    if (!changed) continue;
    if (!CommitState(job, state, {}).ok()) continue;  // the next tick retries
    ResetStaleWindows(job, before);
  }
}

Status JobService::LoadServerPowerCap() {
  Result<std::map<std::string, std::string>> settings = store_->LoadSettings();
  if (!settings.ok()) return settings.status();
  auto found = settings->find(kServerPowerCapKey);
  if (found == settings->end()) return Status::Ok();
  const Json j = Json::parse(found->second, nullptr, false);
  Result<protocol::PowerCapRequest> cap =
      j.is_object() ? protocol::ParsePowerCapRequest(j, "") : Result<protocol::PowerCapRequest>(
                                                                  Status::InvalidArgument("not a JSON object"));
  std::lock_guard<std::mutex> lock(server_cap_mu_);
  if (!cap.ok()) {
    // Not fatal: the jobs are served, the error is shown until a PUT or DELETE replaces it.
    server_cap_error_ = "stored server power cap: " + cap.status().message();
    if (log_ != nullptr) log_->Error("server_power_cap_unreadable", {{"error", server_cap_error_}});
    return Status::Ok();
  }
  server_cap_ = *cap;
  return Status::Ok();
}

Result<Json> JobService::SetServerPowerCap(const std::optional<protocol::PowerCapRequest>& cap) {
  {
    std::lock_guard<std::mutex> lock(server_cap_mu_);
    PERSEUS_RETURN_IF_ERROR(store_->PutSetting(
        kServerPowerCapKey, cap ? std::optional<std::string>(protocol::PowerCapRequestToJson(*cap).dump()) : std::nullopt));
    server_cap_ = cap;
    server_cap_error_.clear();
  }
  Log(cap ? "server_power_cap_set" : "server_power_cap_cleared",
      {{"cap", cap ? protocol::PowerCapRequestToJson(*cap) : Json(nullptr)}});
  PowerCapTick();  // in force at once
  return ServerPowerCapJson();
}

void JobService::ShareServerPowerCap() {
  std::optional<protocol::PowerCapRequest> cap;
  {
    std::lock_guard<std::mutex> lock(server_cap_mu_);
    cap = server_cap_;
  }
  // Each running job's hull without a cap, one job's lock at a time.
  std::vector<std::shared_ptr<Job>> sharing;
  std::vector<control::SharedCapJob> parts;
  std::vector<bool> paused;
  for (const std::shared_ptr<Job>& found : jobs_.All()) {
    Job& job = *found;
    std::lock_guard<std::mutex> lock(job.mu);
    const bool is_paused = job.CarbonPaused(job.state);
    // A paused job keeps its last running share: a decision that resumes it
    // before the next tick runs it under that, not under its pause power.
    if (!cap || !is_paused) job.server_cap_share.reset();
    if (!cap || job.deleted || job.state.phase != Phase::kRunning || !job.plans) continue;
    const double weight = static_cast<double>(job.spec.dp * job.spec.pp * job.spec.tp);
    sharing.push_back(found);
    paused.push_back(is_paused);
    if (is_paused) {  // it draws its pause power, and the rest of its share goes to the others
      parts.push_back({{control::RatePower{-1, 0, job.PausedPowerW()}}, 1, weight, 0});
      continue;
    }
    PowerCapState own = job.state.power_cap;
    AdoptSpecCap(job, &own);
    const control::CappedPlan free = CappedPlanFor(job, job.state, std::nullopt);
    parts.push_back({free.hull, job.power_correction, weight, own.set ? own.cap.average_w : 0});
  }
  const control::CapShares shares = control::ShareCap(parts, cap ? cap->average_w : 0);
  std::vector<std::pair<std::string, double>> given;
  for (size_t k = 0; k < sharing.size(); ++k) {
    Job& job = *sharing[k];
    std::lock_guard<std::mutex> lock(job.mu);
    if (job.deleted) continue;
    if (!paused[k]) job.server_cap_share = protocol::PowerCapRequest{shares.power_w[k], 0, cap->window_s};
    given.emplace_back(job.spec.id, shares.power_w[k]);
  }
  std::lock_guard<std::mutex> lock(server_cap_mu_);
  server_cap_shares_ = std::move(given);
  server_cap_feasible_ = shares.feasible;
}

Json JobService::ServerPowerCapJson() {
  std::lock_guard<std::mutex> lock(server_cap_mu_);
  Json j = {{"cap", server_cap_ ? protocol::PowerCapRequestToJson(*server_cap_) : Json(nullptr)},
            {"feasible", server_cap_feasible_}, {"jobs", Json::array()}};
  double total_w = 0;
  for (const auto& [id, share_w] : server_cap_shares_) {
    j["jobs"].push_back({{"id", id}, {"share_w", share_w}});
    total_w += share_w;
  }
  j["shared_w"] = total_w;
  j["error"] = server_cap_error_.empty() ? Json(nullptr) : Json(server_cap_error_);
  return j;
}

Json JobService::PowerCapSummary(const Job& job) {
  PowerCapState p = job.state.power_cap;
  AdoptSpecCap(job, &p);
  const std::optional<protocol::PowerCapRequest> cap = CapInForce(job, p);
  if (!cap) return Json(nullptr);
  const char* source = !p.set ? "server" : p.from_api ? "api" : job.cap_schedule ? "schedule" : "spec";
  Json j = {{"average_w", cap->average_w}, {"window_s", cap->window_s}, {"source", source},
            {"running", p.run_fast ? "fast" : "slow"}, {"correction", job.power_correction}};
  j["own_average_w"] = p.set ? Json(p.cap.average_w) : Json(nullptr);
  j["server_share_w"] = job.server_cap_share ? Json(job.server_cap_share->average_w) : Json(nullptr);
  j["peak_w"] = cap->peak_w > 0 ? Json(cap->peak_w) : Json(nullptr);
  j["measured_w"] = job.measured_power_w > 0 ? Json(job.measured_power_w) : Json(nullptr);
  // The decision now, as the next tick makes it (null until the job runs).
  j["predicted_w"] = j["fast_share"] = j["feasible"] = Json(nullptr);
  if (job.plans && job.CarbonPaused(job.state)) {
    j["running"] = "paused";
    j["predicted_w"] = job.PausedPowerW();
    j["feasible"] = true;
    // The split counts it at that power (server_cap_share keeps its running share for its resume).
    if (job.server_cap_share) j["server_share_w"] = job.PausedPowerW();
  } else if (job.state.phase == Phase::kRunning && job.plans) {
    ControlState state = job.state;
    state.power_cap = p;
    const control::CappedPlan capped = CappedPlanFor(job, state);
    j["predicted_w"] = capped.PowerW();
    j["fast_share"] = capped.mix.fast_share;
    j["feasible"] = capped.feasible;
  }
  return j;
}

}  // namespace perseus::server
