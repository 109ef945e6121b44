// End-to-end tests of `perseus doctor` (PERSEUS_CLI_PATH) against the fake
// libnvidia-ml (FAKE_NVML_PATH), whose knobs stand in for the machines doctor
// must tell apart: all well, clock control refused, no driver, a capped GPU,
// slow clock switches, coarse or continuous energy counters. And the skip
// path of scripts/gpu_check.sh (GPU_CHECK_SCRIPT) on a machine without a GPU.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <dlfcn.h>

#include "child_process.h"
#include "common/temp_dir_for_test.h"
#include "runtime/gpu/fake_nvml/fake_nvml_state.h"

#include <chrono>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

extern char** environ;

#ifndef PERSEUS_CLI_PATH
#error "PERSEUS_CLI_PATH must name the perseus binary"
#endif

namespace {

namespace fs = std::filesystem;
using nlohmann::json;
using perseus::ScopedTempDir;

std::string Quote(const std::string& s) {
  std::string out = "'";
  for (char c : s) {
    if (c == '\'') out += "'\\''";
    else out += c;
  }
  return out + "'";
}

std::string ReadText(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

struct CliRun {
  int exit_code = -1;
  std::string out, err;
  double wall_s = 0;
};

// Runs `program args...` with the fake NVML's knobs and PERSEUS_* variables
// cleared and then `env` (NAME=VALUE) set.
CliRun RunProgram(const std::string& program, const std::vector<std::string>& args, const std::vector<std::string>& env) {
  ScopedTempDir tmp;
  const fs::path dir = tmp.path();
  std::string cmd = "env";
  for (const char* name : perseus::runtime::kFakeNvmlKnobs) cmd += std::string(" -u ") + name;
  cmd += " -u PERSEUS_NVML_LIBRARY -u PERSEUS_CLI";
  for (const std::string& e : env) cmd += " " + Quote(e);
  cmd += " " + Quote(program);
  for (const std::string& a : args) cmd += " " + Quote(a);
  cmd += " >" + Quote((dir / "out").string()) + " 2>" + Quote((dir / "err").string()) + " </dev/null";
  auto start = std::chrono::steady_clock::now();
  int status = std::system(cmd.c_str());
  CliRun r;
  r.wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  r.out = ReadText(dir / "out");
  r.err = ReadText(dir / "err");
  return r;
}

CliRun Doctor(std::vector<std::string> args, const std::vector<std::string>& env = {}) {
  args.insert(args.begin(), "doctor");
  return RunProgram(PERSEUS_CLI_PATH, args, env);
}

// `perseus doctor --json` on the fake library; the report's checks by name.
struct Report {
  CliRun run;
  json report;
  const json& Check(const std::string& name) const {
    for (const json& c : report["checks"]) {
      if (c["name"] == name) return c;
    }
    static const json none;
    ADD_FAILURE() << "no check named " << name << " in " << run.out;
    return none;
  }
};

Report DoctorJson(const std::vector<std::string>& env, std::vector<std::string> args = {}) {
  args.insert(args.end(), {"--nvml-library", FAKE_NVML_PATH, "--json"});
  Report r;
  r.run = Doctor(args, env);
  r.report = json::parse(r.run.out, nullptr, false);
  EXPECT_FALSE(r.report.is_discarded()) << "not JSON: " << r.run.out << r.run.err;
  return r;
}

bool Contains(const json& s, const std::string& part) {
  return s.is_string() && s.get<std::string>().find(part) != std::string::npos;
}

TEST(DoctorTest, EveryCheckPassesOnTheFakeGpu) {
  Report r = DoctorJson({"FAKE_NVML_LOCK_CALL_MS=2", "FAKE_NVML_CLOCK_LATENCY_MS=20"});
  ASSERT_EQ(r.run.exit_code, 0) << r.run.out << r.run.err;
  EXPECT_EQ(r.report["schema"], "perseus.doctor/v1");
  EXPECT_EQ(r.report["ok"], true);
  std::vector<std::string> names;
  for (const json& c : r.report["checks"]) {
    names.push_back(c["name"].get<std::string>());
    EXPECT_EQ(c["verdict"], "ok") << c.dump();
  }
  EXPECT_EQ(names, (std::vector<std::string>{"nvml", "gpus", "clocks", "clock_control", "locked_clock",
                                             "switch_latency", "energy_counter", "power", "restore"}));
  EXPECT_EQ(r.report["summary"], (json{{"ok", 9}, {"warn", 0}, {"fail", 0}, {"skip", 0}}));
  EXPECT_EQ(r.Check("gpus")["reason"],
            "1 GPU: NVIDIA A100-SXM4-40GB; checking GPU 0 (GPU-00000000-fa4e-4000-8000-000000000000)");
  EXPECT_EQ(r.Check("clocks")["reason"], "81 clocks, 210-1410 MHz");
  EXPECT_EQ(r.Check("locked_clock")["reason"], "locked 1410 MHz; the GPU runs at 1410 MHz");
  const json& latency = r.Check("switch_latency")["values"];
  EXPECT_EQ(latency["clocks_mhz"], (json{1065, 705}));  // nearest 3/4 and 1/2 of 1410 MHz
  EXPECT_GE(latency["median_ms"].get<double>(), 2.0);  // the lock call
  EXPECT_LT(latency["median_ms"].get<double>(), 10.0);
  EXPECT_GE(latency["shown_median_ms"].get<double>(), 22.0);  // NVML's report: the call, then 20 ms
  // The fake's default counter steps every 100 ms, at 400 W (unlocked: 1410 MHz).
  const json& counter = r.Check("energy_counter")["values"];
  EXPECT_NEAR(counter["period_ms"].get<double>(), 100, 10);
  EXPECT_EQ(counter["continuous"], false);
  EXPECT_NEAR(counter["mean_power_w"].get<double>(), 400, 20);
  EXPECT_NEAR(r.Check("power")["values"]["power_w"].get<double>(), 400, 0.01);
  EXPECT_EQ(r.Check("restore")["reason"], "SM clock unlocked (ResetSmClock): the driver picks clocks again");
  EXPECT_LT(r.run.wall_s, 8.0) << "doctor should take about 2 s";
}

TEST(DoctorTest, TextReportHasOneLinePerCheckAndASummary) {
  CliRun r = Doctor({"--nvml-library", FAKE_NVML_PATH});
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  std::istringstream lines(r.out);
  std::string line;
  std::vector<std::string> all;
  while (std::getline(lines, line)) all.push_back(line);
  ASSERT_EQ(all.size(), 11u) << r.out;
  EXPECT_EQ(all[0], std::string("perseus doctor: GPU 0, NVML ") + FAKE_NVML_PATH);
  EXPECT_EQ(all[1], std::string("ok    NVML library          loaded ") + FAKE_NVML_PATH);
  EXPECT_EQ(all[3], "ok    supported SM clocks   81 clocks, 210-1410 MHz");
  EXPECT_EQ(all[10], "summary: 9 ok, 0 warn, 0 fail, 0 skip: ready for perseus");
}

TEST(DoctorTest, RefusedClockControlFailsAndSaysWhy) {
  Report r = DoctorJson({"FAKE_NVML_DENY_SET=1"});
  EXPECT_EQ(r.run.exit_code, 1) << r.run.out << r.run.err;
  EXPECT_EQ(r.report["ok"], false);
  const json& control = r.Check("clock_control");
  EXPECT_EQ(control["verdict"], "fail");
  EXPECT_TRUE(Contains(control["reason"],
                       "GPU 0: nvmlDeviceSetGpuLockedClocks(1410): Insufficient Permissions (NVML_ERROR_NO_PERMISSION)"))
      << control.dump();
  EXPECT_TRUE(Contains(control["reason"], geteuid() == 0 ? "doctor runs as root, so the GPU or driver refuses"
                                                         : "not root: run it as root, or through perseusd with --daemon"))
      << control.dump();
  EXPECT_EQ(r.Check("locked_clock")["verdict"], "skip");
  EXPECT_EQ(r.Check("switch_latency")["verdict"], "skip");
  EXPECT_EQ(r.Check("energy_counter")["verdict"], "ok");
  EXPECT_EQ(r.Check("power")["verdict"], "ok");
  EXPECT_EQ(r.Check("restore")["verdict"], "skip");
  EXPECT_EQ(r.Check("restore")["reason"], "no clock was locked");
}

// A library named the driver's way that the loader cannot find: no driver.
TEST(DoctorTest, MissingDriverFailsWithAClearMessage) {
  CliRun r = Doctor({"--nvml-library", "libnvidia-ml-absent.so.1"});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.out.find("fail  NVML library          no NVIDIA driver: libnvidia-ml-absent.so.1 not found "
                       "(dlopen(libnvidia-ml-absent.so.1): libnvidia-ml-absent.so.1: cannot open shared "
                       "object file: No such file or directory)\n"),
            std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("skip  clock restored        NVML did not load\n"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("summary: 0 ok, 0 warn, 1 fail, 8 skip: not ready for perseus"), std::string::npos) << r.out;
}

// A path that is not there is a mistake (a typo), not a machine without a
// driver: scripts/gpu_check.sh must not skip on it.
TEST(DoctorTest, AMissingLibraryPathIsNamedAsAMistake) {
  CliRun r = Doctor({"--nvml-library", "/nonexistent/libnvidia-ml.so.1"});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.out.find("fail  NVML library          /nonexistent/libnvidia-ml.so.1 does not exist: --nvml-library "
                       "or PERSEUS_NVML_LIBRARY names a missing file (unset, the driver's libnvidia-ml.so.1 is "
                       "looked for) (dlopen("),
            std::string::npos)
      << r.out;
  EXPECT_EQ(r.out.find("no NVIDIA driver"), std::string::npos) << r.out;
}

// A file that is not a library is that file's fault, not a missing driver.
TEST(DoctorTest, AGivenFileThatIsNotALibraryIsNamed) {
  CliRun r = Doctor({"--nvml-library", "/etc/passwd"});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.out.find("fail  NVML library          /etc/passwd is not a library this machine can load (dlopen(/etc/passwd): "),
            std::string::npos)
      << r.out;
  EXPECT_EQ(r.out.find("no NVIDIA driver"), std::string::npos) << r.out;
}

