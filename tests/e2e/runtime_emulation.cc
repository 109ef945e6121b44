#include "tests/e2e/runtime_emulation.h"

#include <sys/resource.h>

#include <algorithm>
#include <chrono>
#include <cmath>

namespace perseus::e2e {

struct Cluster::Board {
  std::mutex mu;
  std::condition_variable cv;
  // [instruction][stage][microbatch] -> (iteration, end time)
  std::vector<std::vector<std::vector<std::pair<int64_t, double>>>> end;
};

KernelWork StageWork(int stage, int stages, Instruction instruction) {
  double fwd_s = 0.010 + 0.001 * stage + (stage == stages - 1 ? 0.004 : 0.0);
  if (instruction == Instruction::kForward) return {fwd_s, kTransformerForwardComputeFraction, 330};
  return {2 * fwd_s, kTransformerBackwardComputeFraction, 350};
}

Cluster::Cluster(ClusterShape shape, ClusterOptions options)
    : shape_(std::move(shape)), options_(std::move(options)), slowdown_(shape_.dp) {
  schedule_ = BuildSchedule({ScheduleKind::k1F1B, shape_.pp, shape_.microbatches, 1}).value();
  for (auto& s : slowdown_) s = 1.0;
  for (int i = 0; i < shape_.dp * shape_.tp; ++i) {
    auto b = std::make_unique<Board>();
    b->end.assign(2, std::vector<std::vector<std::pair<int64_t, double>>>(
                         shape_.pp, std::vector<std::pair<int64_t, double>>(shape_.microbatches, {-1, 0.0})));
    boards_.push_back(std::move(b));
  }
  last_clocks_.resize(shape_.world_size());
  for (int d = 0; d < shape_.dp; ++d) {
    for (int s = 0; s < shape_.pp; ++s) {
      for (int t = 0; t < shape_.tp; ++t) {
        auto r = std::make_unique<Rank>();
        Rank* raw = r.get();
        r->rank = shape_.RankOf(d, s, t);
        r->d = d;
        r->s = s;
        r->t = t;
        r->gpu = runtime::SimulatedGpu::Create(shape_.gpu, r->rank, [raw] { return raw->now_s.load(); }, shape_.realism)
                     .value();
        if (options_.use_server) {
          client::RankClientOptions o;
          o.server = {options_.server_url, options_.token};
          o.identity = {options_.job, r->rank, d, s, t};
          o.poll_interval_ms = options_.poll_interval_ms;
          o.retry_interval_ms = 100;
          o.restore_on_signal = false;
          o.now_s = [raw] { return raw->now_s.load(); };
          o.energy_poll_interval_s = options_.energy_poll_interval_s;
          r->client = client::RankClient::Create(o, r->gpu).value();
        }
        ranks_.push_back(std::move(r));
      }
    }
  }
  std::sort(ranks_.begin(), ranks_.end(), [](const auto& a, const auto& b) { return a->rank < b->rank; });
}

Cluster::~Cluster() {
  Stop();
  for (auto& r : ranks_) {
    if (r->client) r->client->Close();
  }
  delete barrier_;
}

void Cluster::Start() {
  barrier_ = new std::barrier<std::function<void()>>(shape_.world_size(), [this] { OnBarrier(); });
  for (auto& r : ranks_) threads_.emplace_back([this, rank = r.get()] { RankLoop(*rank); });
}

void Cluster::Stop() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stopping_ = true;
    paused_ = false;
  }
  cv_.notify_all();
  for (std::thread& t : threads_) t.join();
  threads_.clear();
}

void Cluster::Pause() {
  std::unique_lock<std::mutex> lock(mu_);
  paused_ = true;
  cv_.wait(lock, [&] { return held_ || stopping_; });
}

void Cluster::Resume() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    paused_ = false;
  }
  cv_.notify_all();
}

void Cluster::SetSlowdown(int pipeline, double factor) { slowdown_[pipeline] = factor; }

std::vector<IterationStats> Cluster::History() const {
  std::lock_guard<std::mutex> lock(mu_);
  std::vector<IterationStats> out;
  for (size_t i = 0; i < history_.size(); ++i) {
    if (energy_reports_[i] == shape_.world_size()) out.push_back(history_[i]);
  }
  return out;
}

std::vector<int> Cluster::LastClocks(int rank) const {
  std::lock_guard<std::mutex> lock(mu_);
  return last_clocks_[rank];
}

double Cluster::WaitFor(int d, int t, int s, Instruction ins, int m, int64_t iteration) {
  int dep_stage = ins == Instruction::kForward ? s - 1 : s + 1;
  Instruction dep_ins = ins;
  if (ins == Instruction::kForward && s == 0) return 0;
  if (ins == Instruction::kBackward && s == shape_.pp - 1) return 0;  // after its own forward
  Board& b = *boards_[d * shape_.tp + t];
  std::unique_lock<std::mutex> lock(b.mu);
  auto& slot = b.end[static_cast<int>(dep_ins)][dep_stage][m];
  b.cv.wait(lock, [&] { return slot.first == iteration; });
  return slot.second;
}

