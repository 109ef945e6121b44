// End-to-end tests of the perseusd binary (PERSEUSD_PATH) with the fake
// libnvidia-ml (FAKE_NVML_PATH): clients set clocks through DaemonGpu, and
// the fake's state file shows what reached the "driver". Each test starts its
// own daemon on a temporary socket; the daemon dies with the test process
// (PR_SET_PDEATHSIG) and TearDown kills and reaps it, so none is left behind.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>

#include "runtime/gpu/daemon_gpu.h"
#include "child_process.h"
#include "common/temp_dir_for_test.h"
#include "runtime/gpu/fake_nvml/fake_nvml_state.h"
#include "runtime/gpu/open_gpu.h"

extern char** environ;

namespace perseus::runtime {
namespace {

template <typename Pred>
bool WaitFor(Pred done, int timeout_ms = 3000) {
  auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout_ms);
  while (!done()) {
    if (std::chrono::steady_clock::now() > deadline) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
  return true;
}

std::string ReadText(const std::string& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

class PerseusdTest : public ::testing::Test {
 protected:
  void SetUp() override {
    socket_ = dir_ + "/perseusd.sock";
    state_ = dir_ + "/fake_nvml_state";
    log_ = dir_ + "/perseusd.log";
  }

  void TearDown() override {
    if (pid_ > 0) {
      kill(pid_, SIGKILL);
      waitpid(pid_, nullptr, 0);
    }
  }

  // Starts perseusd with two fake GPUs; `env` adds fake NVML knobs.
  pid_t Spawn(std::vector<std::string> args, std::vector<std::string> env) {
    args.insert(args.begin(), "perseusd");
    env.push_back("FAKE_NVML_STATE=" + state_);
    env.push_back("FAKE_NVML_GPUS=2");
    return e2e::SpawnChild(PERSEUSD_PATH, std::move(args), std::move(env), log_);
  }

  // Starts the daemon and waits until it accepts connections.
  void StartDaemon(std::vector<std::string> env = {}) {
    pid_ = Spawn({"--socket", socket_, "--nvml-library", FAKE_NVML_PATH}, std::move(env));
    ASSERT_GT(pid_, 0);
    bool exited = false;
    bool up = WaitFor([&] {
      const bool ok = Connectable();
      exited = !ok && waitpid(pid_, nullptr, WNOHANG) == pid_;
      return ok || exited;
    });
    if (exited) pid_ = -1;  // reaped: nothing to kill in TearDown
    ASSERT_FALSE(exited) << "perseusd exited: " << ReadText(log_);
    ASSERT_TRUE(up) << "perseusd did not come up: " << ReadText(log_);
  }

  // The daemon accepts connections (the socket file appears at bind, before listen).
  bool Connectable() {
    sockaddr_un addr = {};
    addr.sun_family = AF_UNIX;
    std::strcpy(addr.sun_path, socket_.c_str());
    int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    const bool ok = connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) == 0;
    close(fd);
    return ok;
  }

  // Sends `sig` and returns the daemon's exit status (-1 if it did not exit in 3 s).
  int StopDaemon(int sig) {
    kill(pid_, sig);
    return WaitForExit();
  }

  int WaitForExit() {
    int status = 0;
    bool exited = WaitFor([&] { return waitpid(pid_, &status, WNOHANG) == pid_; });
    if (!exited) return -1;
    pid_ = -1;
    return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  }

  std::vector<FakeNvmlGpuState> State() { return ParseFakeNvmlState(ReadText(state_)); }
  int Locked(int gpu) {
    std::vector<FakeNvmlGpuState> s = State();
    return gpu < static_cast<int>(s.size()) ? s[gpu].locked_sm_clock_mhz : -1;
  }

  ScopedTempDir tmp_;  // removed after TearDown killed the daemon
  const std::string dir_ = tmp_.path();
  std::string socket_, state_, log_;
  pid_t pid_ = -1;
};

TEST_F(PerseusdTest, SetsClocksForAClientAndResetsThemWhenItDisconnects) {
  StartDaemon();
  Result<std::unique_ptr<GpuControl>> gpu = OpenDaemonGpu(socket_, 1);
  ASSERT_TRUE(gpu.ok()) << gpu.status().ToString() << "\n" << ReadText(log_);
  EXPECT_EQ((*gpu)->Name(), "NVIDIA A100-SXM4-40GB");
  EXPECT_EQ((*gpu)->Uuid(), "GPU-00000000-fa4e-4000-8000-000000000001");
  ASSERT_TRUE((*gpu)->SetSmClockMhz(1200).ok());
  EXPECT_EQ(Locked(1), 1200);
  EXPECT_EQ(Locked(0), 0);
  Result<double> e1 = (*gpu)->TotalEnergyJ();
  std::this_thread::sleep_for(std::chrono::milliseconds(250));  // the fake's counter steps every 100 ms
  Result<double> e2 = (*gpu)->TotalEnergyJ();
  ASSERT_TRUE(e1.ok() && e2.ok());
  EXPECT_GT(*e2, *e1);

  gpu = Status::Internal("closed");  // the connection closes
  EXPECT_TRUE(WaitFor([&] { return Locked(1) == 0; })) << ReadText(state_);
  EXPECT_EQ(State()[1].sets, 1);
}

TEST_F(PerseusdTest, ResetsTheClocksOfAClientProcessThatDies) {
  StartDaemon();
  pid_t child = fork();
  if (child == 0) {
    Result<std::unique_ptr<GpuControl>> gpu = OpenDaemonGpu(socket_, 0);
    if (!gpu.ok() || !(*gpu)->SetSmClockMhz(1005).ok()) _exit(1);
    raise(SIGKILL);  // a crash: no destructor, the kernel closes the socket
    _exit(2);
  }
  ASSERT_GT(child, 0);
  int status = 0;
  ASSERT_EQ(waitpid(child, &status, 0), child);
  ASSERT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL) << "the client failed to set the clock";
  EXPECT_TRUE(WaitFor([&] { return Locked(0) == 0 && State()[0].resets == 2; })) << ReadText(state_);
  EXPECT_EQ(State()[0].sets, 1);  // it was set, then reset (resets: one at start-up, one on disconnect)
  EXPECT_TRUE(WaitFor([&] { return ReadText(log_).find("gone: GPU 0 clock reset") != std::string::npos; }))
      << ReadText(log_);
}

TEST_F(PerseusdTest, SigtermResetsEveryGpuAndRemovesTheSocket) {
  StartDaemon();
  Result<std::unique_ptr<GpuControl>> gpu = OpenDaemonGpu(socket_, 0);
  ASSERT_TRUE(gpu.ok()) << gpu.status().ToString();
  ASSERT_TRUE((*gpu)->SetSmClockMhz(1410).ok());
  EXPECT_EQ(Locked(0), 1410);
  EXPECT_EQ(StopDaemon(SIGTERM), 0) << ReadText(log_);
  EXPECT_EQ(Locked(0), 0);
  EXPECT_EQ(State()[1].resets, 2);  // start-up and shutdown
  EXPECT_FALSE(std::filesystem::exists(socket_));
  EXPECT_NE(ReadText(log_).find("exiting on Terminated"), std::string::npos) << ReadText(log_);
}

// The allow lists reach the policy: the start-up line names them.
TEST_F(PerseusdTest, AllowedUsersAndGroupsAreLoggedAtStartUp) {
  pid_ = Spawn({"--socket", socket_, "--nvml-library", FAKE_NVML_PATH, "--allow-uid", "4242", "--allow-group", "4343",
                "--allow-group", "0"},
               {});
  ASSERT_TRUE(WaitFor([&] { return ReadText(log_).find("listening on") != std::string::npos; })) << ReadText(log_);
  EXPECT_NE(ReadText(log_).find("allowed users: root, uid 4242, group 0, group 4343"), std::string::npos)
      << ReadText(log_);
}

TEST_F(PerseusdTest, OneClientPerGpu) {
  StartDaemon();
  Result<std::unique_ptr<GpuControl>> first = OpenDaemonGpu(socket_, 0);
  ASSERT_TRUE(first.ok()) << first.status().ToString();
  Result<std::unique_ptr<GpuControl>> second = OpenDaemonGpu(socket_, 0);
  ASSERT_FALSE(second.ok());
  EXPECT_EQ(second.status().message(),
            "perseusd: GPU 0 is claimed by another client (pid " + std::to_string(getpid()) + ", uid " +
                std::to_string(geteuid()) + ")");
  EXPECT_TRUE(OpenDaemonGpu(socket_, 1).ok());
}

TEST_F(PerseusdTest, RanksFallBackToMeasureOnlyWhenTheDaemonMayNotSetClocks) {
  StartDaemon({"FAKE_NVML_DENY_SET=1"});
  GpuOpenOptions options;
  options.daemon_socket = socket_;
  Result<std::unique_ptr<GpuControl>> gpu = OpenGpu(options);
  ASSERT_TRUE(gpu.ok()) << gpu.status().ToString();
  EXPECT_TRUE((*gpu)->MeasureOnly());
  EXPECT_TRUE((*gpu)->SetSmClockMhz(1200).ok());
  EXPECT_TRUE((*gpu)->TotalEnergyJ().ok());
  EXPECT_EQ(Locked(0), 0);
  EXPECT_NE(ReadText(log_).find("warning: cannot reset GPU 0: GPU 0: nvmlDeviceResetGpuLockedClocks: Insufficient "
                                "Permissions (NVML_ERROR_NO_PERMISSION)"),
            std::string::npos)
      << ReadText(log_);

  options.measure_only_fallback = false;
  options.index = 1;
  Result<std::unique_ptr<GpuControl>> strict = OpenGpu(options);
  ASSERT_FALSE(strict.ok());
  EXPECT_EQ(strict.status().message(),
            "perseusd: GPU 1: nvmlDeviceResetGpuLockedClocks: Insufficient Permissions (NVML_ERROR_NO_PERMISSION); "
            "run perseusd as root or grant clock permissions");
}

TEST_F(PerseusdTest, StartupErrorsAreReportedAndLeaveNoSocket) {
  pid_ = Spawn({"--socket", socket_, "--nvml-library", dir_ + "/libnvidia-ml.so.1"}, {});
  EXPECT_EQ(WaitForExit(), 1);
  EXPECT_EQ(ReadText(log_), "perseusd: error: dlopen(" + dir_ + "/libnvidia-ml.so.1): " + dir_ +
                                "/libnvidia-ml.so.1: cannot open shared object file: No such file or directory\n");
  EXPECT_FALSE(std::filesystem::exists(socket_));

  pid_ = Spawn({"--socket", socket_, "--nvml-library", FAKE_NVML_PATH, "--allow-user", "no-such-user-perseus"}, {});
  EXPECT_EQ(WaitForExit(), 1);
  EXPECT_EQ(ReadText(log_), "perseusd: error: --allow-user: user 'no-such-user-perseus': no such user\n");
  pid_ = Spawn({"--socket", socket_, "--nvml-library", FAKE_NVML_PATH, "--allow-group", "no-such-group-perseus"}, {});
  EXPECT_EQ(WaitForExit(), 1);
  EXPECT_EQ(ReadText(log_), "perseusd: error: --allow-group: group 'no-such-group-perseus': no such group\n");

  for (const char* mode : {"rw", "-0", "+660", "06600"}) {
    pid_ = Spawn({"--socket", socket_, "--nvml-library", FAKE_NVML_PATH, "--socket-mode", mode}, {});
    EXPECT_EQ(WaitForExit(), 1);
    EXPECT_EQ(ReadText(log_), std::string("perseusd: error: --socket-mode ") + mode +
                                  ": expected an octal mode such as 0660\n");
  }
  for (const char* mode : {"0600", "0640", "0604"}) {
    pid_ = Spawn({"--socket", socket_, "--nvml-library", FAKE_NVML_PATH, "--socket-mode", mode}, {});
    EXPECT_EQ(WaitForExit(), 1);
    EXPECT_EQ(ReadText(log_), std::string("perseusd: error: --socket-mode ") + mode +
                                  ": lets no training user connect (connecting needs the group or others write bit); "
                                  "expected a mode such as 0660\n");
  }
  pid_ = Spawn({"--socket", socket_, "--nvml-library", FAKE_NVML_PATH, "--allow-uid", "99999999999"}, {});
  EXPECT_EQ(WaitForExit(), 1);
  EXPECT_EQ(ReadText(log_), "perseusd: error: --allow-uid: uid 99999999999: out of range (0 to 4294967294)\n");
  std::ofstream(dir_ + "/file") << "not a folder";
  pid_ = Spawn({"--socket", dir_ + "/file/perseusd.sock", "--nvml-library", FAKE_NVML_PATH}, {});
  EXPECT_EQ(WaitForExit(), 1);
  EXPECT_NE(ReadText(log_).find("perseusd: error: socket " + dir_ + "/file/perseusd.sock: cannot create its folder: "),
            std::string::npos)
      << ReadText(log_);
  // Usage errors: CLI11's words with the program's prefix, and exit status 2.
  pid_ = Spawn({"--bogus"}, {});
  EXPECT_EQ(WaitForExit(), 2);
  EXPECT_EQ(ReadText(log_), "perseusd: error: The following argument was not expected: --bogus\n"
                            "Run with --help for more information.\n");
  pid_ = Spawn({"--max-clients", "0"}, {});
  EXPECT_EQ(WaitForExit(), 2);
  EXPECT_EQ(ReadText(log_).rfind("perseusd: error: --max-clients: ", 0), 0u) << ReadText(log_);
}

// A second daemon started on the same socket (a restart racing the old one,
// an operator's mistake) fails, and leaves the running daemon's GPUs as its
// clients set them: it resets clocks only once it owns the socket.
TEST_F(PerseusdTest, ASecondDaemonThatCannotStartLeavesTheRunningOnesClocksAlone) {
  StartDaemon();
  Result<std::unique_ptr<GpuControl>> gpu = OpenDaemonGpu(socket_, 1);
  ASSERT_TRUE(gpu.ok()) << gpu.status().ToString();
  ASSERT_TRUE((*gpu)->SetSmClockMhz(1200).ok());
  const int resets_before = State()[1].resets;
  const std::string second_log = dir_ + "/second.log";
  pid_t second = e2e::SpawnChild(PERSEUSD_PATH, {"perseusd", "--socket", socket_, "--nvml-library", FAKE_NVML_PATH},
                                 {"FAKE_NVML_STATE=" + state_, "FAKE_NVML_GPUS=2"}, second_log);
  int status = 0;
  ASSERT_EQ(waitpid(second, &status, 0), second);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 1);
  EXPECT_EQ(ReadText(second_log), "perseusd: error: " + socket_ + ": another perseusd is already listening there\n");
  EXPECT_EQ(Locked(1), 1200);
  EXPECT_EQ(State()[1].resets, resets_before);
  EXPECT_TRUE((*gpu)->SetSmClockMhz(1005).ok());  // the first daemon still serves
  EXPECT_EQ(Locked(1), 1005);
}

// Started with stdin, stdout and stderr closed (as some supervisors do), the
// daemon's log lines must not land on a client's socket.
TEST_F(PerseusdTest, StartedWithoutStandardStreamsItsLogStaysOffClientSockets) {
  pid_ = e2e::SpawnChild("/bin/sh",
                         {"sh", "-c", "exec \"$0\" \"$@\" 0<&- 1>&- 2>&-", PERSEUSD_PATH, "--socket", socket_,
                          "--nvml-library", FAKE_NVML_PATH},
                         {"FAKE_NVML_STATE=" + state_, "FAKE_NVML_GPUS=2"}, log_);
  ASSERT_TRUE(WaitFor([&] { return Connectable(); }));
  for (int gpu_index = 0; gpu_index < 2; ++gpu_index) {
    Result<std::unique_ptr<GpuControl>> gpu = OpenDaemonGpu(socket_, gpu_index);
    ASSERT_TRUE(gpu.ok()) << gpu.status().ToString();
    ASSERT_TRUE((*gpu)->SetSmClockMhz(1200).ok());  // a log line in the reply stream would break this
    EXPECT_TRUE((*gpu)->TotalEnergyJ().ok());
  }
}

}  // namespace
}  // namespace perseus::runtime