TEST(DoctorTest, DefaultLibraryNameWhenThereIsNoDriver) {
  void* real = dlopen("libnvidia-ml.so.1", RTLD_NOW | RTLD_LOCAL);
  if (real != nullptr) {
    dlclose(real);
    GTEST_SKIP() << "this machine has an NVIDIA driver";
  }
  CliRun r = Doctor({});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.out.find("fail  NVML library          no NVIDIA driver: libnvidia-ml.so.1 not found ("),
            std::string::npos)
      << r.out;
}

TEST(DoctorTest, DriverNotLoadedIsNoDriver) {
  Report r = DoctorJson({"FAKE_NVML_INIT_ERROR=9"});
  EXPECT_EQ(r.run.exit_code, 1);
  EXPECT_EQ(r.Check("nvml")["reason"], "no NVIDIA driver: nvmlInit_v2: Driver Not Loaded (NVML_ERROR_DRIVER_NOT_LOADED)");
}

TEST(DoctorTest, CappedGpuWarnsAndCitesTheDriverIssue) {
  Report r = DoctorJson({"FAKE_NVML_ACHIEVED_CAP_MHZ=1200"});
  EXPECT_EQ(r.run.exit_code, 0) << r.run.out << r.run.err;  // a warning is not a failure
  const json& locked = r.Check("locked_clock");
  EXPECT_EQ(locked["verdict"], "warn") << locked.dump();
  EXPECT_TRUE(Contains(locked["reason"], "locked 1410 MHz, but the GPU runs at 1200 MHz")) << locked.dump();
  EXPECT_TRUE(Contains(locked["reason"], "open-gpu-kernel-modules #1314")) << locked.dump();
  EXPECT_EQ(locked["values"]["achieved_mhz"], 1200);
  // The switch test uses clocks below the cap, so it still sees them.
  const json& latency = r.Check("switch_latency");
  EXPECT_EQ(latency["verdict"], "ok") << latency.dump();
  EXPECT_EQ(latency["values"]["clocks_mhz"], (json{900, 600}));
  EXPECT_EQ(r.Check("restore")["verdict"], "ok");
}

