// RankClient: construction and the training-thread hooks.
#include "runtime/client/rank_client.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <random>

#include "common/job_id.h"
#include "common/strings.h"

namespace perseus::client {
namespace {

// 128 random bits in hex: distinct for every client process.
std::string NewSession() {
  std::random_device random;
  std::string hex;
  char buf[9];
  for (int i = 0; i < 4; ++i) {
    std::snprintf(buf, sizeof buf, "%08x", static_cast<unsigned>(random()));
    hex += buf;
  }
  return hex;
}

}  // namespace

Result<std::unique_ptr<RankClient>> RankClient::Create(RankClientOptions options,
                                                       std::shared_ptr<runtime::GpuControl> gpu) {
  if (gpu == nullptr) return Status::InvalidArgument("rank client: no GPU");
  Result<std::vector<int>> clocks = gpu->SupportedSmClocksMhz();
  if (!clocks.ok()) return clocks.status();
  if (clocks->empty()) return Status::InvalidArgument("rank client: the GPU lists no SM clocks");
  const RankIdentity& id = options.identity;
  if (!IsValidJobId(id.job)) {
    return Status::InvalidArgument("rank client: job: expected " + std::string(kJobIdRule) + ", got '" +
                                   id.job.substr(0, 80) + "'");
  }
  PERSEUS_RETURN_IF_ERROR(CheckServerAddress(options.server, "rank client: server", "rank client: ca_cert"));
  if (id.rank < 0 || id.dp_rank < 0 || id.pp_rank < 0 || id.tp_rank < 0) {
    return Status::InvalidArgument("rank client: rank, dp_rank, pp_rank and tp_rank must be >= 0");
  }
  // 0 or less would poll the server in a busy loop.
  for (const auto& [name, ms] : {std::pair{"poll_interval_ms", options.poll_interval_ms},
                                 std::pair{"retry_interval_ms", options.retry_interval_ms}}) {
    if (ms < 1 || ms > 3600 * 1000) {
      return Status::InvalidArgument(std::string("rank client: ") + name + ": expected 1 to 3600000 ms, got " +
                                     std::to_string(ms));
    }
  }
  if (!(options.energy_poll_interval_s > 0 && options.energy_poll_interval_s <= 1)) {
    return Status::InvalidArgument("rank client: energy_poll_interval_s: expected a number in (0, 1] s, got " +
                                   Format("%g", options.energy_poll_interval_s));
  }
  return std::unique_ptr<RankClient>(new RankClient(std::move(options), std::move(gpu), std::move(*clocks)));
}

RankClient::RankClient(RankClientOptions options, std::shared_ptr<runtime::GpuControl> gpu, std::vector<int> clocks)
    : options_(std::move(options)),
      now_s_(options_.now_s ? options_.now_s : runtime::SteadySeconds()),
      gpu_(std::move(gpu)),
      clocks_mhz_(std::move(clocks)),
      session_(NewSession()),
      controller_(std::make_unique<ClockController>(gpu_, now_s_)),
      meter_(std::make_unique<EnergyMeter>(gpu_, now_s_, options_.energy_poll_interval_s)) {
  iterations_out_.reserve(kMaxQueuedIterations);
  iteration_backlog_.reserve(kMaxQueuedIterations + 1);  // DropOldest runs after the push: never reallocates
  if (options_.restore_on_signal) RegisterForRestore(controller_.get());
  sync_ = std::thread([this] { SyncLoop(); });
}

RankClient::~RankClient() { Close(); }

void RankClient::Close() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (stop_ && !sync_.joinable()) return;
    stop_ = true;
  }
  cv_.notify_all();
  plan_cv_.notify_all();
  if (sync_.joinable()) sync_.join();
  meter_->Stop();
  if (options_.restore_on_signal) UnregisterForRestore(controller_.get());
  controller_->Restore();
}

Status RankClient::RecordDurations(int64_t iteration, const std::vector<double>& seconds) {
  if (iteration < 0) return Status::InvalidArgument("iteration: expected >= 0, got " + std::to_string(iteration));
  for (size_t i = 0; i < seconds.size(); ++i) {
    if (!(std::isfinite(seconds[i]) && seconds[i] >= 0)) {
      return Status::InvalidArgument("seconds[" + std::to_string(i) + "]: expected a finite duration >= 0 s, got " +
                                     Format("%g", seconds[i]));
    }
  }
  std::lock_guard<std::mutex> lock(mu_);
  if (framework_durations_.size() >= 1024) framework_durations_.erase(framework_durations_.begin());
  framework_durations_[iteration] = seconds;
  return Status::Ok();
}

