// perseusd: the node daemon that sets GPU SM clocks for perseus training
// processes, so they need no root. Flags are parsed here; everything else
// lives in the daemon library (gpu_broker, daemon_server, peer_policy).
// See docs/gpu_control.md for the protocol, security model and a systemd unit.
#include <fcntl.h>
#include <signal.h>
#include <sys/signalfd.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <cstdlib>
#include <string>

#include "common/command_line.h"
#include "common/flag_checks.h"
#include "perseus/version.h"
#include "runtime/daemon/daemon_server.h"
#include "runtime/daemon/gpu_broker.h"
#include "runtime/daemon/peer_policy.h"
#include "runtime/gpu/nvml_gpu.h"

namespace perseus::runtime {
namespace {

struct Flags {
  std::string socket_path = kDefaultDaemonSocketPath;
  std::string socket_mode = "0660";
  std::string socket_group;
  std::vector<std::string> allow_uids;
  std::vector<std::string> allow_users;
  std::vector<std::string> allow_groups;
  std::string nvml_library;
  size_t max_clients = 256;
  size_t max_clients_per_user = 64;
};

void Log(const std::string& line) { std::fprintf(stderr, "perseusd: %s\n", line.c_str()); }

// SIGTERM, SIGINT and SIGHUP, blocked and delivered through the returned fd.
Result<int> StopSignals() {
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, SIGTERM);
  sigaddset(&set, SIGINT);
  sigaddset(&set, SIGHUP);
  if (sigprocmask(SIG_BLOCK, &set, nullptr) != 0) return Status::Internal(std::string("sigprocmask: ") + std::strerror(errno));
  signal(SIGPIPE, SIG_IGN);
  int fd = signalfd(-1, &set, SFD_CLOEXEC);
  if (fd < 0) return Status::Internal(std::string("signalfd: ") + std::strerror(errno));
  return fd;
}

Result<PeerPolicy> BuildPolicy(const Flags& flags) {
  std::vector<uid_t> uids;
  for (const std::string& uid : flags.allow_uids) {
    if (uid.empty() || uid.find_first_not_of("0123456789") != std::string::npos) {
      return Status::InvalidArgument("--allow-uid " + uid + ": expected a numeric uid (use --allow-user for names)");
    }
    Result<uid_t> resolved = ResolveUser(uid);
    if (!resolved.ok()) return resolved.status().WithContext("--allow-uid");
    uids.push_back(*resolved);
  }
  for (const std::string& user : flags.allow_users) {
    Result<uid_t> resolved = ResolveUser(user);
    if (!resolved.ok()) return resolved.status().WithContext("--allow-user");
    uids.push_back(*resolved);
  }
  std::vector<gid_t> gids;
  for (const std::string& group : flags.allow_groups) {
    Result<gid_t> resolved = ResolveGroup(group);
    if (!resolved.ok()) return resolved.status().WithContext("--allow-group");
    gids.push_back(*resolved);
  }
  return PeerPolicy(std::move(uids), geteuid(), std::move(gids));
}

Result<DaemonServerOptions> BuildServerOptions(const Flags& flags) {
  DaemonServerOptions options;
  options.socket_path = flags.socket_path;
  const std::string& text = flags.socket_mode;
  if (text.empty() || text.size() > 4 || text.find_first_not_of("01234567") != std::string::npos) {
    return Status::InvalidArgument("--socket-mode " + text + ": expected an octal mode such as 0660");
  }
  const long mode = std::strtol(text.c_str(), nullptr, 8);
  if (mode > 0777) return Status::InvalidArgument("--socket-mode " + text + ": only permission bits (at most 0777)");
  // Connecting to a Unix socket needs write permission on it.
  if ((mode & 0022) == 0) {
    return Status::InvalidArgument("--socket-mode " + text +
                                   ": lets no training user connect (connecting needs the group or others write "
                                   "bit); expected a mode such as 0660");
  }
  options.socket_mode = static_cast<mode_t>(mode);
  if (!flags.socket_group.empty()) {
    Result<gid_t> gid = ResolveGroup(flags.socket_group);
    if (!gid.ok()) return gid.status().WithContext("--socket-group");
    options.socket_gid = *gid;
  }
  Result<PeerPolicy> policy = BuildPolicy(flags);
  if (!policy.ok()) return policy.status();
  options.policy = *policy;
  options.max_clients = flags.max_clients;
  options.max_clients_per_uid = flags.max_clients_per_user;
  return options;
}

Result<std::vector<std::unique_ptr<GpuControl>>> OpenAllGpus(const std::string& library) {
  Result<int> count = CountNvmlGpus(library);
  if (!count.ok()) return count.status();
  if (*count == 0) return Status::NotFound("NVML sees no GPUs on this node");
  std::vector<std::unique_ptr<GpuControl>> gpus;
  for (int i = 0; i < *count; ++i) {
    Result<std::unique_ptr<GpuControl>> gpu = OpenNvmlGpu(i, library);
    if (!gpu.ok()) return gpu.status();
    gpus.push_back(std::move(gpu).value());
  }
  return gpus;
}

Status Run(const Flags& flags) {
  Result<int> stop_fd = StopSignals();
  if (!stop_fd.ok()) return stop_fd.status();
  Result<DaemonServerOptions> options = BuildServerOptions(flags);
  if (!options.ok()) return options.status();
  Result<std::vector<std::unique_ptr<GpuControl>>> gpus = OpenAllGpus(flags.nvml_library);
  if (!gpus.ok()) return gpus.status();
  GpuBroker broker(std::move(gpus).value());
  std::string policy = options->policy.Describe();
  // Listen first: a second daemon that cannot take the socket must not
  // touch the GPUs whose clocks the running one's clients have set.
  Result<std::unique_ptr<DaemonServer>> server = DaemonServer::Listen(std::move(options).value(), &broker);
  if (!server.ok()) return server.status();
  // A daemon killed with SIGKILL cannot reset; its successor does.
  for (const GpuReset& r : broker.ResetAll()) {
    if (!r.status.ok()) Log("warning: cannot reset GPU " + std::to_string(r.gpu) + ": " + r.status.message());
  }
  Log("listening on " + flags.socket_path + " for " + std::to_string(broker.gpu_count()) + " GPU(s) (" +
      broker.gpu(0).Name() + "); allowed users: " + policy);
  Status served = (*server)->Serve(*stop_fd);
  signalfd_siginfo info = {};
  if (read(*stop_fd, &info, sizeof(info)) == static_cast<ssize_t>(sizeof(info))) {
    Log(std::string("exiting on ") + strsignal(static_cast<int>(info.ssi_signo)));
  }
  close(*stop_fd);
  return served;
}

}  // namespace
}  // namespace perseus::runtime

