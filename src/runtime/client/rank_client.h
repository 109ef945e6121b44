// RankClient: the perseus runtime inside one training rank.
//
// The training loop calls the hooks around every pipeline computation:
//   OnStepBegin(); { OnInstructionBegin(kForward); forward(); OnInstructionEnd(kForward); ... } OnStepEnd();
// OnStepEnd should come when the pipeline schedule is done, before gradient
// synchronisation, so the reported compute time excludes waiting for other
// pipelines. The hooks never touch the network and only request clocks from
// the ClockController; they cost well under 2 us (bench/runtime/). While the
// server profiles, they also read the GPU energy counter around each
// computation (an NVML call or a daemon round trip).
//
// A background thread registers the rank, polls its plan, and sends profiling
// measurements and per-iteration compute times. New plans take effect at the
// next OnStepBegin. When the server is unreachable the rank keeps its last
// plan (or the driver's clocks if it never got one) and keeps retrying.
// Clocks are unlocked by Close(), the destructor, SIGINT/SIGTERM and exit.
//
// Thread safety: the hooks must be called from one thread (the training
// thread); Stats(), ClockSettled() and Close() from any thread.
#pragma once

#include <atomic>
#include <condition_variable>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "runtime/client/clock_controller.h"
#include "runtime/client/rank_plan.h"
#include "runtime/client/server_api.h"
#include "runtime/gpu/gpu_control.h"

namespace perseus::client {

// Seconds since an arbitrary origin; steady_clock unless a test injects one.
using SecondsClock = std::function<double()>;

struct RankIdentity {
  std::string job;
  int rank = 0, dp_rank = 0, pp_rank = 0, tp_rank = 0;
};

struct RankClientOptions {
  ServerAddress server;
  RankIdentity identity;
  int poll_interval_ms = 200;    // plan polls and report flushes
  int retry_interval_ms = 1000;  // after a failed request
  bool restore_on_signal = true;
  bool measure_iteration_energy = true;  // read the energy counter at step boundaries
  SecondsClock now_s;                    // empty: steady_clock
};

struct RankClientStats {
  bool registered = false;
  bool connected = false;  // the last request reached the server
  int64_t plan_version = -1;
  std::string plan_kind = "none";
  int plan_index = -1;
  int64_t plans_received = 0;
  int64_t iterations = 0;
  int64_t schedule_mismatches = 0;  // hooks that did not match the plan's next computation
  int64_t measurements_sent = 0;
  int64_t iterations_sent = 0;
  int64_t clock_changes = 0;
  int requested_clock_mhz = -1;
  int applied_clock_mhz = -1;
  std::string last_error;
};

class RankClient {
 public:
  // Reads the GPU's supported clocks and starts the background threads;
  // registration happens in the background.
  static constexpr size_t kMaxQueuedIterations = 4096;  // unsent reports beyond this are dropped

  static Result<std::unique_ptr<RankClient>> Create(RankClientOptions options,
                                                    std::shared_ptr<runtime::GpuControl> gpu);
  ~RankClient();
  RankClient(const RankClient&) = delete;
  RankClient& operator=(const RankClient&) = delete;

  void OnStepBegin();
  void OnInstructionBegin(Instruction instruction);
  void OnInstructionEnd(Instruction instruction);
  void OnStepEnd();

  // Stops the background thread and unlocks the clock. Idempotent.
  void Close();
  RankClientStats Stats() const;
  // True when the clock last requested by a hook is on the GPU (tests, emulation).
  bool ClockSettled() const { return controller_->Settled(); }
  // The plan the hooks run now (a copy; for tests).
  std::shared_ptr<const RankPlan> current_plan() const;
  runtime::GpuControl& gpu() { return *gpu_; }

 private:
  struct Totals {
    int64_t count = 0;
    double time_s = 0, energy_j = 0;
  };
  struct StepMeasurement {
    int sm_clock_mhz = 0;
    int iterations = 0;
    Totals forward, backward, blocking;
  };
  struct IterationRecord {
    int64_t iteration;
    double compute_time_s;
    double energy_j;
    int64_t plan_version;
  };

  RankClient(RankClientOptions options, std::shared_ptr<runtime::GpuControl> gpu, std::vector<int> clocks);
  double Now() const { return now_s_(); }
  double Energy();
  // Background thread (rank_client_sync.cc).
  void SyncLoop();
  bool Register(ServerApi& api);
  bool PollPlan(ServerApi& api);
  bool SendReports(ServerApi& api);
  void NoteError(const Status& status);

  const RankClientOptions options_;
  const SecondsClock now_s_;
  std::shared_ptr<runtime::GpuControl> gpu_;
  const std::vector<int> clocks_mhz_;
  std::unique_ptr<ClockController> controller_;

  // Training thread only.
  std::shared_ptr<const RankPlan> current_;
  size_t cursor_ = 0;
  int64_t iteration_ = 0;
  double step_start_s_ = 0, step_start_energy_j_ = 0;
  bool profiling_ = false, tainted_ = false, in_instruction_ = false;
  double ins_start_s_ = 0, ins_start_energy_j_ = 0, last_end_s_ = -1, last_end_energy_j_ = 0;
  StepMeasurement step_;
  std::atomic<int64_t> mismatches_{0};

  // Shared with the background thread.
  mutable std::mutex mu_;
  std::condition_variable cv_;
  std::shared_ptr<const RankPlan> pending_;     // newest plan from the server; guarded by mu_
  std::atomic<bool> has_pending_{false};
  std::vector<IterationRecord> iterations_out_;  // guarded by mu_
  std::vector<StepMeasurement> measurements_out_;
  bool stop_ = false;
  bool flush_ = false;  // wake the background thread now
  RankClientStats stats_;  // guarded by mu_ (the hook-owned fields are copied in Stats())
  std::atomic<int64_t> iterations_done_{0};
  std::thread sync_;
};

}  // namespace perseus::client
