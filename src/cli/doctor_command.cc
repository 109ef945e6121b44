// `perseus doctor`: the checks, in order, and their report.
#include "cli/doctor_command.h"

#include <signal.h>
#include <time.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <array>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <iostream>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <thread>
#include <vector>

#include "cli/doctor_estimates.h"
#include "common/flag_checks.h"
#include "common/stats.h"
#include "common/strings.h"
#include "control/clock_change_limit.h"
#include "runtime/gpu/daemon_gpu.h"
#include "runtime/gpu/nvml_gpu.h"

namespace perseus::cli {

namespace {

using Json = nlohmann::json;
using runtime::GpuControl;

// How long the timing checks may take; together they keep doctor under ~5 s.
constexpr double kLockReadbackS = 0.5;     // wait for the locked clock to show
constexpr double kSwitchTimeoutS = 0.2;    // per switch
constexpr int kSwitches = 6;
constexpr double kSwitchBudgetS = 2.0;     // no further switch starts after this long (slow lock calls)
constexpr double kSwitchWarnS = control::kSlowClockSwitchS;  // slower switches lag short computations
constexpr double kClockPollS = 0.0001;
constexpr double kEnergyPollS = 0.001;
constexpr double kEnergyMinS = 1.0;        // poll at least this long ...
constexpr int kEnergyMinChanges = 8;       // ... and until this many changes ...
constexpr double kEnergyMaxS = 3.0;        // ... but no longer than this

enum class Verdict { kOk, kWarn, kFail, kSkip };

const char* VerdictName(Verdict v) {
  switch (v) {
    case Verdict::kOk: return "ok";
    case Verdict::kWarn: return "warn";
    case Verdict::kFail: return "fail";
    case Verdict::kSkip: return "skip";
  }
  return "?";
}

struct Check {
  std::string name;   // stable key in --json
  std::string title;  // what the text report shows
  Verdict verdict = Verdict::kSkip;
  std::string reason;
  Json values = Json::object();
};

// The checks in report order: (name, title).
const std::vector<std::pair<std::string, std::string>>& CheckTitles() {
  static const std::vector<std::pair<std::string, std::string>> titles = {
      {"nvml", "NVML library"},
      {"gpus", "GPUs"},
      {"clocks", "supported SM clocks"},
      {"clock_control", "clock control"},
      {"locked_clock", "locked clock"},
      {"switch_latency", "clock-switch latency"},
      {"energy_counter", "energy counter"},
      {"power", "power reading"},
      {"restore", "clock restored"},
  };
  return titles;
}

Check MakeCheck(const std::string& name, Verdict verdict, std::string reason) {
  Check c;
  c.name = name;
  for (const auto& [n, title] : CheckTitles()) {
    if (n == name) c.title = title;
  }
  c.verdict = verdict;
  c.reason = std::move(reason);
  return c;
}

double NowS() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

void SleepS(double s) { std::this_thread::sleep_for(std::chrono::duration<double>(s)); }

// Why NVML did not load, for people: a missing library or driver says so
// first. Only a library named the driver's way (a file name the loader
// searches for) can mean no driver; a path someone gave (--nvml-library,
// PERSEUS_NVML_LIBRARY) that is missing or does not load is that path's
// fault, so a mistyped path fails instead of reading as a machine without a
// GPU (scripts/gpu_check.sh would skip).
std::string NvmlFailureReason(const std::string& library, const Status& status) {
  const std::string& m = status.message();
  if (m.rfind("dlopen(", 0) == 0) {
    if (library.find('/') != std::string::npos) {
      // The file itself, links followed: dlerror's "No such file" may be
      // about a library it needs.
      std::error_code error;
      if (!std::filesystem::exists(library, error)) {
        return library + " does not exist: --nvml-library or PERSEUS_NVML_LIBRARY names a missing file (unset, the "
                         "driver's libnvidia-ml.so.1 is looked for) (" + m + ")";
      }
      return library + " is not a library this machine can load (" + m + ")";
    }
    if (m.find("No such file or directory") != std::string::npos) {
      return "no NVIDIA driver: " + library + " not found (" + m + ")";
    }
    return "no NVIDIA driver: " + library + " cannot be loaded (" + m + ")";
  }
  if (m.find("NVML_ERROR_DRIVER_NOT_LOADED") != std::string::npos) return "no NVIDIA driver: " + m;
  if (m.rfind("dlsym(", 0) == 0) return library + " is not a usable NVML library: " + m;
  return "NVML did not start: " + m;
}

// The supported clock nearest `mhz`.
int NearestClock(const std::vector<int>& clocks_mhz, double mhz) {
  return *std::min_element(clocks_mhz.begin(), clocks_mhz.end(),
                           [&](int a, int b) { return std::abs(a - mhz) < std::abs(b - mhz); });
}

// The first SIGINT, SIGTERM or SIGHUP while doctor runs: doctor stops after
// the NVML call in progress (which nothing can cut short), unlocks the clock
// and reports what it checked. A second one ends it at once, for a call that
// never returns; the message then says how to unlock the clock by hand. A
// signal within a second of the first is the same interruption: `timeout`
// signals its child and then the child's process group, and a terminal's
// Ctrl-C may reach a wrapper that forwards it too.
volatile sig_atomic_t g_interrupt_signal = 0;
volatile sig_atomic_t g_lock_attempted = 0;  // set before doctor first asks for a clock lock
std::atomic<int64_t> g_interrupt_ns{0};
char g_second_signal_text[160];
size_t g_second_signal_size = 0;
constexpr int64_t kSameInterruptNs = 1'000'000'000;

int64_t MonotonicNs() {  // async-signal-safe
  timespec now;
  clock_gettime(CLOCK_MONOTONIC, &now);
  return static_cast<int64_t>(now.tv_sec) * 1'000'000'000 + now.tv_nsec;
}

extern "C" void OnInterruptSignal(int signo) {
  if (g_interrupt_signal != 0) {
    if (MonotonicNs() - g_interrupt_ns.load() < kSameInterruptNs) return;
    if (g_lock_attempted != 0) {
      (void)!write(STDERR_FILENO, g_second_signal_text, g_second_signal_size);
    } else {
      static const char kNoLock[] = "perseus doctor: second signal: exiting now (no clock was locked)\n";
      (void)!write(STDERR_FILENO, kNoLock, sizeof(kNoLock) - 1);
    }
    signal(signo, SIG_DFL);
    raise(signo);
    return;
  }
  g_interrupt_ns.store(MonotonicNs());
  g_interrupt_signal = signo;
  static const char kText[] =
      "perseus doctor: interrupted: finishing the NVML call in progress, then unlocking the clock "
      "(a second signal, a second or more later, exits at once)\n";
  (void)!write(STDERR_FILENO, kText, sizeof(kText) - 1);
}

bool Interrupted() { return g_interrupt_signal != 0; }

const char* SignalName(int signo) {
  switch (signo) {
    case SIGINT: return "SIGINT";
    case SIGTERM: return "SIGTERM";
    case SIGHUP: return "SIGHUP";
  }
  return "a signal";
}

std::string InterruptedReason() { return std::string("interrupted by ") + SignalName(g_interrupt_signal); }

// Installs OnInterruptSignal for SIGINT, SIGTERM and SIGHUP, except one the
// caller ignores (`nohup`, a shell's background job): that one stays
// ignored. Restores the previous handlers when destroyed.
class InterruptHandlers {
 public:
  explicit InterruptHandlers(int gpu) {
    g_interrupt_signal = 0;
    g_lock_attempted = 0;
    int n = std::snprintf(g_second_signal_text, sizeof(g_second_signal_text),
                          "perseus doctor: second signal: exiting now; the SM clock may still be locked: "
                          "unlock it with `nvidia-smi -rgc -i %d`\n", gpu);
    g_second_signal_size = static_cast<size_t>(std::clamp(n, 0, static_cast<int>(sizeof(g_second_signal_text)) - 1));
    struct sigaction action = {};
    action.sa_handler = OnInterruptSignal;
    sigemptyset(&action.sa_mask);
    action.sa_flags = SA_RESTART;
    for (size_t i = 0; i < kSignals.size(); ++i) {
      sigaction(kSignals[i], nullptr, &old_[i]);
      installed_[i] = old_[i].sa_handler != SIG_IGN;
      if (installed_[i]) sigaction(kSignals[i], &action, nullptr);
    }
  }
  ~InterruptHandlers() {
    for (size_t i = 0; i < kSignals.size(); ++i) {
      if (installed_[i]) sigaction(kSignals[i], &old_[i], nullptr);
    }
  }
  InterruptHandlers(const InterruptHandlers&) = delete;
  InterruptHandlers& operator=(const InterruptHandlers&) = delete;