// NVML showing a clock late is not a slow switch (an H200: 35-130 ms, while computations ran at the
// new clock's speed once the lock call returned); a slow lock call is.
TEST(DoctorTest, ALateReportedClockIsNotASlowSwitch) {
  Report r = DoctorJson({"FAKE_NVML_CLOCK_LATENCY_MS=60"});
  EXPECT_EQ(r.run.exit_code, 0);
  const json& latency = r.Check("switch_latency");
  EXPECT_EQ(latency["verdict"], "ok") << latency.dump();
  EXPECT_NEAR(latency["values"]["shown_median_ms"].get<double>(), 60, 10);
  EXPECT_LT(latency["values"]["median_ms"].get<double>(), 5);
  EXPECT_TRUE(Contains(latency["reason"], "a report that can lag the clock itself")) << latency.dump();
}

TEST(DoctorTest, SlowClockSwitchesWarn) {
  Report r = DoctorJson({"FAKE_NVML_LOCK_CALL_MS=30"});
  EXPECT_EQ(r.run.exit_code, 0);
  const json& latency = r.Check("switch_latency");
  EXPECT_EQ(latency["verdict"], "warn") << latency.dump();
  EXPECT_NEAR(latency["values"]["median_ms"].get<double>(), 30, 5);
  EXPECT_TRUE(Contains(latency["reason"], "slower than 10 ms")) << latency.dump();
  // The advice names the knob that helps.
  EXPECT_TRUE(Contains(latency["reason"], "max_clock_changes_per_gpu")) << latency.dump();
}

