// RankClient: the background thread that talks to the server.
#include <chrono>

#include "runtime/client/rank_client.h"

namespace perseus::client {

using Json = nlohmann::json;

namespace {

constexpr size_t kMaxIterationsPerPost = 1000;

std::string RankPath(const RankIdentity& id, const std::string& tail) {
  return "/jobs/" + id.job + "/ranks/" + std::to_string(id.rank) + tail;
}

Json TotalsJson(int64_t count, double time_s, double energy_j, bool with_count) {
  Json j = {{"time_s", time_s}, {"energy_j", energy_j}};
  if (with_count) j["count"] = count;
  return j;
}

}  // namespace

void RankClient::NoteError(const Status& status) {
  std::lock_guard<std::mutex> lock(mu_);
  stats_.last_error = status.ToString();
}

void RankClient::SyncLoop() {
  ServerApi api(options_.server);
  while (true) {
    bool registered;
    {
      std::lock_guard<std::mutex> lock(mu_);
      if (stop_) return;
      registered = stats_.registered;
    }
    bool ok = registered || Register(api);
    if (ok) {
      ok = PollPlan(api) && ok;
      ok = SendReports(api) && ok;
    }
    std::unique_lock<std::mutex> lock(mu_);
    stats_.connected = api.reached_server();
    auto wait = std::chrono::milliseconds(ok ? options_.poll_interval_ms : options_.retry_interval_ms);
    cv_.wait_for(lock, wait, [&] { return stop_ || flush_; });
    flush_ = false;
  }
}

bool RankClient::Register(ServerApi& api) {
  const RankIdentity& id = options_.identity;
  Json body = {{"rank", id.rank},         {"dp_rank", id.dp_rank},       {"pp_rank", id.pp_rank},
               {"tp_rank", id.tp_rank},   {"gpu_name", gpu_->Name()},    {"gpu_uuid", gpu_->Uuid()},
               {"sm_clocks_mhz", clocks_mhz_}};
  Result<Json> reply = api.Post("/jobs/" + id.job + "/ranks", body);
  if (!reply.ok()) {
    NoteError(reply.status());
    return false;
  }
  std::lock_guard<std::mutex> lock(mu_);
  stats_.registered = true;
  return true;
}

bool RankClient::PollPlan(ServerApi& api) {
  int64_t known;
  {
    std::lock_guard<std::mutex> lock(mu_);
    known = pending_ ? pending_->version : -1;
  }
  Result<std::optional<RankPlan>> plan = api.FetchPlan(options_.identity.job, options_.identity.rank, known);
  if (!plan.ok()) {
    NoteError(plan.status());
    if (plan.status().code() == Status::Code::kNotFound) {
      std::lock_guard<std::mutex> lock(mu_);
      stats_.registered = false;  // e.g. a server started on a fresh database: register again
    }
    return false;
  }
  if (!plan->has_value()) {
    std::lock_guard<std::mutex> lock(mu_);
    stats_.connected = true;
    return true;
  }
  auto fresh = std::make_shared<const RankPlan>(std::move(**plan));
  if (fresh->kind == PlanKind::kReset) controller_->Request(ClockController::kUnlocked);
  std::lock_guard<std::mutex> lock(mu_);
  stats_.connected = true;
  stats_.plan_version = fresh->version;
  stats_.plan_kind = PlanKindName(fresh->kind);
  stats_.plan_index = fresh->plan_index;
  ++stats_.plans_received;
  pending_ = std::move(fresh);
  has_pending_.store(true, std::memory_order_release);
  return true;
}

bool RankClient::SendReports(ServerApi& api) {
  std::vector<IterationRecord> iterations;
  iterations.reserve(kMaxQueuedIterations);
  std::vector<StepMeasurement> measurements;
  {
    std::lock_guard<std::mutex> lock(mu_);
    iterations.swap(iterations_out_);
    measurements.swap(measurements_out_);
  }
  bool ok = true;
  size_t sent = 0;
  while (sent < iterations.size()) {
    Json list = Json::array();
    size_t end = std::min(iterations.size(), sent + kMaxIterationsPerPost);
    for (size_t i = sent; i < end; ++i) {
      const IterationRecord& r = iterations[i];
      list.push_back({{"iteration", r.iteration}, {"compute_time_s", std::max(r.compute_time_s, 1e-9)},
                      {"energy_j", std::max(r.energy_j, 0.0)}, {"plan_version", r.plan_version}});
    }
    Result<Json> reply = api.Post(RankPath(options_.identity, "/iterations"), {{"iterations", list}});
    if (!reply.ok() && !api.reached_server()) {
      ok = false;
      break;  // keep the rest for the next attempt
    }
    if (!reply.ok()) NoteError(reply.status());  // the server refused them: drop
    sent = end;
  }
  size_t measured = 0;
  for (; measured < measurements.size() && ok; ++measured) {
    const StepMeasurement& m = measurements[measured];
    Json body = {{"sm_clock_mhz", m.sm_clock_mhz},
                 {"iterations", m.iterations},
                 {"forward", TotalsJson(m.forward.count, m.forward.time_s, m.forward.energy_j, true)},
                 {"backward", TotalsJson(m.backward.count, m.backward.time_s, m.backward.energy_j, true)},
                 {"blocking", TotalsJson(0, m.blocking.time_s, std::max(m.blocking.energy_j, 0.0), false)}};
    Result<Json> reply = api.Post(RankPath(options_.identity, "/measurements"), body);
    if (!reply.ok() && !api.reached_server()) {
      ok = false;
      break;
    }
    // A late report for a clock the stage already left (409) is expected: drop it quietly.
    if (!reply.ok() && reply.status().code() != Status::Code::kUnavailable) NoteError(reply.status());
  }
  std::lock_guard<std::mutex> lock(mu_);
  stats_.iterations_sent += static_cast<int64_t>(sent);
  stats_.measurements_sent += static_cast<int64_t>(measured);
  // Put back what could not be sent, oldest first, within the queue's bound.
  if (sent < iterations.size()) {
    std::vector<IterationRecord> rest(iterations.begin() + static_cast<long>(sent), iterations.end());
    rest.insert(rest.end(), iterations_out_.begin(), iterations_out_.end());
    if (rest.size() > kMaxQueuedIterations) {
      rest.erase(rest.begin(), rest.begin() + static_cast<long>(rest.size() - kMaxQueuedIterations));
    }
    iterations_out_.assign(rest.begin(), rest.end());
  }
  if (measured < measurements.size()) {
    measurements.erase(measurements.begin(), measurements.begin() + static_cast<long>(measured));
    measurements.insert(measurements.end(), measurements_out_.begin(), measurements_out_.end());
    measurements_out_.swap(measurements);
  }
  return ok;
}

RankClientStats RankClient::Stats() const {
  std::lock_guard<std::mutex> lock(mu_);
  RankClientStats s = stats_;
  s.iterations = iterations_done_.load(std::memory_order_relaxed);
  s.schedule_mismatches = mismatches_.load(std::memory_order_relaxed);
  s.clock_changes = controller_->clock_changes();
  s.requested_clock_mhz = controller_->requested();
  s.applied_clock_mhz = controller_->applied();
  if (s.last_error.empty() && controller_->errors() > 0) s.last_error = controller_->last_error();
  return s;
}

}  // namespace perseus::client
