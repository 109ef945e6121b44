// SpawnChild: runs a binary of the project as a child process for end-to-end
// tests, with its stderr in a log file, the test's own FAKE_NVML_* knobs
// replaced by `env`, and killed when the test process dies.
// Thread safety: call from the test's main thread (fork).
#pragma once

#include <fcntl.h>
#include <signal.h>
#include <sys/prctl.h>
#include <unistd.h>

#include <cstring>
#include <string>
#include <vector>

extern char** environ;

namespace perseus::e2e {

// Starts `path` with `args` (args[0] is the program name) and the test's
// environment minus its FAKE_NVML_* variables, plus `env` ("NAME=value").
// Returns the child's pid (or -1 when fork fails).
inline pid_t SpawnChild(const std::string& path, std::vector<std::string> args, std::vector<std::string> env,
                        const std::string& log_path) {
  for (char** e = environ; *e != nullptr; ++e) {
    if (std::strncmp(*e, "FAKE_NVML_", 10) != 0) env.push_back(*e);
  }
  // Everything the child needs is built before fork: it only calls async-signal-safe functions.
  std::vector<char*> argv, envp;
  for (std::string& a : args) argv.push_back(a.data());
  for (std::string& e : env) envp.push_back(e.data());
  argv.push_back(nullptr);
  envp.push_back(nullptr);
  int log_fd = open(log_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  pid_t parent = getpid();
  pid_t pid = fork();
  if (pid == 0) {
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (getppid() != parent) _exit(126);
    dup2(log_fd, STDERR_FILENO);
    execve(path.c_str(), argv.data(), envp.data());
    _exit(127);
  }
  close(log_fd);
  return pid;
}

}  // namespace perseus::e2e