TEST(DoctorTest, MeasuresTheEnergyCounterPeriod) {
  Report r = DoctorJson({"FAKE_NVML_ENERGY_PERIOD_MS=50"});
  EXPECT_EQ(r.run.exit_code, 0);
  const json& counter = r.Check("energy_counter");
  EXPECT_EQ(counter["verdict"], "ok");
  EXPECT_NEAR(counter["values"]["period_ms"].get<double>(), 50, 5) << counter.dump();
  EXPECT_GE(counter["values"]["intervals"].get<int>(), 7);
  // 400 W for 50 ms: each update is 20 J.
  EXPECT_NEAR(counter["values"]["resolution_j"].get<double>(), 20, 2) << counter.dump();
  EXPECT_TRUE(Contains(counter["reason"], "updates every ")) << counter.dump();
  EXPECT_TRUE(Contains(counter["reason"], "keep one update under 1%")) << counter.dump();
}

TEST(DoctorTest, ContinuousEnergyCounter) {
  Report r = DoctorJson({"FAKE_NVML_ENERGY_PERIOD_MS=0"});
  EXPECT_EQ(r.run.exit_code, 0);
  const json& counter = r.Check("energy_counter");
  EXPECT_EQ(counter["values"]["continuous"], true) << counter.dump();
  EXPECT_TRUE(Contains(counter["reason"], "updates on every read")) << counter.dump();
}

TEST(DoctorTest, MissingEnergyCounterFails) {
  Report r = DoctorJson({"FAKE_NVML_NO_ENERGY=1"});
  EXPECT_EQ(r.run.exit_code, 1);
  const json& counter = r.Check("energy_counter");
  EXPECT_EQ(counter["verdict"], "fail");
  EXPECT_TRUE(Contains(counter["reason"], "no energy counter: GPU 0: nvmlDeviceGetTotalEnergyConsumption: Not Supported"))
      << counter.dump();
  EXPECT_EQ(r.Check("restore")["verdict"], "ok");  // the clock was still unlocked
}

