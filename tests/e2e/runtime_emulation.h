// Cluster: emulated ranks of a pipeline-parallel training job, one thread
// each, in virtual time, for the runtime's end-to-end tests and benchmarks.
//
// Every rank runs its stage's 1F1B schedule on a SimulatedGpu (the built-in
// GPU model) with the real RankClient hooks around each computation. A
// computation waits for its pipeline dependency (forward from the previous
// stage, backward from the next), so a slow stage delays the others; all
// ranks meet at a barrier after each iteration (gradient synchronisation), so
// a straggling pipeline delays every pipeline. A pipeline can be slowed by a
// factor (a thermally throttled GPU) to make it straggle.
// Thread safety: the public methods are thread-safe.
#pragma once

#include <atomic>
#include <barrier>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "perseus/gpu_model.h"
#include "perseus/schedule.h"
#include "runtime/client/rank_client.h"
#include "runtime/gpu/realism.h"
#include "runtime/gpu/simulated_gpu.h"

namespace perseus::e2e {

struct ClusterShape {
  int dp = 2, pp = 2, tp = 1, microbatches = 4;
  std::string gpu = "a100";
  // Ground truth for every computation: each stage's measured (time, energy)
  // per clock (e.g. the Perseus paper's GPT-3 profile); empty: StageWork.
  std::optional<Profile> truth;
  runtime::GpuRealism realism = runtime::IdealRealism();
  int world_size() const { return dp * pp * tp; }
  int RankOf(int d, int s, int t) const { return (d * pp + s) * tp + t; }
};

struct ClusterOptions {
  bool use_server = true;  // false: no clients, every GPU at its default (maximum) clock
  std::string server_url, token, job;
  int poll_interval_ms = 100;
  int pace_ms = 2;  // real time slept per iteration
  double energy_poll_interval_s = 0.002;
  bool record_hook_latency = false;  // time every client hook call (HookLatenciesUs)
};

// Ranks that talk to the server at `url` as job `job` (`token` "" for none).
inline ClusterOptions ServerClusterOptions(std::string url, std::string token, std::string job) {
  ClusterOptions o;
  o.server_url = std::move(url);
  o.token = std::move(token);
  o.job = std::move(job);
  return o;
}

struct IterationStats {
  int64_t iteration = 0;
  double time_s = 0;    // virtual, barrier to barrier
  double energy_j = 0;  // all GPUs, over the same interval
};

// The modelled work of one computation of stage `stage` (the last stage is heavier).
KernelWork StageWork(int stage, int stages, Instruction instruction);

class Cluster {
 public:
  Cluster(ClusterShape shape, ClusterOptions options);
  ~Cluster();
  void Start();
  void Stop();
  // Holds every rank at the next iteration barrier / lets them go.
  void Pause();
  void Resume();
  void SetSlowdown(int pipeline, double factor);

  int64_t iterations() const { return completed_.load(); }
  // Completed iterations whose energy every rank has added.
  std::vector<IterationStats> History() const;
  std::vector<int> LastClocks(int rank) const;
  runtime::SimulatedGpu& gpu(int rank) { return *ranks_[rank]->gpu; }
  client::RankClient* client(int rank) { return ranks_[rank]->client.get(); }
  const ClusterShape& shape() const { return shape_; }
  // Wall time of every hook call (OnStepBegin/End, OnInstructionBegin/End) of
  // every rank, in microseconds, when options.record_hook_latency. REQUIRES: stopped.
  std::vector<float> HookLatenciesUs() const;
  // Of those calls: how many waited for something (the thread gave up the CPU
  // voluntarily: a lock, I/O, a sleep), how many were preempted by the
  // scheduler, and the longest one that ran without being switched out.
  struct HookSwitches {
    int64_t blocked = 0, preempted = 0;
    int64_t blocked_by_hook[4] = {0, 0, 0, 0};  // OnStepBegin, OnInstructionBegin, OnInstructionEnd, OnStepEnd
    float longest_unswitched_us = 0;
  };
  HookSwitches HookContextSwitches() const;

 private:
  struct Rank {
    int rank = 0, d = 0, s = 0, t = 0;
    std::atomic<double> now_s{0};
    std::shared_ptr<runtime::SimulatedGpu> gpu;
    std::unique_ptr<client::RankClient> client;
    std::vector<int> clocks;  // of the iteration in progress
    double energy_mark_j = 0;
    std::vector<float> hook_us;  // when recording hook latency
    HookSwitches hook_switches;
  };
  struct Board;  // dependency end times of one (pipeline, tp) chain

  void RankLoop(Rank& r);
  // Calls `hook`, timing it when recording.
  template <typename Hook>
  void TimedHook(Rank& r, int kind, Hook&& hook);
  double WaitFor(int d, int t, int s, Instruction ins, int m, int64_t iteration);
  void Publish(int d, int t, int s, Instruction ins, int m, int64_t iteration, double end_s);
  void OnBarrier();

  const ClusterShape shape_;
  const ClusterOptions options_;
  Schedule schedule_;
  std::vector<std::unique_ptr<Rank>> ranks_;
  std::vector<std::unique_ptr<Board>> boards_;
  std::vector<std::atomic<double>> slowdown_;
  std::barrier<std::function<void()>>* barrier_ = nullptr;
  std::vector<std::thread> threads_;

  mutable std::mutex mu_;
  std::condition_variable cv_;
  bool paused_ = false, held_ = false, stopping_ = false;
  bool stop_decided_ = false;  // set at a barrier, so every rank stops after the same iteration
  double iteration_end_s_ = 0, iteration_start_s_ = 0;
  std::vector<IterationStats> history_;
  std::vector<int> energy_reports_;  // ranks that added their energy, per iteration
  std::vector<std::vector<int>> last_clocks_;
  std::atomic<int64_t> completed_{0};
};

}  // namespace perseus::e2e