void RankClient::RaiseWarning(const std::string& key, std::string message) {
  std::lock_guard<std::mutex> lock(mu_);
  if (!warned_.insert(key).second) return;
  if (options_.warnings_to_stderr) std::fprintf(stderr, "perseus: warning: %s\n", message.c_str());
  if (warnings_.size() >= kMaxQueuedWarnings) warnings_.pop_front();
  warnings_.push_back(std::move(message));
  warning_count_.fetch_add(1, std::memory_order_relaxed);
}

std::vector<std::string> RankClient::TakeWarnings() {
  std::lock_guard<std::mutex> lock(mu_);
  std::vector<std::string> out(warnings_.begin(), warnings_.end());
  warnings_.clear();
  return out;
}

RankClient::PauseRequest RankClient::PauseRequested() const {
  // Lock-free, like the hooks: called at every step.
  const int64_t from = pause_from_iteration_.load(std::memory_order_acquire);
  if (from < 0 || iterations_done_.load(std::memory_order_relaxed) < from) return kNoPause;
  return pause_release_.load(std::memory_order_relaxed) ? kReleasePause : kHoldPause;
}

double RankClient::WaitWhilePaused(double max_wait_s) {
  std::unique_lock<std::mutex> lock(mu_);
  auto holding = [this] { return PauseRequested() == kHoldPause; };  // pending_ is then the pause
  // Until the caller's limit, or until the server has not answered for the
  // newest pause plan's max_s (it answers every poll while it runs, so a
  // pause that spans many decisions is waited out whole).
  const double begin_s = Now(), caller_until_s = begin_s + std::max(0.0, max_wait_s);
  auto until_s = [&] { return std::min(caller_until_s, last_contact_s_ + pending_->pause.max_s); };
  if (stop_ || !holding() || Now() >= until_s()) return 0;
  // Under mu_: a Close() that follows sees the request and restores the clock after it.
  if (pending_->pause.hold_clock_mhz > 0) controller_->Request(pending_->pause.hold_clock_mhz);
  // now_s may be a test's clock: wait in short slices and re-read it.
  while (!stop_ && holding() && Now() < until_s()) {
    const double slice_s = std::clamp(until_s() - Now(), 0.001, 0.1);
    plan_cv_.wait_for(lock, std::chrono::duration<double>(slice_s));
  }
  const double waited_s = std::max(0.0, Now() - begin_s);
  ++stats_.pauses;
  stats_.paused_s += waited_s;
  return waited_s;
}

std::shared_ptr<const RankPlan> RankClient::current_plan() const {
  std::lock_guard<std::mutex> lock(mu_);
  return pending_;
}

void RankClient::AdoptPendingPlan() {
  if (!has_pending_.load(std::memory_order_acquire)) return;
  {
    std::unique_lock<std::mutex> lock(mu_, std::try_to_lock);
    if (!lock.owns_lock()) return;  // the background thread holds it: adopt at the next step
    // The old plan is freed by the background thread: free() can wait for a
    // malloc arena that another thread holds.
    if (current_) retired_plans_.push_back(std::move(current_));
    current_ = pending_;
    has_pending_.store(false, std::memory_order_relaxed);
  }
  running_uniform_mhz_.store(current_ ? current_->UniformClockMhz() : -1, std::memory_order_relaxed);
  window_step_ = 0;
  record_.reset();  // an unfinished window is abandoned
  mismatch_warned_ = false;
}

// The begin of the step after a window's last measured one closes its last
// cycle: the record goes to the background thread (before any new plan).
void RankClient::CloseFinishedWindow(double now_s) {
  if (!record_ || window_step_ != record_->window.warmup_iterations + record_->window.iterations) return;
  record_->step_begin_s.push_back(now_s);
  profiling_window_.store(record_->window.id, std::memory_order_relaxed);
  window_backlog_.push_back(std::move(*record_));
  record_.reset();
  HandOver();
}

void RankClient::HandOver() {
  if (iteration_backlog_.empty() && window_backlog_.empty()) return;
  std::unique_lock<std::mutex> lock(mu_, std::try_to_lock);
  if (!lock.owns_lock()) return;
  iterations_out_.insert(iterations_out_.end(), iteration_backlog_.begin(), iteration_backlog_.end());
  stats_.iterations_dropped += DropOldest(iterations_out_, kMaxQueuedIterations);
  iteration_backlog_.clear();
  const bool windows = !window_backlog_.empty();
  for (WindowRecord& w : window_backlog_) windows_out_.push_back(std::move(w));
  window_backlog_.clear();
  lock.unlock();
  if (windows) cv_.notify_one();
}