TEST(DoctorTest, PicksTheGpuAndListsTheOthers) {
  Report r = DoctorJson({"FAKE_NVML_GPUS=4"}, {"--gpu", "2"});
  EXPECT_EQ(r.run.exit_code, 0);
  EXPECT_EQ(r.report["gpu"], 2);
  EXPECT_EQ(r.Check("gpus")["reason"],
            "4 GPUs: NVIDIA A100-SXM4-40GB x4; checking GPU 2 (GPU-00000000-fa4e-4000-8000-000000000002)");
  EXPECT_EQ(r.Check("gpus")["values"]["gpus"].size(), 4u);
}

TEST(DoctorTest, NoSuchGpu) {
  Report r = DoctorJson({}, {"--gpu", "3"});
  EXPECT_EQ(r.run.exit_code, 1);
  EXPECT_EQ(r.Check("gpus")["reason"], "GPU 3: no such GPU (NVML sees 1: 0-0)");
  EXPECT_EQ(r.Check("clocks")["reason"], "no GPU to check");
}

TEST(DoctorTest, BadUsageExitsWithTwo) {
  CliRun r = Doctor({"--gpu", "-1", "--nvml-library", FAKE_NVML_PATH});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.err, "perseus: error: --gpu: expected a whole number >= 0, got -1\nRun with --help for more information.\n");
  EXPECT_EQ(r.out, "");
  r = Doctor({"--gpu", "010", "--nvml-library", FAKE_NVML_PATH});  // ten, not octal eight
  EXPECT_NE(r.out.find("GPU 10: no such GPU"), std::string::npos) << r.out;
}

TEST(DoctorTest, UnreachableDaemonFailsClockControl) {
  Report r = DoctorJson({}, {"--daemon", "/nonexistent/perseusd.sock"});
  EXPECT_EQ(r.run.exit_code, 1);
  const json& control = r.Check("clock_control");
  EXPECT_EQ(control["verdict"], "fail");
  EXPECT_TRUE(Contains(control["reason"], "/nonexistent/perseusd.sock")) << control.dump();
  EXPECT_EQ(r.Check("energy_counter")["verdict"], "ok");  // reading needs no daemon
  EXPECT_EQ(r.Check("restore")["verdict"], "skip");
}

// A perseusd on a temporary socket, sharing the fake GPUs' state file with
// doctor and logging to `log_path`; killed and reaped when destroyed (and
// killed if the test dies).
class Perseusd {
 public:
  Perseusd(const std::string& socket_path, const std::string& state_path, const std::string& log_path)
      : socket_(socket_path) {
    pid_ = perseus::e2e::SpawnChild(PERSEUSD_PATH, {"perseusd", "--socket", socket_path, "--nvml-library", FAKE_NVML_PATH},
                           {"FAKE_NVML_STATE=" + state_path}, log_path);
  }
  ~Perseusd() {
    if (pid_ > 0) {
      kill(pid_, SIGKILL);
      waitpid(pid_, nullptr, 0);
    }
  }
  Perseusd(const Perseusd&) = delete;
  Perseusd& operator=(const Perseusd&) = delete;

  // True once the daemon accepts connections (within 5 s).
  bool WaitUntilUp() const {
    auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(5);
    while (std::chrono::steady_clock::now() < deadline) {
      sockaddr_un addr = {};
      addr.sun_family = AF_UNIX;
      std::strncpy(addr.sun_path, socket_.c_str(), sizeof(addr.sun_path) - 1);
      int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
      bool ok = connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) == 0;
      close(fd);
      if (ok) return true;
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    return false;
  }

 private:
  std::string socket_;
  pid_t pid_ = -1;
};

