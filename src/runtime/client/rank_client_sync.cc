// RankClient: the background thread that talks to the server.
#include <chrono>

#include "runtime/client/rank_client.h"
#include "runtime/protocol/rank_messages.h"

namespace perseus::client {

using Json = nlohmann::json;

namespace {

std::string RankPath(const RankIdentity& id, const std::string& tail) {
  return "/jobs/" + id.job + "/ranks/" + std::to_string(id.rank) + tail;
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
      ok = SendWindows(api) && ok;
    }
    CheckAchievedClock();
    if (hook_warning_ready_.load(std::memory_order_acquire)) {
      std::string message = hook_warning_;
      hook_warning_ready_.store(false, std::memory_order_release);
      RaiseWarning("schedule_mismatch", std::move(message));
    }
    if (controller_->errors() > 0) {
      RaiseWarning("clock_set", "GPU of rank " + std::to_string(options_.identity.rank) +
                                    ": setting the SM clock failed: " + controller_->last_error());
    }
    std::vector<std::shared_ptr<const RankPlan>> retired;
    std::unique_lock<std::mutex> lock(mu_);
    retired.swap(retired_plans_);  // freed below, off the training thread
    stats_.connected = api.reached_server();
    auto wait = std::chrono::milliseconds(ok ? options_.poll_interval_ms : options_.retry_interval_ms);
    cv_.wait_for(lock, wait, [&] { return stop_ || flush_; });
    flush_ = false;
  }
}

bool RankClient::Register(ServerApi& api) {
  const RankIdentity& id = options_.identity;
  const protocol::RankRegistration registration{id.rank,      id.dp_rank,   id.pp_rank,  id.tp_rank,
                                                gpu_->Name(), gpu_->Uuid(), clocks_mhz_, session_, 0};
  Result<Json> reply = api.Post("/jobs/" + id.job + "/ranks", protocol::RankRegistrationToJson(registration));
  if (!reply.ok()) {
    NoteError(reply.status());
    if (api.reached_server() && reply.status().code() != Status::Code::kUnavailable) {
      RaiseWarning("register", "rank " + std::to_string(id.rank) + " could not register with job '" + id.job +
                   "': " + reply.status().message() + " (check the job id and the rank's coordinates)");
    }
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
    last_contact_s_ = Now();
    return true;
  }
  auto fresh = std::make_shared<const RankPlan>(std::move(**plan));
  if (fresh->kind == PlanKind::kReset) controller_->Request(ClockController::kUnlocked);
  for (const protocol::JobWarning& w : fresh->warnings) {
    RaiseWarning("server/" + w.Key(), "job '" + options_.identity.job + "': " + w.message);
  }
  std::lock_guard<std::mutex> lock(mu_);
  stats_.connected = true;
  stats_.plan_version = fresh->version;
  stats_.plan_kind = PlanKindName(fresh->kind);
  stats_.plan_index = fresh->plan_index;
  ++stats_.plans_received;
  const bool pause = fresh->kind == PlanKind::kPause;
  pause_release_.store(pause && fresh->pause.release, std::memory_order_relaxed);
  pause_from_iteration_.store(pause ? fresh->pause.from_iteration : -1, std::memory_order_release);
  pending_ = std::move(fresh);
  last_contact_s_ = Now();
  has_pending_.store(true, std::memory_order_release);
  plan_cv_.notify_all();
  return true;
}

namespace {

constexpr double kGiveUpOnEnergyS = 5;    // an iteration is reported without energy after this
constexpr double kGiveUpOnWindowS = 30;   // a window is reported as unmeasured after this

}  // namespace

RankClient::FrameworkDurations RankClient::CollectFrameworkDurations(const WindowRecord& record) {
  const size_t iterations = record.step_begin_s.size() - 1;
  // The hooks' computations of each iteration (recorded at each step's start).
  std::vector<size_t> hooks_per_iteration(iterations, 0);
  for (size_t i = 0; i < iterations; ++i) {
    const size_t end = i + 1 < record.step_first_computation.size() ? record.step_first_computation[i + 1]
                                                                     : record.computations.size();
    hooks_per_iteration[i] = end - record.step_first_computation[i];
  }
  FrameworkDurations out;
  std::lock_guard<std::mutex> lock(mu_);
  for (size_t i = 0; i < iterations; ++i) {
    const int64_t iteration = record.first_iteration + static_cast<int64_t>(i);
    auto it = framework_durations_.find(iteration);
    if (it == framework_durations_.end()) return out;
    if (it->second.size() != hooks_per_iteration[i] && !out.mismatch) {
      out.mismatch = "rank " + std::to_string(options_.identity.rank) + ": record_durations gave " +
                     std::to_string(it->second.size()) + " durations for iteration " + std::to_string(iteration) +
                     ", whose hooks saw " + std::to_string(hooks_per_iteration[i]) +
                     " computations; profiling uses the hooks' timestamps instead (pass one duration per "
                     "on_instruction_begin/end pair, in the same order)";
    }
    out.seconds.insert(out.seconds.end(), it->second.begin(), it->second.end());
  }
  out.complete = true;
  return out;
}

