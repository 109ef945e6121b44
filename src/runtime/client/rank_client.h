// RankClient: the perseus runtime inside one training rank.
//
// The training loop calls the hooks around every pipeline computation:
//   OnStepBegin(); { OnInstructionBegin(kForward); forward(); OnInstructionEnd(kForward); ... } OnStepEnd();
// OnStepEnd should come when the pipeline schedule is done, before gradient
// synchronisation, so the reported compute time excludes waiting for other
// pipelines. The hooks never touch the network or the GPU: they request
// clocks from the ClockController and take timestamps; they cost well under
// 2 us (bench/runtime/). Energy comes from the EnergyMeter, which follows the
// GPU's coarse energy counter off the training thread.
//
// Online profiling runs in windows (docs/http_api.md, "Online profiling"): the
// plan says which clock forwards and backwards run at; the rank runs the
// window's warm-up iterations, timestamps every computation of the measured
// iterations, and the background thread reports the window's durations and
// its energy over whole iterations once the counter has stepped past them.
//
// A background thread registers the rank, polls its plan, and sends window
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
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include <nlohmann/json.hpp>

#include "runtime/client/clock_controller.h"
#include "runtime/client/energy_meter.h"
#include "runtime/protocol/rank_plan.h"
#include "runtime/client/server_api.h"
#include "runtime/gpu/gpu_control.h"

namespace perseus::client {

using runtime::SecondsClock;

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
  bool measure_iteration_energy = true;  // report each iteration's energy (from the EnergyMeter)
  // True: per-computation durations come from the framework (CUDA events,
  // RecordDurations) instead of the hooks' timestamps, which on an
  // asynchronous GPU measure launches, not work.
  bool framework_durations = false;
  double energy_poll_interval_s = 0.002;  // EnergyMeter poll period (GPUs that do not report counter steps)
  // Each warning is also written to stderr once ("perseus: warning: ...").
  // The Python binding turns it off: it hands warnings to Python's warnings
  // module, which shows them once itself.
  bool warnings_to_stderr = true;
  SecondsClock now_s;                     // empty: steady_clock
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
  int64_t iterations_sent = 0;
  int64_t iterations_dropped = 0;   // reports lost: queue full (server unreachable too long) or refused (4xx)
  int64_t clock_changes = 0;
  int requested_clock_mhz = -1;
  int applied_clock_mhz = -1;
  int achieved_clock_mhz = -1;      // last read back from the GPU (-1: unknown)
  int64_t profiling_window = -1;    // the profiling window the rank runs (-1: none)
  int64_t windows_sent = 0;
  int64_t warnings = 0;             // warnings raised so far (TakeWarnings)
  bool paused = false;              // the newest plan is a pause (PauseRequested)
  int64_t pauses = 0;               // pauses waited out (WaitWhilePaused)
  double paused_s = 0;              // seconds spent waiting in them
  std::string last_error;
};

class RankClient {
 public:
  // Reads the GPU's supported clocks and starts the background threads;
  // registration happens in the background.
  static constexpr size_t kMaxQueuedIterations = 4096;  // unsent reports beyond this are dropped
  static constexpr size_t kMaxQueuedWarnings = 256;

  static Result<std::unique_ptr<RankClient>> Create(RankClientOptions options,
                                                    std::shared_ptr<runtime::GpuControl> gpu);
  ~RankClient();
  RankClient(const RankClient&) = delete;
  RankClient& operator=(const RankClient&) = delete;

  void OnStepBegin();
  void OnInstructionBegin(Instruction instruction);
  void OnInstructionEnd(Instruction instruction);
  void OnStepEnd();