TEST(DoctorTest, LocksThroughPerseusd) {
  ScopedTempDir tmp;  // before the daemon: removed after it stops
  const fs::path dir = tmp.path();
  std::string socket_path = (dir / "perseusd.sock").string();
  std::string state = (dir / "fake_nvml_state").string();
  {
    Perseusd daemon(socket_path, state, (dir / "perseusd.log").string());
    ASSERT_TRUE(daemon.WaitUntilUp()) << ReadText(dir / "perseusd.log");
    Report r = DoctorJson({"FAKE_NVML_STATE=" + state, "FAKE_NVML_CLOCK_LATENCY_MS=1"}, {"--daemon", socket_path});
    EXPECT_EQ(r.run.exit_code, 0) << r.run.out << r.run.err << ReadText(dir / "perseusd.log");
    EXPECT_EQ(r.report["daemon_socket"], socket_path);
    EXPECT_EQ(r.Check("clock_control")["reason"], "locked the SM clock to 1410 MHz through perseusd at " + socket_path);
    EXPECT_EQ(r.Check("clock_control")["values"]["via"], "perseusd");
    // Doctor reads the clock the daemon locked through NVML in its own process.
    EXPECT_EQ(r.Check("locked_clock")["verdict"], "ok") << r.Check("locked_clock").dump();
    EXPECT_EQ(r.Check("switch_latency")["verdict"], "ok") << r.Check("switch_latency").dump();
    EXPECT_EQ(r.Check("restore")["verdict"], "ok");
    EXPECT_NE(ReadText(state).find("locked_sm_clock_mhz 0 "), std::string::npos) << ReadText(state);
  }
}

// Doctor started through a shell that execs it, so the pid is doctor's and
// its report goes to `out` and its messages to `err`.
struct SpawnedDoctor {
  pid_t pid;
  fs::path out, err;
};

SpawnedDoctor SpawnDoctorJson(const fs::path& dir, const std::vector<std::string>& env) {
  SpawnedDoctor d{-1, dir / "out", dir / "err"};
  std::string cmd = "exec " + Quote(PERSEUS_CLI_PATH) + " doctor --json --nvml-library " + Quote(FAKE_NVML_PATH) + " >" +
                    Quote(d.out.string()) + " 2>" + Quote(d.err.string());
  d.pid = perseus::e2e::SpawnChild("/bin/sh", {"sh", "-c", cmd}, env, (dir / "sh.log").string());
  return d;
}