// Durations come from the hooks' timestamps, or from the framework when it
// measures them (all iterations of the window must have arrived).
std::optional<Json> RankClient::WindowReport(const WindowRecord& record, bool give_up_waiting) {
  const double begin_s = record.step_begin_s.front(), end_s = record.step_begin_s.back();
  std::optional<double> energy_j = meter_->EnergyBetweenJ(begin_s, end_s);
  if (!energy_j && !give_up_waiting) return std::nullopt;
  const int iterations = static_cast<int>(record.step_begin_s.size()) - 1;
  std::vector<double> seconds;
  bool framework = options_.framework_durations;
  if (framework) {
    const FrameworkDurations found = CollectFrameworkDurations(record);
    if (!found.complete && !give_up_waiting) return std::nullopt;
    if (found.mismatch) RaiseWarning("framework_durations_count", *found.mismatch);
    framework = found.complete && !found.mismatch;
    if (framework) seconds = found.seconds;
  }
  protocol::WindowReport report;
  for (size_t i = 0; i < record.computations.size(); ++i) {
    const ComputationTiming& c = record.computations[i];
    const double d = framework ? seconds[i] : c.end_s - c.begin_s;
    if (!(d >= 0)) continue;
    (c.instruction == Instruction::kForward ? report.forward : report.backward).Add(d);
  }
  report.window = static_cast<int>(record.window.id);
  report.forward_clock_mhz = record.window.forward_clock_mhz;
  report.backward_clock_mhz = record.window.backward_clock_mhz;
  report.iterations = iterations;
  report.cycle_time_s = end_s - begin_s;
  report.mid_s = std::max(0.0, (begin_s + end_s) / 2);
  report.late_clocks = record.late_clocks;
  report.durations = framework ? "framework" : "hooks";
  report.energy_j = energy_j.value_or(-1);
  report.clock_switch_latency_s = controller_->switch_latency_s();
  std::lock_guard<std::mutex> lock(mu_);
  report.achieved_clock_mhz = stats_.achieved_clock_mhz > 0 ? stats_.achieved_clock_mhz : 0;
  return protocol::WindowReportToJson(report);
}

bool RankClient::SendWindows(ServerApi& api) {
  std::vector<WindowRecord> records;
  {
    std::lock_guard<std::mutex> lock(mu_);
    records.swap(windows_out_);
  }
  bool ok = true;
  size_t done = 0;
  for (; done < records.size() && ok; ++done) {
    const WindowRecord& r = records[done];
    const bool give_up = Now() - r.step_begin_s.back() > kGiveUpOnWindowS;
    std::optional<Json> report = WindowReport(r, give_up);
    if (!report) break;
    if (!report->contains("energy_j")) {
      const EnergyMeter::Stats m = meter_->GetStats();
      RaiseWarning("energy_counter",
                   "GPU of rank " + std::to_string(options_.identity.rank) +
                       ": the energy counter did not step past a profiling window within " +
                       std::to_string(static_cast<int>(kGiveUpOnWindowS)) + " s (" + std::to_string(m.steps) +
                       " steps seen" + (m.last_error.empty() ? "" : ", last read error: " + m.last_error) +
                       "); the window is reported without energy");
    }
    Result<Json> reply = api.Post(RankPath(options_.identity, "/windows"), *report);
    if (!reply.ok() && !api.reached_server()) {
      ok = false;
      break;
    }
    // A report for a window the job already left (409) is expected: drop it quietly.
    if (!reply.ok() && reply.status().code() != Status::Code::kUnavailable) {
      NoteError(reply.status());
      RaiseWarning("window_refused", "rank " + std::to_string(options_.identity.rank) +
                                         ": the server refused a profiling window's report (" +
                                         reply.status().message() + "); profiling waits for every rank's report");
    }
    if (reply.ok()) {
      std::lock_guard<std::mutex> lock(mu_);
      ++stats_.windows_sent;
    }
  }
  std::lock_guard<std::mutex> lock(mu_);
  if (done < records.size()) {
    records.erase(records.begin(), records.begin() + static_cast<long>(done));
    for (WindowRecord& w : windows_out_) records.push_back(std::move(w));
    windows_out_.swap(records);
  }
  return ok;
}