int main(int argc, char** argv) {
  // Started with stdin, stdout or stderr closed, the first socket would take
  // that number and log lines would go to a client: fill them with /dev/null.
  int fd = open("/dev/null", O_RDWR);
  while (fd >= 0 && fd <= 2) fd = open("/dev/null", O_RDWR);
  if (fd > 2) close(fd);
  perseus::runtime::Flags flags;
  CLI::App app{"perseusd: sets GPU SM clocks on behalf of perseus training processes (run as root)"};
  app.set_version_flag("--version", std::string("perseusd ") + perseus::kVersion);
  app.add_option("--socket", flags.socket_path, "Unix socket to listen on")->capture_default_str();
  app.add_option("--socket-mode", flags.socket_mode, "File mode of the socket, octal")->capture_default_str();
  app.add_option("--socket-group", flags.socket_group, "Group that owns the socket (name or gid)");
  app.add_option("--allow-uid", flags.allow_uids, "Numeric uid allowed to connect (repeatable; root always is)");
  app.add_option("--allow-user", flags.allow_users, "User allowed to connect (repeatable)");
  app.add_option("--allow-group", flags.allow_groups,
                 "Group whose members (primary or supplementary) may connect (repeatable)");
  app.add_option("--nvml-library", flags.nvml_library,
                 "NVML library to load (default: $PERSEUS_NVML_LIBRARY, else libnvidia-ml.so.1)");
  app.add_option("--max-clients", flags.max_clients, "Clients served at once (refused ones do not count)")
      ->capture_default_str()
      ->transform(perseus::IntegerIn(1, 65536));
  app.add_option("--max-clients-per-user", flags.max_clients_per_user,
                 "Clients of one user served at once, so one user cannot lock the others out")
      ->capture_default_str()
      ->transform(perseus::IntegerIn(1, 65536));
  if (std::optional<int> exit_status = perseus::ParseCommandLine(app, argc, argv, "perseusd")) return *exit_status;
  perseus::Status status = perseus::runtime::Run(flags);
  if (!status.ok()) {
    std::fprintf(stderr, "perseusd: error: %s\n", status.message().c_str());
    return 1;
  }
  return 0;
}
