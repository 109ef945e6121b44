// SIGTERM unlocks the clocks of registered controllers, then terminates the
// process as SIGTERM's default action would.
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <chrono>
#include <thread>

#include "runtime/client/clock_controller.h"
#include "runtime/gpu/fake_gpu.h"

namespace perseus::client {
namespace {

// A FakeGpu that writes one byte to `fd` whenever its clock is unlocked.
class ReportingGpu : public runtime::FakeGpu {
 public:
  explicit ReportingGpu(int fd) : FakeGpu(0), fd_(fd) {}
  Status ResetSmClock() override {
    char c = 'R';
    ssize_t n = write(fd_, &c, 1);
    (void)n;
    return FakeGpu::ResetSmClock();
  }

 private:
  int fd_;
};

TEST(ClockRestoreTest, SigtermUnlocksTheClockAndStillTerminates) {
  int fds[2];
  ASSERT_EQ(pipe(fds), 0);
  pid_t child = fork();
  if (child == 0) {
    close(fds[0]);
    auto gpu = std::make_shared<ReportingGpu>(fds[1]);
    ClockController controller(gpu);
    RegisterForRestore(&controller);
    controller.Request(1200);
    while (!controller.Settled()) std::this_thread::sleep_for(std::chrono::milliseconds(1));
    char ready = 'L';
    if (write(fds[1], &ready, 1) != 1) _exit(3);
    raise(SIGTERM);
    std::this_thread::sleep_for(std::chrono::seconds(10));
    _exit(2);  // not reached: SIGTERM's default action ends the process
  }
  close(fds[1]);
  std::string got;
  char c;
  while (read(fds[0], &c, 1) == 1) got += c;
  int status = 0;
  ASSERT_EQ(waitpid(child, &status, 0), child);
  EXPECT_TRUE(WIFSIGNALED(status));
  if (WIFSIGNALED(status)) {
    EXPECT_EQ(WTERMSIG(status), SIGTERM);
  }
  EXPECT_EQ(got, "LR");
}

}  // namespace
}  // namespace perseus::client