 private:
  static constexpr std::array<int, 3> kSignals = {SIGINT, SIGTERM, SIGHUP};
  std::array<struct sigaction, 3> old_;
  std::array<bool, 3> installed_ = {};
};

// Runs the checks on one GPU. The GPU is read through NVML in this process
// (reading needs no root) and its clock set either there or through perseusd.
class Doctor {
 public:
  explicit Doctor(const DoctorArgs& args) : args_(args) {}
  ~Doctor() {
    if (locked_ && control_ != nullptr) (void)control_->ResetSmClock();  // last resort; Restore() normally did it
  }
  Doctor(const Doctor&) = delete;
  Doctor& operator=(const Doctor&) = delete;

  std::vector<Check> Run();
  const std::string& library() const { return library_; }

 private:
  Check CheckNvml();
  Check CheckGpus();
  Check CheckClocks();
  Check CheckClockControl();
  Check CheckLockedClock();
  Check CheckSwitchLatency();
  Check Restore();
  Check CheckEnergyCounter();
  Check CheckPower();

  const DoctorArgs& args_;
  std::string library_;
  int gpu_count_ = 0;
  std::unique_ptr<GpuControl> nvml_gpu_;    // reads; also sets clocks without --daemon
  std::unique_ptr<GpuControl> daemon_gpu_;  // sets clocks with --daemon
  GpuControl* control_ = nullptr;           // whichever sets clocks
  std::vector<int> clocks_mhz_;             // descending
  bool can_lock_ = false;
  bool locked_ = false;                     // a lock may be in effect
  bool achieved_readable_ = false;
  int ceiling_mhz_ = 0;                     // the clock reached when locked to the maximum
  std::optional<CounterEstimate> counter_;
};

// Appends a skip for each check from the next one up to, not including, `name`.
void SkipUntil(std::vector<Check>& checks, const std::string& name, const std::string& reason) {
  const auto& titles = CheckTitles();
  while (checks.size() < titles.size() && titles[checks.size()].first != name) {
    checks.push_back(MakeCheck(titles[checks.size()].first, Verdict::kSkip, reason));
  }
}

std::vector<Check> Doctor::Run() {
  std::vector<Check> checks;
  checks.push_back(CheckNvml());
  if (checks.back().verdict == Verdict::kFail) return SkipUntil(checks, "", "NVML did not load"), checks;
  if (!Interrupted()) checks.push_back(CheckGpus());
  if (checks.back().verdict == Verdict::kFail) return SkipUntil(checks, "", "no GPU to check"), checks;
  if (!Interrupted()) checks.push_back(CheckClocks());
  // Each check runs only if no signal came; the restore comes as soon as the
  // clock checks are done or interrupted, and is reported last.
  using Step = Check (Doctor::*)();
  for (Step step : {&Doctor::CheckClockControl, &Doctor::CheckLockedClock, &Doctor::CheckSwitchLatency}) {
    if (Interrupted()) break;
    checks.push_back((this->*step)());
  }
  const Check restore = Restore();
  for (Step step : {&Doctor::CheckEnergyCounter, &Doctor::CheckPower}) {
    if (Interrupted()) break;
    checks.push_back((this->*step)());
  }
  if (Interrupted()) SkipUntil(checks, "restore", InterruptedReason());
  checks.push_back(restore);
  return checks;
}

Check Doctor::CheckNvml() {
  library_ = args_.nvml_library.empty() ? runtime::DefaultNvmlLibraryPath() : args_.nvml_library;
  Result<int> count = runtime::CountNvmlGpus(library_);
  if (!count.ok()) {
    Check c = MakeCheck("nvml", Verdict::kFail, NvmlFailureReason(library_, count.status()));
    c.values["library"] = library_;
    return c;
  }
  gpu_count_ = *count;
  Check c = MakeCheck("nvml", Verdict::kOk, "loaded " + library_);
  c.values["library"] = library_;
  return c;
}

Check Doctor::CheckGpus() {
  if (gpu_count_ == 0) return MakeCheck("gpus", Verdict::kFail, "NVML sees no GPU");
  Json gpus = Json::array();
  std::vector<std::pair<std::string, int>> models;  // name, count, in first-seen order
  std::string open_error;
  for (int i = 0; i < gpu_count_; ++i) {
    Result<std::unique_ptr<GpuControl>> gpu = runtime::OpenNvmlGpu(i, library_);
    if (!gpu.ok()) {
      gpus.push_back({{"index", i}, {"error", gpu.status().message()}});
      if (i == args_.gpu) open_error = gpu.status().message();
      continue;
    }
    std::string name = (*gpu)->Name();
    gpus.push_back({{"index", i}, {"name", name}, {"uuid", (*gpu)->Uuid()}});
    auto it = std::find_if(models.begin(), models.end(), [&](const auto& m) { return m.first == name; });
    if (it == models.end()) models.emplace_back(name, 1);
    else ++it->second;
    if (i == args_.gpu) nvml_gpu_ = std::move(gpu).value();
  }
  std::string list;
  for (const auto& [name, n] : models) list += (list.empty() ? "" : ", ") + name + (n > 1 ? " x" + std::to_string(n) : "");
  std::string seen = std::to_string(gpu_count_) + (gpu_count_ == 1 ? " GPU" : " GPUs") + (list.empty() ? "" : ": " + list);
  Check c;
  if (args_.gpu >= gpu_count_) {
    c = MakeCheck("gpus", Verdict::kFail, Format("GPU %d: no such GPU (NVML sees %d: 0-%d)", args_.gpu, gpu_count_,
                                                 gpu_count_ - 1));
  } else if (nvml_gpu_ == nullptr) {
    c = MakeCheck("gpus", Verdict::kFail, seen + "; GPU " + std::to_string(args_.gpu) + " cannot be opened: " + open_error);
  } else {
    c = MakeCheck("gpus", Verdict::kOk, seen + "; checking GPU " + std::to_string(args_.gpu) + " (" + nvml_gpu_->Uuid() + ")");
  }
  c.values["count"] = gpu_count_;
  c.values["gpus"] = gpus;
  return c;
}

Check Doctor::CheckClocks() {
  Result<std::vector<int>> clocks = nvml_gpu_->SupportedSmClocksMhz();
  if (!clocks.ok()) return MakeCheck("clocks", Verdict::kFail, clocks.status().message());
  if (clocks->empty()) return MakeCheck("clocks", Verdict::kFail, "NVML lists no supported SM clock");
  clocks_mhz_ = *clocks;
  int lo = clocks_mhz_.back(), hi = clocks_mhz_.front();
  Check c = MakeCheck("clocks", Verdict::kOk, Format("%d clocks, %d-%d MHz", static_cast<int>(clocks_mhz_.size()), lo, hi));
  c.values = {{"count", clocks_mhz_.size()}, {"min_mhz", lo}, {"max_mhz", hi}, {"clocks_mhz", clocks_mhz_}};
  return c;
}

Check Doctor::CheckClockControl() {
  if (clocks_mhz_.empty()) return MakeCheck("clock_control", Verdict::kSkip, "no supported clock to lock");
  unsigned uid = geteuid();
  std::string how;
  if (!args_.daemon_socket.empty()) {
    Result<std::unique_ptr<GpuControl>> gpu = runtime::OpenDaemonGpu(args_.daemon_socket, args_.gpu, 5000);
    if (!gpu.ok()) return MakeCheck("clock_control", Verdict::kFail, gpu.status().message());
    daemon_gpu_ = std::move(gpu).value();
    control_ = daemon_gpu_.get();
    how = "through perseusd at " + args_.daemon_socket;
  } else {
    control_ = nvml_gpu_.get();
    how = uid == 0 ? "as root" : "as uid " + std::to_string(uid) + ", not root: this driver lets users lock clocks";
  }
  int max_mhz = clocks_mhz_.front();
  if (Interrupted()) return MakeCheck("clock_control", Verdict::kSkip, InterruptedReason());
  g_lock_attempted = 1;
  Status st = control_->SetSmClockMhz(max_mhz);
  if (!st.ok()) {
    std::string reason = st.message();
    if (st.code() == Status::Code::kUnavailable && args_.daemon_socket.empty()) {
      reason += uid == 0 ? "; doctor runs as root, so the GPU or driver refuses clock locking"
                         : "; doctor runs as uid " + std::to_string(uid) +
                               ", not root: run it as root, or through perseusd with --daemon SOCKET";
    }
    Check c = MakeCheck("clock_control", Verdict::kFail, reason);
    c.values = {{"uid", uid}, {"via", args_.daemon_socket.empty() ? "nvml" : "perseusd"}};
    return c;
  }
  can_lock_ = locked_ = true;
  Check c = MakeCheck("clock_control", Verdict::kOk, Format("locked the SM clock to %d MHz ", max_mhz) + how);
  c.values = {{"uid", uid}, {"via", args_.daemon_socket.empty() ? "nvml" : "perseusd"}};
  return c;
}

Check Doctor::CheckLockedClock() {
  if (!can_lock_) return MakeCheck("locked_clock", Verdict::kSkip, "no clock could be locked");
  int target = clocks_mhz_.front();
  double start = NowS();
  int achieved = 0;
  for (;;) {
    Result<int> r = nvml_gpu_->AchievedSmClockMhz();
    if (!r.ok()) {
      return MakeCheck("locked_clock", r.status().code() == Status::Code::kUnavailable ? Verdict::kSkip : Verdict::kFail,
                       "the achieved clock cannot be read: " + r.status().message());
    }
    achieved = *r;
    if (Interrupted()) return MakeCheck("locked_clock", Verdict::kSkip, InterruptedReason());
    if (achieved == target || NowS() - start > kLockReadbackS) break;
    SleepS(kClockPollS);
  }
  double waited_s = NowS() - start;
  achieved_readable_ = true;
  ceiling_mhz_ = std::min(achieved, target);
  Check c;
  if (achieved == target) {
    c = MakeCheck("locked_clock", Verdict::kOk, Format("locked %d MHz; the GPU runs at %d MHz", target, achieved));
  } else {
    c = MakeCheck("locked_clock", Verdict::kWarn,
                  Format("locked %d MHz, but the GPU runs at %d MHz %.1f s later: a power or thermal cap, or a driver "
                         "that accepts the lock without applying it (NVIDIA open-gpu-kernel-modules #1314); "
                         "profiles then belong to the achieved clock",
                         target, achieved, waited_s));
  }
  c.values = {{"locked_mhz", target}, {"achieved_mhz", achieved}};
  return c;
}

Check Doctor::CheckSwitchLatency() {
  if (!can_lock_) return MakeCheck("switch_latency", Verdict::kSkip, "no clock could be locked");
  if (!achieved_readable_) return MakeCheck("switch_latency", Verdict::kSkip, "the achieved clock cannot be read");
  // Two clocks well below the one the GPU reached, so a cap does not hide the switch.
  int a = NearestClock(clocks_mhz_, 0.75 * ceiling_mhz_);
  int b = NearestClock(clocks_mhz_, 0.5 * ceiling_mhz_);
  if (a == b) {
    auto other = std::find_if(clocks_mhz_.begin(), clocks_mhz_.end(), [&](int f) { return f != a; });
    if (other == clocks_mhz_.end()) return MakeCheck("switch_latency", Verdict::kSkip, "the GPU supports only one clock");
    b = *other;
  }
  std::vector<double> settle_s, call_s;
  int timeouts = 0;
  const double begin_s = NowS();
  auto interrupted_after = [](int switches) {
    return MakeCheck("switch_latency", Verdict::kSkip,
                     InterruptedReason() + Format(" after %d of %d switches", switches, kSwitches));
  };
  for (int i = 0; i < kSwitches && (i == 0 || NowS() - begin_s < kSwitchBudgetS); ++i) {
    if (Interrupted()) return interrupted_after(i);
    int target = i % 2 == 0 ? a : b;
    std::vector<ClockSample> samples;
    double start = NowS();
    Status st = control_->SetSmClockMhz(target);
    call_s.push_back(NowS() - start);
    if (!st.ok()) return MakeCheck("switch_latency", Verdict::kFail, "switching clocks: " + st.message());
    // Up to kSwitchTimeoutS after the call returned (a slow call must not use the whole wait up).
    const double returned = NowS();
    while (NowS() - returned < kSwitchTimeoutS && !Interrupted()) {
      Result<int> r = nvml_gpu_->AchievedSmClockMhz();
      if (!r.ok()) return MakeCheck("switch_latency", Verdict::kFail, "reading the achieved clock: " + r.status().message());
      samples.push_back({NowS(), *r});
      if (*r == target) break;
      SleepS(kClockPollS);
    }
    if (Interrupted()) return interrupted_after(i + 1);  // not a switch that did not show
    std::optional<double> t = FindClockSettleTime(samples, start, target);
    if (t.has_value()) settle_s.push_back(*t);
    else ++timeouts;
  }
  // The lock call's duration is the switch latency perseus uses (ClockController): on an H200 the
  // computations ran at the new clock's speed once it returned, while NVML showed the clock later.
  const double call_median = Median(call_s);
  const double call_lo = *std::min_element(call_s.begin(), call_s.end());
  const double call_hi = *std::max_element(call_s.begin(), call_s.end());
  const int switches = static_cast<int>(call_s.size());
  std::string text = Format("lock calls take %.2f ms (median of %d switch%s between %d and %d MHz: %.2f-%.2f ms)",
                            call_median * 1000, switches, switches == 1 ? "" : "es", a, b, call_lo * 1000,
                            call_hi * 1000);
  if (switches < kSwitches) {
    text += Format("; stopped after %d of %d switches: they took over %.0f s", switches, kSwitches, kSwitchBudgetS);
  }
  Verdict v = Verdict::kOk;
  nlohmann::json values = {{"median_ms", call_median * 1000}, {"min_ms", call_lo * 1000}, {"max_ms", call_hi * 1000},
                            {"switches", switches}, {"timeouts", timeouts}, {"clocks_mhz", {a, b}}};
  if (settle_s.empty()) {
    v = Verdict::kWarn;
    text += Format("; NVML never showed the new clock within %.0f ms after the lock call returned", kSwitchTimeoutS * 1000);
  } else {
    const double median = Median(settle_s);
    text += Format("; NVML shows the new clock %.2f ms after the call (%.2f-%.2f ms), a report that can lag the "
                   "clock itself (on an H200 it showed 35-130 ms while computations ran at the new clock's speed "
                   "once the call returned; scripts/gpu_check.sh measures it on this GPU)",
                   median * 1000, *std::min_element(settle_s.begin(), settle_s.end()) * 1000,
                   *std::max_element(settle_s.begin(), settle_s.end()) * 1000);
    values["shown_median_ms"] = median * 1000;
    if (timeouts > 0) {
      v = Verdict::kWarn;
      text += Format("; %d of %d switches did not show within %.0f ms", timeouts, switches, kSwitchTimeoutS * 1000);
    }
  }
  if (call_median > kSwitchWarnS) {
    v = Verdict::kWarn;
    text += Format("; slower than %.0f ms: short computations run partly at the previous clock. Each change "
                   "leaves up to %.0f ms of work at the previous clock: limit changes per iteration so that "
                   "changes x %.0f ms stays well below the iteration time (max_clock_changes_per_gpu in POST "
                   "/jobs, perseus optimize --max-clock-changes; docs/schedules.md, \"Clock changes\")",
                   kSwitchWarnS * 1000, call_median * 1000, call_median * 1000);
  }
  Check c = MakeCheck("switch_latency", v, text);
  c.values = std::move(values);
  return c;
}

Check Doctor::Restore() {
  if (!locked_) return MakeCheck("restore", Verdict::kSkip, "no clock was locked");
  Status st = control_->ResetSmClock();
  if (!st.ok()) {
    return MakeCheck("restore", Verdict::kFail,
                     st.message() + "; the clock may still be locked: unlock it with `nvidia-smi -rgc -i " +
                         std::to_string(args_.gpu) + "`");
  }
  locked_ = false;
  return MakeCheck("restore", Verdict::kOk, "SM clock unlocked (ResetSmClock): the driver picks clocks again");
}

Check Doctor::CheckEnergyCounter() {
  std::vector<EnergySample> samples;
  double start = NowS();
  int changes = 0;
  for (;;) {
    double t = NowS();
    Result<double> e = nvml_gpu_->TotalEnergyJ();
    if (!e.ok()) {
      return MakeCheck("energy_counter", Verdict::kFail,
                       "no energy counter: " + e.status().message() + "; perseus measures energy with it (Volta or newer)");
    }
    if (Interrupted()) return MakeCheck("energy_counter", Verdict::kSkip, InterruptedReason());
    if (!samples.empty() && *e != samples.back().energy_j) ++changes;
    samples.push_back({t, *e});
    double elapsed = t - start;
    if ((elapsed >= kEnergyMinS && changes >= kEnergyMinChanges) || elapsed >= kEnergyMaxS) break;
    SleepS(kEnergyPollS);
  }
  Result<CounterEstimate> est = EstimateCounter(samples);
  if (!est.ok()) return MakeCheck("energy_counter", Verdict::kFail, est.status().message());
  counter_ = *est;
  double polled_s = samples.back().time_s - samples.front().time_s;
  Check c;
  if (est->changes < 2) {
    c = MakeCheck("energy_counter", Verdict::kWarn,
                  Format("changed %d time(s) in %.1f s of polling: it updates less often than that, or is stuck",
                         est->changes, polled_s));
  } else if (est->continuous) {
    c = MakeCheck("energy_counter", Verdict::kOk,
                  Format("updates on every read (continuous: period <= %.1f ms); smallest step %.3f J",
                         est->median_poll_s * 1000, est->resolution_j));
  } else {
    c = MakeCheck("energy_counter", Verdict::kOk,
                  Format("updates every %.1f ms (median of %d intervals, %.1f-%.1f ms; polled every %.1f ms); "
                         "smallest step %.3f J; windows of >= %.0f s keep one update under 1%%",
                         est->median_period_s * 1000, est->intervals, est->min_period_s * 1000,
                         est->max_period_s * 1000, est->median_poll_s * 1000, est->resolution_j,
                         est->median_period_s * 100));
  }
  c.values = {{"period_ms", est->median_period_s * 1000}, {"min_period_ms", est->min_period_s * 1000},
              {"max_period_ms", est->max_period_s * 1000}, {"intervals", est->intervals},
              {"changes", est->changes}, {"resolution_j", est->resolution_j},
              {"poll_ms", est->median_poll_s * 1000}, {"continuous", est->continuous},
              {"mean_power_w", est->mean_power_w}, {"polled_s", polled_s}};
  return c;
}

Check Doctor::CheckPower() {
  Result<double> p = nvml_gpu_->PowerW();
  if (!p.ok()) return MakeCheck("power", Verdict::kFail, p.status().message());
  std::string text = Format("%.1f W now", *p);
  Check c;
  if (counter_.has_value() && counter_->mean_power_w > 0) {
    text += Format(" (the energy counter averaged %.1f W while polled)", counter_->mean_power_w);
  }
  c = MakeCheck("power", *p > 0 ? Verdict::kOk : Verdict::kWarn, *p > 0 ? text : text + ": the sensor reads nothing");
  c.values = {{"power_w", *p}};
  if (counter_.has_value()) c.values["counter_power_w"] = counter_->mean_power_w;
  return c;
}

std::map<Verdict, int> Count(const std::vector<Check>& checks) {
  std::map<Verdict, int> n = {{Verdict::kOk, 0}, {Verdict::kWarn, 0}, {Verdict::kFail, 0}, {Verdict::kSkip, 0}};
  for (const Check& c : checks) ++n[c.verdict];
  return n;
}

std::string Summary(const std::map<Verdict, int>& n) {
  return Format("%d ok, %d warn, %d fail, %d skip", n.at(Verdict::kOk), n.at(Verdict::kWarn), n.at(Verdict::kFail),
                n.at(Verdict::kSkip));
}

}  // namespace

int RunDoctor(const DoctorArgs& args, std::ostream& out) {
  if (args.gpu < 0) {
    std::cerr << "perseus: error: --gpu: expected a GPU index >= 0, got " << args.gpu << "\n";
    return 2;
  }
  std::vector<Check> checks;
  std::string library;
  int interrupt_signal = 0;
  {
    InterruptHandlers handlers(args.gpu);
    {
      Doctor doctor(args);
      checks = doctor.Run();
      library = doctor.library();
    }
    interrupt_signal = g_interrupt_signal;
  }
  std::map<Verdict, int> n = Count(checks);
  bool failed = n.at(Verdict::kFail) > 0;
  if (args.json) {
    Json report = {{"schema", "perseus.doctor/v1"}, {"gpu", args.gpu}, {"nvml_library", library},
                   {"daemon_socket", args.daemon_socket}, {"ok", !failed && interrupt_signal == 0},
                   {"interrupted", interrupt_signal == 0 ? Json(nullptr) : Json(SignalName(interrupt_signal))}};
    report["checks"] = Json::array();
    for (const Check& c : checks) {
      report["checks"].push_back(
          {{"name", c.name}, {"title", c.title}, {"verdict", VerdictName(c.verdict)}, {"reason", c.reason}, {"values", c.values}});
    }
    report["summary"] = {{"ok", n.at(Verdict::kOk)}, {"warn", n.at(Verdict::kWarn)}, {"fail", n.at(Verdict::kFail)},
                         {"skip", n.at(Verdict::kSkip)}};
    out << report.dump(2) << "\n";
  } else {
    out << "perseus doctor: GPU " << args.gpu << ", NVML " << library
        << (args.daemon_socket.empty() ? "" : ", perseusd " + args.daemon_socket) << "\n";
    for (const Check& c : checks) out << Format("%-5s %-21s ", VerdictName(c.verdict), c.title.c_str()) << c.reason << "\n";
    out << "summary: " << Summary(n)
        << (interrupt_signal != 0 ? ": " + InterruptedReason() + ": run doctor again for a verdict"
            : failed              ? ": not ready for perseus (see the failed checks)"
            : n.at(Verdict::kWarn) > 0 ? ": ready, with warnings"
                                       : ": ready for perseus")
        << "\n";
  }
  out.flush();
  if (interrupt_signal != 0) {
    // End by the signal itself, as if it had not been caught: a shell then
    // stops the script that ran doctor instead of going on (the report is out).
    std::fflush(stdout);
    signal(interrupt_signal, SIG_DFL);
    raise(interrupt_signal);
    return 128 + interrupt_signal;  // if the caller blocks it
  }
  return failed ? 1 : 0;
}

void RegisterDoctorCommand(CLI::App& app) {
  auto args = std::make_shared<DoctorArgs>();
  CLI::App* cmd = app.add_subcommand(
      "doctor", "Check this machine's GPU for perseus: NVML, clocks, permissions, clock-switch latency, energy counter");
  cmd->add_option("--gpu", args->gpu, "GPU index (NVML numbering, as nvidia-smi)")
      ->transform(kNonNegativeInt)
      ->capture_default_str();
  cmd->add_option("--nvml-library", args->nvml_library,
                  "NVML library to load (default: $PERSEUS_NVML_LIBRARY, else libnvidia-ml.so.1)");
  cmd->add_option("--daemon", args->daemon_socket, "Lock clocks through the perseusd listening on this socket");
  cmd->add_flag("--json", args->json, "Print a machine-readable report (schema perseus.doctor/v1)");
  cmd->callback([args] {
    int rc = RunDoctor(*args, std::cout);
    if (rc != 0) throw CLI::RuntimeError(rc);
  });
}

}  // namespace perseus::cli
