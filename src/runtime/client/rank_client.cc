// RankClient: construction and the training-thread hooks.
#include "runtime/client/rank_client.h"

#include <chrono>

namespace perseus::client {

namespace {

SecondsClock SteadySeconds() {
  return [] {
    return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
  };
}

}  // namespace

Result<std::unique_ptr<RankClient>> RankClient::Create(RankClientOptions options,
                                                       std::shared_ptr<runtime::GpuControl> gpu) {
  if (gpu == nullptr) return Status::InvalidArgument("rank client: no GPU");
  Result<std::vector<int>> clocks = gpu->SupportedSmClocksMhz();
  if (!clocks.ok()) return clocks.status();
  if (clocks->empty()) return Status::InvalidArgument("rank client: the GPU lists no SM clocks");
  const RankIdentity& id = options.identity;
  if (id.job.empty()) return Status::InvalidArgument("rank client: job: empty");
  if (id.rank < 0 || id.dp_rank < 0 || id.pp_rank < 0 || id.tp_rank < 0) {
    return Status::InvalidArgument("rank client: rank, dp_rank, pp_rank and tp_rank must be >= 0");
  }
  return std::unique_ptr<RankClient>(new RankClient(std::move(options), std::move(gpu), std::move(*clocks)));
}

RankClient::RankClient(RankClientOptions options, std::shared_ptr<runtime::GpuControl> gpu, std::vector<int> clocks)
    : options_(std::move(options)),
      now_s_(options_.now_s ? options_.now_s : SteadySeconds()),
      gpu_(std::move(gpu)),
      clocks_mhz_(std::move(clocks)),
      controller_(std::make_unique<ClockController>(gpu_)) {
  iterations_out_.reserve(kMaxQueuedIterations);
  measurements_out_.reserve(64);
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
  if (sync_.joinable()) sync_.join();
  if (options_.restore_on_signal) UnregisterForRestore(controller_.get());
  controller_->Restore();
}

double RankClient::Energy() {
  Result<double> e = gpu_->TotalEnergyJ();
  return e.ok() ? *e : 0;
}

std::shared_ptr<const RankPlan> RankClient::current_plan() const {
  std::lock_guard<std::mutex> lock(mu_);
  return pending_;
}

void RankClient::OnStepBegin() {
  if (has_pending_.load(std::memory_order_acquire)) {
    std::lock_guard<std::mutex> lock(mu_);
    current_ = pending_;
    has_pending_.store(false, std::memory_order_relaxed);
  }
  cursor_ = 0;
  profiling_ = current_ && current_->kind == PlanKind::kProfiling;
  tainted_ = false;
  step_ = StepMeasurement{};
  step_.sm_clock_mhz = profiling_ ? current_->profiling_clock_mhz : 0;
  last_end_s_ = -1;
  step_start_s_ = Now();
  step_start_energy_j_ = options_.measure_iteration_energy ? Energy() : 0;
  if (!current_) return;
  if (current_->kind == PlanKind::kReset) {
    controller_->Request(ClockController::kUnlocked);
  } else if (!current_->steps.empty()) {
    controller_->Request(current_->steps.front().sm_clock_mhz);
  }
}

void RankClient::OnInstructionBegin(Instruction instruction) {
  if (current_ && cursor_ < current_->steps.size()) {
    const std::vector<PlanStep>& steps = current_->steps;
    if (steps[cursor_].instruction != instruction) {
      mismatches_.fetch_add(1, std::memory_order_relaxed);
      size_t next = cursor_;
      while (next < steps.size() && steps[next].instruction != instruction) ++next;
      if (next < steps.size()) cursor_ = next;
    }
    controller_->Request(steps[cursor_].sm_clock_mhz);
  }
  if (!profiling_) return;
  if (controller_->applied() != step_.sm_clock_mhz) tainted_ = true;
  const double t = Now(), e = Energy();
  if (last_end_s_ >= 0) {
    step_.blocking.time_s += t - last_end_s_;
    step_.blocking.energy_j += e - last_end_energy_j_;
  }
  ins_start_s_ = t;
  ins_start_energy_j_ = e;
}

void RankClient::OnInstructionEnd(Instruction instruction) {
  if (profiling_) {
    const double t = Now(), e = Energy();
    Totals& totals = instruction == Instruction::kForward ? step_.forward : step_.backward;
    ++totals.count;
    totals.time_s += t - ins_start_s_;
    totals.energy_j += e - ins_start_energy_j_;
    last_end_s_ = t;
    last_end_energy_j_ = e;
    if (controller_->applied() != step_.sm_clock_mhz) tainted_ = true;
  }
  ++cursor_;
  if (current_ && cursor_ < current_->steps.size()) controller_->Request(current_->steps[cursor_].sm_clock_mhz);
}

void RankClient::OnStepEnd() {
  const double compute_s = Now() - step_start_s_;
  const double energy_j = options_.measure_iteration_energy ? Energy() - step_start_energy_j_ : 0;
  const int64_t version = current_ ? current_->version : -1;
  const bool measured = profiling_ && !tainted_ && step_.forward.count > 0 && step_.backward.count > 0;
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (version >= 0) {
      if (iterations_out_.size() >= kMaxQueuedIterations) iterations_out_.erase(iterations_out_.begin());
      iterations_out_.push_back({iteration_, compute_s, energy_j, version});
    }
    if (measured) {
      step_.iterations = 1;
      if (!measurements_out_.empty() && measurements_out_.back().sm_clock_mhz == step_.sm_clock_mhz) {
        StepMeasurement& m = measurements_out_.back();
        ++m.iterations;
        for (auto [to, from] : {std::pair{&m.forward, &step_.forward}, std::pair{&m.backward, &step_.backward},
                                std::pair{&m.blocking, &step_.blocking}}) {
          to->count += from->count;
          to->time_s += from->time_s;
          to->energy_j += from->energy_j;
        }
      } else {
        measurements_out_.push_back(step_);
      }
      flush_ = true;
    }
  }
  if (measured) cv_.notify_one();
  ++iteration_;
  iterations_done_.store(iteration_, std::memory_order_relaxed);
}

}  // namespace perseus::client