// Counts the step in the profiling window and opens or extends its record
// for the measured steps.
void RankClient::BeginWindowStep(double now_s) {
  const bool profiling = current_ && current_->kind == PlanKind::kProfiling;
  if (!profiling) return;
  const PlanWindow& w = current_->window;
  const int k = window_step_++;
  if (k >= w.warmup_iterations && k < w.warmup_iterations + w.iterations) {
    if (!record_) {
      record_.emplace();
      record_->window = w;
      record_->first_iteration = iteration_;
      record_->computations.reserve(current_->steps.size() * static_cast<size_t>(w.iterations));
      record_->step_begin_s.reserve(static_cast<size_t>(w.iterations) + 1);
    }
    record_->step_begin_s.push_back(now_s);
    record_->step_first_computation.push_back(record_->computations.size());
  }
}

void RankClient::OnStepBegin() {
  const double now_s = Now();
  CloseFinishedWindow(now_s);
  AdoptPendingPlan();
  cursor_ = 0;
  step_mismatches_ = 0;
  step_start_s_ = now_s;
  BeginWindowStep(now_s);
  if (!current_) return;
  if (current_->kind == PlanKind::kReset) {
    controller_->Request(ClockController::kUnlocked);
  } else if (!current_->steps.empty()) {
    controller_->Request(current_->steps.front().sm_clock_mhz);
  }
}

void RankClient::NoteMismatch(Instruction expected, Instruction got) {
  mismatches_.fetch_add(1, std::memory_order_relaxed);
  ++step_mismatches_;
  if (mismatch_warned_) return;
  mismatch_warned_ = true;
  // Raised by the background thread (RaiseWarning takes mu_ and writes to
  // stderr): a one-slot hand-over, written only while empty.
  if (hook_warning_ready_.load(std::memory_order_acquire)) return;
  hook_warning_ = "rank " + std::to_string(options_.identity.rank) + " of job '" + options_.identity.job +
               "': the training loop ran a " + InstructionName(got) + " where the job's declared schedule expects a " +
               InstructionName(expected) + " (computation " + std::to_string(cursor_) + " of iteration " +
               std::to_string(iteration_) +
               "): the schedule registered with the server differs from what the ranks run, so plans "
               "assign clocks to the wrong computations; register the job with the schedule the framework runs";
  hook_warning_ready_.store(true, std::memory_order_release);
}

void RankClient::OnInstructionBegin(Instruction instruction) {
  if (current_ && cursor_ < current_->steps.size()) {
    const std::vector<PlanStep>& steps = current_->steps;
    if (steps[cursor_].instruction != instruction) {
      NoteMismatch(steps[cursor_].instruction, instruction);
      size_t next = cursor_;
      while (next < steps.size() && steps[next].instruction != instruction) ++next;
      if (next < steps.size()) cursor_ = next;
    }
    controller_->Request(steps[cursor_].sm_clock_mhz);
  }
  if (record_) {
    if (!controller_->Settled()) ++record_->late_clocks;
    record_->computations.push_back({instruction, Now(), -1});
  }
}

void RankClient::OnInstructionEnd(Instruction instruction) {
  if (record_ && !record_->computations.empty() && record_->computations.back().instruction == instruction) {
    record_->computations.back().end_s = Now();
  }
  ++cursor_;
  if (current_ && cursor_ < current_->steps.size()) controller_->Request(current_->steps[cursor_].sm_clock_mhz);
}

void RankClient::OnStepEnd() {
  const double end_s = Now();
  const int64_t version = current_ ? current_->version : -1;
  if (version >= 0) {
    iteration_backlog_.push_back({iteration_, step_start_s_, end_s, version, step_mismatches_});
    hook_dropped_.fetch_add(DropOldest(iteration_backlog_, kMaxQueuedIterations), std::memory_order_relaxed);
  }
  HandOver();
  sync_wanted_ = false;
  if (current_ && current_->kind == PlanKind::kProfiling) {
    const PlanWindow& w = current_->window;
    const int next = window_step_;  // the index the next step will have
    sync_wanted_ = next == w.warmup_iterations || next == w.warmup_iterations + w.iterations;
  }
  ++iteration_;
  iterations_done_.store(iteration_, std::memory_order_relaxed);
}

}  // namespace perseus::client