// The wait status of `pid`, or -1 if it did not end within `limit_s`.
int WaitFor(pid_t pid, double limit_s) {
  auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(limit_s);
  while (std::chrono::steady_clock::now() < deadline) {
    int status = 0;
    if (waitpid(pid, &status, WNOHANG) == pid) return status;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  kill(pid, SIGKILL);
  waitpid(pid, nullptr, 0);
  return -1;
}

void SleepForS(double s) { std::this_thread::sleep_for(std::chrono::duration<double>(s)); }

// True once process `pid` runs perseus and catches `sig` (its handlers are
// installed), within 10 s; read from /proc/PID/status's SigCgt mask.
bool WaitUntilCatching(pid_t pid, int sig) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (std::chrono::steady_clock::now() < deadline) {
    std::error_code ec;
    const bool is_perseus = fs::read_symlink("/proc/" + std::to_string(pid) + "/exe", ec) == fs::path(PERSEUS_CLI_PATH);
    std::istringstream status(ReadText("/proc/" + std::to_string(pid) + "/status"));
    std::string line;
    while (is_perseus && std::getline(status, line)) {
      if (line.rfind("SigCgt:", 0) == 0 && (std::stoull(line.substr(7), nullptr, 16) >> (sig - 1) & 1) != 0) return true;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  return false;
}

// True once process `pid` sleeps (state S) on two reads 50 ms apart, within
// 10 s: doctor sleeps first in the fake's slow clock-lock call.
bool WaitUntilAsleep(pid_t pid) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  int asleep = 0;
  while (std::chrono::steady_clock::now() < deadline && asleep < 2) {
    const std::string stat = ReadText("/proc/" + std::to_string(pid) + "/stat");
    const size_t paren = stat.rfind(')');
    asleep = paren != std::string::npos && stat.compare(paren + 1, 3, " S ") == 0 ? asleep + 1 : 0;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  return asleep >= 2;
}

// True once the fake GPU's state file shows `sets` clock locks done, within 10 s.
bool WaitForLocks(const fs::path& state, int sets) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (std::chrono::steady_clock::now() < deadline) {
    if (ReadText(state).find(" sets " + std::to_string(sets) + " ") != std::string::npos) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  return false;
}

// A signal while a lock call is slow ends doctor once that call returns, not
// after every remaining switch: the clock is unlocked, the report says it was
// interrupted, and doctor then ends by the signal (so a script that ran it
// stops too). `timeout` signals its child and then the child's group, so two
// signals close together are one interruption.
TEST(DoctorTest, ASignalEndsDoctorAfterTheSlowCallAndUnlocksTheClock) {
  ScopedTempDir tmp;
  const fs::path state = fs::path(tmp.path()) / "fake_nvml_state";
  SpawnedDoctor d = SpawnDoctorJson(fs::path(tmp.path()), {"FAKE_NVML_LOCK_CALL_MS=1500", "FAKE_NVML_STATE=" + state.string()});
  ASSERT_TRUE(WaitForLocks(state, 1)) << ReadText(d.err);  // the clock-control lock is done ...
  SleepForS(0.3);                                          // ... and the first switch's 1.5 s call runs
  auto signalled = std::chrono::steady_clock::now();
  kill(d.pid, SIGTERM);
  kill(d.pid, SIGTERM);
  int status = WaitFor(d.pid, 20);
  double after_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - signalled).count();
  ASSERT_TRUE(WIFSIGNALED(status)) << "wait status " << status << ": " << ReadText(d.err);
  EXPECT_EQ(WTERMSIG(status), SIGTERM) << ReadText(d.err);
  EXPECT_LT(after_s, 3.0) << "the remaining switches ran after the signal";
  json report = json::parse(ReadText(d.out), nullptr, false);
  ASSERT_FALSE(report.is_discarded()) << ReadText(d.out) << ReadText(d.err);
  EXPECT_EQ(report["interrupted"], "SIGTERM");
  EXPECT_EQ(report["ok"], false);
  std::map<std::string, json> checks;
  for (const json& c : report["checks"]) checks[c["name"].get<std::string>()] = c;
  ASSERT_EQ(checks.size(), 9u) << report.dump();
  EXPECT_EQ(checks["locked_clock"]["verdict"], "ok");
  EXPECT_EQ(checks["switch_latency"]["verdict"], "skip");
  EXPECT_EQ(checks["switch_latency"]["reason"], "interrupted by SIGTERM after 1 of 6 switches");
  EXPECT_EQ(checks["energy_counter"]["reason"], "interrupted by SIGTERM");
  EXPECT_EQ(checks["restore"]["verdict"], "ok") << checks["restore"].dump();
  EXPECT_NE(ReadText(state).find("locked_sm_clock_mhz 0 "), std::string::npos) << ReadText(state);
  EXPECT_NE(ReadText(d.err).find("interrupted: finishing the NVML call in progress, then unlocking the clock"),
            std::string::npos)
      << ReadText(d.err);
}

// A call that never returns: a second signal, a while after the first, ends
// doctor at once and says how to unlock the clock by hand.
TEST(DoctorTest, ASecondSignalEndsAStuckCallAtOnce) {
  ScopedTempDir tmp;
  SpawnedDoctor d = SpawnDoctorJson(fs::path(tmp.path()), {"FAKE_NVML_LOCK_CALL_MS=60000"});
  ASSERT_TRUE(WaitUntilCatching(d.pid, SIGINT));
  ASSERT_TRUE(WaitUntilAsleep(d.pid));  // in the 60 s lock call
  kill(d.pid, SIGINT);
  SleepForS(1.5);
  kill(d.pid, SIGINT);
  int status = WaitFor(d.pid, 5);
  ASSERT_TRUE(WIFSIGNALED(status)) << "wait status " << status << ": " << ReadText(d.err);
  EXPECT_EQ(WTERMSIG(status), SIGINT);
  EXPECT_NE(ReadText(d.err).find("second signal: exiting now; the SM clock may still be locked: unlock it with "
                                 "`nvidia-smi -rgc -i 0`"),
            std::string::npos)
      << ReadText(d.err);
}

// A signal the caller ignores (nohup, a shell's background job) stays ignored:
// doctor runs to the end.
TEST(DoctorTest, AnIgnoredSignalStaysIgnored) {
  ScopedTempDir tmp;
  const fs::path dir(tmp.path());
  std::string cmd = "trap '' HUP; exec " + Quote(PERSEUS_CLI_PATH) + " doctor --json --nvml-library " + Quote(FAKE_NVML_PATH) +
                    " >" + Quote((dir / "out").string()) + " 2>" + Quote((dir / "err").string());
  pid_t pid = perseus::e2e::SpawnChild("/bin/sh", {"sh", "-c", cmd}, {"FAKE_NVML_LOCK_CALL_MS=300"}, (dir / "sh.log").string());
  ASSERT_TRUE(WaitUntilCatching(pid, SIGINT));
  kill(pid, SIGHUP);
  int status = WaitFor(pid, 20);
  ASSERT_TRUE(WIFEXITED(status)) << "wait status " << status << ": " << ReadText(dir / "err");
  EXPECT_EQ(WEXITSTATUS(status), 0) << ReadText(dir / "out");
  json report = json::parse(ReadText(dir / "out"), nullptr, false);
  EXPECT_TRUE(report["interrupted"].is_null()) << report.dump();
}

// Lock calls of a second: the switch test stops starting switches after 2 s
// instead of running all six.
TEST(DoctorTest, SlowLockCallsEndTheSwitchTestEarly) {
  Report r = DoctorJson({"FAKE_NVML_LOCK_CALL_MS=1000"});
  EXPECT_EQ(r.run.exit_code, 0) << r.run.out << r.run.err;
  const json& latency = r.Check("switch_latency");
  EXPECT_EQ(latency["verdict"], "warn") << latency.dump();
  EXPECT_EQ(latency["values"]["switches"], 2) << latency.dump();
  EXPECT_TRUE(Contains(latency["reason"], "median of 2 switches")) << latency.dump();
  EXPECT_TRUE(Contains(latency["reason"], "stopped after 2 of 6 switches: they took over 2 s")) << latency.dump();
  // The new clock is looked for after the slow call returns, not within 200 ms of its start.
  EXPECT_EQ(latency["values"]["timeouts"], 0) << latency.dump();
  EXPECT_EQ(r.Check("restore")["verdict"], "ok");
  EXPECT_LT(r.run.wall_s, 9.0);
}

// scripts/gpu_check.sh on a machine without a GPU: one line, exit 0.
TEST(GpuCheckScriptTest, SkipsWithoutAGpu) {
  CliRun r = RunProgram(GPU_CHECK_SCRIPT, {}, {std::string("PERSEUS_CLI=") + PERSEUS_CLI_PATH,
                                            "PERSEUS_NVML_LIBRARY=libnvidia-ml-absent.so.1"});
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_EQ(r.out, "skipped: no NVIDIA GPU (no NVIDIA driver: libnvidia-ml-absent.so.1 not found)\n") << r.err;
}

// A mistyped library path fails instead of skipping, before anything is
// built or run (PERSEUS_CLI=/bin/false: doctor is never reached).
TEST(GpuCheckScriptTest, AMissingLibraryPathIsAnError) {
  const std::string expected = "gpu_check: error: /nonexistent/libnvidia-ml.so.1 does not exist: --nvml-library or "
                               "PERSEUS_NVML_LIBRARY names a missing file (unset, the driver's libnvidia-ml.so.1 is "
                               "looked for)\n";
  CliRun r = RunProgram(GPU_CHECK_SCRIPT, {},
                        {"PERSEUS_CLI=/bin/false", "PERSEUS_NVML_LIBRARY=/nonexistent/libnvidia-ml.so.1"});
  EXPECT_EQ(r.exit_code, 1) << r.out << r.err;
  EXPECT_EQ(r.out, "") << r.err;
  EXPECT_EQ(r.err, expected);
  r = RunProgram(GPU_CHECK_SCRIPT, {"--nvml-library", "/nonexistent/libnvidia-ml.so.1"}, {"PERSEUS_CLI=/bin/false"});
  EXPECT_EQ(r.exit_code, 1) << r.out << r.err;
  EXPECT_EQ(r.err, expected);
}

}  // namespace