  // Durations (seconds) of iteration `iteration`'s computations in hook
  // order, measured by the framework (CUDA events read once they completed,
  // possibly several iterations later). Only needed with
  // options.framework_durations; never blocks. Extra or late calls are ignored.
  // kInvalidArgument (nothing recorded) for a negative iteration or a
  // duration that is negative, NaN or infinite (an empty list is fine: a
  // step that ran no computation of this rank). A count
  // other than the hooks saw in that iteration is found when its profiling
  // window is reported: a warning names it and the hooks' timestamps are used.
  Status RecordDurations(int64_t iteration, const std::vector<double>& seconds);
  // True when the step about to begin starts or ends a measured profiling
  // window: a framework with an asynchronous GPU should synchronise the device
  // before OnStepBegin then (once per window boundary), so that the window's
  // span covers the GPU's work. Training thread only.
  bool SyncWantedAtNextStep() const { return sync_wanted_; }
  // Warnings raised since the last call, oldest first (unknown job or rank, a
  // schedule that differs from the declared one, clock-set errors, an achieved
  // clock other than the locked one, the server's warnings about this rank's
  // job). Each is also logged to stderr once (options.warnings_to_stderr). Thread-safe.
  std::vector<std::string> TakeWarnings();
  // Pausing (docs/carbon.md, "Pausing in the server"). The carbon policy may
  // pause a job: its ranks then get a "pause" plan, which takes effect before
  // the plan's `pause.from_iteration` (the same for every rank). From then
  // PauseRequested() says so (kReleasePause: the job is asked to stop,
  // checkpoint and exit, and to be started again when the server resumes it;
  // kHoldPause: wait). Thread-safe.
  enum PauseRequest { kNoPause = 0, kHoldPause = 1, kReleasePause = 2 };
  PauseRequest PauseRequested() const;
  // At an iteration boundary (before OnStepBegin), on the training thread:
  // while a hold pause is in effect, holds the pause's (lowest) clock and
  // waits until the server sends another plan, Close() is called,
  // `max_wait_s` passes, or the server has not answered for the pause's
  // `max_s` (a server that went away); then the rank goes on with the next
  // plan, or with the pause plan's steps. Returns the seconds it waited (0:
  // no hold pause in effect). A release pause does not wait.
  double WaitWhilePaused(double max_wait_s);
  // Total warnings raised so far; a cheap check before TakeWarnings.
  int64_t WarningCount() const { return warning_count_.load(std::memory_order_relaxed); }

  // Stops the background thread and unlocks the clock. Idempotent.
  void Close();
  RankClientStats Stats() const;
  // True when the clock last requested by a hook is on the GPU (tests, emulation).
  bool ClockSettled() const { return controller_->Settled(); }
  // The plan the hooks run now (a copy; for tests).
  std::shared_ptr<const RankPlan> current_plan() const;
  runtime::GpuControl& gpu() { return *gpu_; }

 private:
  // One computation of a measured profiling iteration (hook timestamps).
  struct ComputationTiming {
    Instruction instruction;
    double begin_s, end_s;
  };
  // A profiling window's measured iterations, built by the hooks and handed
  // to the background thread when the iteration after the last one begins.
  struct WindowRecord {
    PlanWindow window;
    int64_t first_iteration = 0;
    std::vector<double> step_begin_s;  // iterations + 1 boundaries
    std::vector<size_t> step_first_computation;  // index into `computations` of each iteration's first
    std::vector<ComputationTiming> computations;
    int64_t late_clocks = 0;  // computations that began before their clock was applied
  };
  struct IterationRecord {
    int64_t iteration;
    double begin_s, end_s;
    int64_t plan_version;
    int64_t schedule_mismatches;
  };

  // The framework's durations of a window's iterations, in hook order.
  struct FrameworkDurations {
    bool complete = false;               // every iteration of the window has them
    std::optional<std::string> mismatch; // an iteration whose count differs from the hooks'
    std::vector<double> seconds;
  };
  FrameworkDurations CollectFrameworkDurations(const WindowRecord& record);

