// Unlocking clocks on SIGINT/SIGTERM and at exit. The signal handler only
// writes the signal number to a pipe (async-signal-safe) and chains to the
// previous handler; a watcher thread does the GPU calls.
#include <fcntl.h>
#include <signal.h>
#include <unistd.h>

#include <cstdlib>
#include <mutex>
#include <set>
#include <thread>

#include "runtime/client/clock_controller.h"

namespace perseus::client {

namespace {

std::mutex& RegistryMutex() {
  static std::mutex* mu = new std::mutex;  // never destroyed: used at exit
  return *mu;
}
std::set<ClockController*>& Registry() {
  static auto* set = new std::set<ClockController*>;
  return *set;
}

int g_pipe[2] = {-1, -1};
struct sigaction g_previous[2];
constexpr int kSignals[2] = {SIGINT, SIGTERM};

void RestoreAll() {
  std::lock_guard<std::mutex> lock(RegistryMutex());
  for (ClockController* c : Registry()) c->Restore();
}

void OnSignal(int sig) {
  const int saved_errno = errno;
  unsigned char b = static_cast<unsigned char>(sig);
  ssize_t n = write(g_pipe[1], &b, 1);
  (void)n;
  for (int i = 0; i < 2; ++i) {
    const struct sigaction& prev = g_previous[i];
    if (kSignals[i] != sig) continue;
    if ((prev.sa_flags & SA_SIGINFO) == 0 && prev.sa_handler != SIG_DFL && prev.sa_handler != SIG_IGN) {
      prev.sa_handler(sig);
    }
  }
  errno = saved_errno;
}

void Watch() {
  unsigned char sig = 0;
  while (read(g_pipe[0], &sig, 1) == 1) {
    RestoreAll();
    for (int i = 0; i < 2; ++i) {
      if (kSignals[i] == sig && (g_previous[i].sa_flags & SA_SIGINFO) == 0 &&
          g_previous[i].sa_handler == SIG_DFL) {
        signal(sig, SIG_DFL);
        raise(sig);  // the default action: terminate
      }
    }
  }
}

void InstallOnce() {
  if (pipe2(g_pipe, O_CLOEXEC) != 0) return;
  for (int i = 0; i < 2; ++i) {
    struct sigaction sa {};
    sa.sa_handler = OnSignal;
    sigemptyset(&sa.sa_mask);
    sa.sa_flags = SA_RESTART;
    sigaction(kSignals[i], &sa, &g_previous[i]);
    if ((g_previous[i].sa_flags & SA_SIGINFO) == 0 && g_previous[i].sa_handler == SIG_IGN) {
      sigaction(kSignals[i], &g_previous[i], nullptr);  // an ignored signal stays ignored
    }
  }
  std::thread(Watch).detach();
  std::atexit(RestoreAll);
}

}  // namespace

void RegisterForRestore(ClockController* controller) {
  static std::once_flag once;
  std::call_once(once, InstallOnce);
  std::lock_guard<std::mutex> lock(RegistryMutex());
  Registry().insert(controller);
}

void UnregisterForRestore(ClockController* controller) {
  std::lock_guard<std::mutex> lock(RegistryMutex());
  Registry().erase(controller);
}

}  // namespace perseus::client