void Cluster::Publish(int d, int t, int s, Instruction ins, int m, int64_t iteration, double end_s) {
  Board& b = *boards_[d * shape_.tp + t];
  {
    std::lock_guard<std::mutex> lock(b.mu);
    b.end[static_cast<int>(ins)][s][m] = {iteration, end_s};
  }
  b.cv.notify_all();
}

void Cluster::OnBarrier() {
  std::unique_lock<std::mutex> lock(mu_);
  double end_s = 0;
  for (auto& r : ranks_) end_s = std::max(end_s, r->now_s.load());
  history_.push_back({static_cast<int64_t>(history_.size()), end_s - iteration_start_s_, 0});
  energy_reports_.push_back(0);
  for (auto& r : ranks_) last_clocks_[r->rank] = r->clocks;
  iteration_end_s_ = end_s;
  iteration_start_s_ = end_s;
  completed_ = static_cast<int64_t>(history_.size());
  if (paused_ && !stopping_) {
    held_ = true;
    cv_.notify_all();
    cv_.wait(lock, [&] { return !paused_ || stopping_; });
    held_ = false;
  }
  stop_decided_ = stopping_;
}

template <typename Hook>
void Cluster::TimedHook(Rank& r, int kind, Hook&& hook) {
  if (!options_.record_hook_latency) return hook();
  rusage before{}, after{};
  getrusage(RUSAGE_THREAD, &before);
  const auto start = std::chrono::steady_clock::now();
  hook();
  const float us = std::chrono::duration<float, std::micro>(std::chrono::steady_clock::now() - start).count();
  getrusage(RUSAGE_THREAD, &after);
  r.hook_us.push_back(us);
  const bool blocked = after.ru_nvcsw != before.ru_nvcsw, preempted = after.ru_nivcsw != before.ru_nivcsw;
  r.hook_switches.blocked += blocked;
  r.hook_switches.blocked_by_hook[kind] += blocked;
  r.hook_switches.preempted += preempted;
  if (!blocked && !preempted) r.hook_switches.longest_unswitched_us = std::max(r.hook_switches.longest_unswitched_us, us);
}

Cluster::HookSwitches Cluster::HookContextSwitches() const {
  HookSwitches out;
  for (const auto& r : ranks_) {
    out.blocked += r->hook_switches.blocked;
    for (int k = 0; k < 4; ++k) out.blocked_by_hook[k] += r->hook_switches.blocked_by_hook[k];
    out.preempted += r->hook_switches.preempted;
    out.longest_unswitched_us = std::max(out.longest_unswitched_us, r->hook_switches.longest_unswitched_us);
  }
  return out;
}

std::vector<float> Cluster::HookLatenciesUs() const {
  std::vector<float> out;
  for (const auto& r : ranks_) out.insert(out.end(), r->hook_us.begin(), r->hook_us.end());
  return out;
}

void Cluster::RankLoop(Rank& r) {
  const std::vector<Computation>& order = schedule_.per_stage[r.s];
  for (int64_t iteration = 0;; ++iteration) {
    client::RankClient* c = r.client.get();
    if (c) TimedHook(r, 0, [c] { c->OnStepBegin(); });
    r.clocks.clear();
    for (const Computation& comp : order) {
      double ready_s = WaitFor(r.d, r.t, r.s, comp.instruction, comp.microbatch, iteration);
      r.now_s = std::max(r.now_s.load(), ready_s);
      if (c) {
        for (int i = 0; i < 100000 && !c->ClockSettled(); ++i) std::this_thread::yield();
        TimedHook(r, 1, [c, &comp] { c->OnInstructionBegin(comp.instruction); });
      }
      r.clocks.push_back(r.gpu->CurrentSmClockMhz());
      OperatingPoint op = shape_.truth ? r.gpu->Run(shape_.truth->stages[r.s].at(comp.instruction))
                                       : r.gpu->Run(StageWork(r.s, shape_.pp, comp.instruction));
      r.now_s = r.now_s.load() + op.time_s * slowdown_[r.d].load();
      if (c) TimedHook(r, 2, [c, &comp] { c->OnInstructionEnd(comp.instruction); });
      Publish(r.d, r.t, r.s, comp.instruction, comp.microbatch, iteration, r.now_s.load());
    }
    if (c) TimedHook(r, 3, [c] { c->OnStepEnd(); });
    barrier_->arrive_and_wait();
    bool stop;
    {
      std::lock_guard<std::mutex> lock(mu_);
      r.now_s = iteration_end_s_;
      stop = stop_decided_;
    }
    double energy_j = r.gpu->TotalEnergyJ().value();
    {
      std::lock_guard<std::mutex> lock(mu_);
      history_[iteration].energy_j += energy_j - r.energy_mark_j;
      ++energy_reports_[iteration];
    }
    r.energy_mark_j = energy_j;
    if (stop) return;
    std::this_thread::sleep_for(std::chrono::milliseconds(options_.pace_ms));
  }
}

}  // namespace perseus::e2e