  RankClient(RankClientOptions options, std::shared_ptr<runtime::GpuControl> gpu, std::vector<int> clocks);
  double Now() const { return now_s_(); }
  // Training thread: the window bookkeeping of OnStepBegin / OnStepEnd.
  void AdoptPendingPlan();
  // Drops the oldest entries of `queue` beyond `cap` (the bound of every
  // report queue); returns how many.
  template <typename T>
  static int64_t DropOldest(std::vector<T>& queue, size_t cap) {
    if (queue.size() <= cap) return 0;
    const size_t excess = queue.size() - cap;
    queue.erase(queue.begin(), queue.begin() + static_cast<std::ptrdiff_t>(excess));
    return static_cast<int64_t>(excess);
  }
  // Moves the hooks' backlogs to the background thread's queues if mu_ is
  // free right now; else they wait for the next hook that tries.
  void HandOver();
  void CloseFinishedWindow(double now_s);
  void BeginWindowStep(double now_s);
  void NoteMismatch(Instruction expected, Instruction got);
  // Raises `message` unless a warning with `key` was raised before.
  void RaiseWarning(const std::string& key, std::string message);
  // Background thread (rank_client_sync.cc).
  void SyncLoop();
  bool Register(ServerApi& api);
  bool PollPlan(ServerApi& api);
  bool SendReports(ServerApi& api);
  bool SendWindows(ServerApi& api);
  void CheckAchievedClock();
  // The window report's JSON, or nothing while its energy or durations are not known yet.
  std::optional<nlohmann::json> WindowReport(const WindowRecord& record, bool give_up_waiting);
  void NoteError(const Status& status);

  const RankClientOptions options_;
  const SecondsClock now_s_;
  std::shared_ptr<runtime::GpuControl> gpu_;
  const std::vector<int> clocks_mhz_;
  const std::string session_;  // this client's id: a restarted process registers with a new one
  std::unique_ptr<ClockController> controller_;
  std::unique_ptr<EnergyMeter> meter_;

  // Training thread only.
  std::shared_ptr<const RankPlan> current_;
  size_t cursor_ = 0;
  int64_t iteration_ = 0;
  double step_start_s_ = 0;
  int window_step_ = 0;  // steps run under the current profiling plan
  std::optional<WindowRecord> record_;
  bool mismatch_warned_ = false;
  int64_t step_mismatches_ = 0;
  std::atomic<int64_t> mismatches_{0};
  bool sync_wanted_ = false;
  std::atomic<int64_t> warning_count_{0};
  std::atomic<int> running_uniform_mhz_{-1};  // the running plan's one clock (-1: several); read by CheckAchievedClock
  // What the hooks hand to the background thread waits here while mu_ is
  // busy: hooks only try the lock, so they never wait for the background
  // thread (HandOver).
  std::vector<IterationRecord> iteration_backlog_;
  std::vector<WindowRecord> window_backlog_;
  std::atomic<int64_t> hook_dropped_{0};       // iterations dropped because the backlog was full
  std::atomic<int64_t> profiling_window_{-1};  // stats_.profiling_window, kept by the hooks
  std::string hook_warning_;                    // written by the hooks while !hook_warning_ready_
  std::atomic<bool> hook_warning_ready_{false};  // the background thread raises and clears it

  // Shared with the background thread.
  mutable std::mutex mu_;
  std::condition_variable cv_;
  std::condition_variable plan_cv_;             // a new plan arrived, or Close(); WaitWhilePaused waits on it
  std::shared_ptr<const RankPlan> pending_;     // newest plan from the server; guarded by mu_
  double last_contact_s_ = 0;                   // when the server last answered a plan poll; guarded by mu_
  // The newest plan's pause, for PauseRequested: its from_iteration (-1: not
  // a pause) and whether it releases the GPUs. Written with pending_, under mu_.
  std::atomic<int64_t> pause_from_iteration_{-1};
  std::atomic<bool> pause_release_{false};
  std::atomic<bool> has_pending_{false};
  std::vector<IterationRecord> iterations_out_;  // guarded by mu_
  std::vector<WindowRecord> windows_out_;
  std::vector<std::shared_ptr<const RankPlan>> retired_plans_;  // guarded by mu_; freed by the background thread
  std::map<int64_t, std::vector<double>> framework_durations_;  // iteration -> seconds
  std::deque<std::string> warnings_;
  std::set<std::string> warned_;  // warning keys already raised (raise each once)
  bool stop_ = false;
  bool flush_ = false;  // wake the background thread now
  RankClientStats stats_;  // guarded by mu_ (the hook-owned fields are copied in Stats())
  std::atomic<int64_t> iterations_done_{0};
  int achieved_mismatch_samples_ = 0;  // background thread only
  std::thread sync_;
};

}  // namespace perseus::client