bool RankClient::SendReports(ServerApi& api) {
  std::vector<IterationRecord> iterations;
  iterations.reserve(kMaxQueuedIterations);
  {
    std::lock_guard<std::mutex> lock(mu_);
    iterations.swap(iterations_out_);
  }
  // Hold back iterations whose energy the counter has not stepped past yet.
  size_t ready = 0;
  std::vector<double> energies;
  for (; ready < iterations.size(); ++ready) {
    const IterationRecord& r = iterations[ready];
    std::optional<double> e;
    if (options_.measure_iteration_energy) {
      e = meter_->EnergyBetweenJ(r.begin_s, r.end_s);
      if (!e && Now() - r.end_s < kGiveUpOnEnergyS) break;
    }
    energies.push_back(e.value_or(0));
  }
  bool ok = true;
  size_t sent = 0, dropped = 0;
  while (sent < ready) {
    std::vector<protocol::IterationReport> batch;
    size_t end = std::min(ready, sent + protocol::kMaxIterationsPerReport);
    for (size_t i = sent; i < end; ++i) {
      const IterationRecord& r = iterations[i];
      protocol::IterationReport item;
      item.iteration = r.iteration;
      item.compute_time_s = std::max(r.end_s - r.begin_s, 1e-9);
      item.energy_j = energies[i];
      item.plan_version = r.plan_version;
      item.schedule_mismatches = r.schedule_mismatches;
      batch.push_back(item);
    }
    Result<Json> reply = api.Post(RankPath(options_.identity, "/iterations"), protocol::IterationReportsToJson(batch, session_));
    // At least once: kept for the next attempt unless the server refused
    // them for good (400, 404); a 5xx (a full disk) or 409 is retried, and
    // the server stores a retried iteration once.
    if (!reply.ok() && (!api.reached_server() || reply.status().code() == Status::Code::kUnavailable)) {
      if (api.reached_server()) NoteError(reply.status());
      ok = false;
      break;
    }
    if (!reply.ok()) {  // refused for good: dropped, and counted
      NoteError(reply.status());
      dropped += end - sent;
    }
    sent = end;
  }
  std::lock_guard<std::mutex> lock(mu_);
  stats_.iterations_sent += static_cast<int64_t>(sent - dropped);
  stats_.iterations_dropped += static_cast<int64_t>(dropped);
  // Put back what could not be sent, oldest first, within the queue's bound.
  if (sent < iterations.size()) {
    std::vector<IterationRecord> rest(iterations.begin() + static_cast<long>(sent), iterations.end());
    rest.insert(rest.end(), iterations_out_.begin(), iterations_out_.end());
    stats_.iterations_dropped += DropOldest(rest, kMaxQueuedIterations);
    iterations_out_.assign(rest.begin(), rest.end());
  }
  return ok;
}

// Warns when the GPU runs at another clock than the one locked, three
// samples in a row while the request stood still (power or thermal capping,
// or a driver that accepted the lock without applying it).
void RankClient::CheckAchievedClock() {
  Result<int> achieved = gpu_->AchievedSmClockMhz();
  if (!achieved.ok()) return;
  const int applied = controller_->applied();
  const int uniform_mhz = running_uniform_mhz_.load(std::memory_order_relaxed);
  {
    std::lock_guard<std::mutex> lock(mu_);
    stats_.achieved_clock_mhz = *achieved;
  }
  // Only a plan with one clock for all computations holds the clock long
  // enough to compare (plans that switch per computation race the sample).
  if (applied <= 0 || uniform_mhz != applied || !controller_->Settled() || *achieved == applied) {
    achieved_mismatch_samples_ = 0;
    return;
  }
  if (++achieved_mismatch_samples_ < 3) return;
  RaiseWarning("achieved_clock", "GPU of rank " + std::to_string(options_.identity.rank) + " (" + gpu_->Name() + ") is locked at " +
               std::to_string(applied) + " MHz but runs at " + std::to_string(*achieved) +
               " MHz (power or thermal capping, or a driver that did not apply the lock: NVIDIA "
               "open-gpu-kernel-modules #1314); plans assume the locked clock");
}

RankClientStats RankClient::Stats() const {
  std::lock_guard<std::mutex> lock(mu_);
  RankClientStats s = stats_;
  s.iterations = iterations_done_.load(std::memory_order_relaxed);
  s.iterations_dropped += hook_dropped_.load(std::memory_order_relaxed);
  s.profiling_window = profiling_window_.load(std::memory_order_relaxed);
  s.schedule_mismatches = mismatches_.load(std::memory_order_relaxed);
  s.clock_changes = controller_->clock_changes();
  s.requested_clock_mhz = controller_->requested();
  s.applied_clock_mhz = controller_->applied();
  s.warnings = warning_count_.load(std::memory_order_relaxed);
  s.paused = pause_from_iteration_.load(std::memory_order_relaxed) >= 0;
  if (s.last_error.empty() && controller_->errors() > 0) s.last_error = controller_->last_error();
  if (s.last_error.empty()) {
    const EnergyMeter::Stats m = meter_->GetStats();
    if (m.read_errors > 0) s.last_error = "energy counter: " + m.last_error;  // e.g. perseusd gone
  }
  return s;
}

}  // namespace perseus::client
