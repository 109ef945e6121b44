// DaemonServer: socket set-up, the poll loop, framing and clean-up.
#include "runtime/daemon/daemon_server.h"

#include <fcntl.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>

#include "common/file_util.h"

namespace perseus::runtime {
namespace {

// A client whose replies pile up unread beyond this has no more of its
// requests handled, and none read, until it reads them.
constexpr size_t kMaxPendingOutputBytes = 64 * 1024;

std::string Errno(const std::string& what) { return what + ": " + std::strerror(errno); }

double NowS() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

constexpr double kAcceptPauseS = 0.1;

Result<sockaddr_un> SocketAddress(const std::string& path) {
  sockaddr_un addr = {};
  addr.sun_family = AF_UNIX;
  if (path.empty() || path.size() >= sizeof(addr.sun_path)) {
    return Status::InvalidArgument("socket path '" + path + "': must be 1 to " +
                                   std::to_string(sizeof(addr.sun_path) - 1) + " bytes long");
  }
  std::memcpy(addr.sun_path, path.c_str(), path.size() + 1);
  return addr;
}

// Removes a socket file left by a daemon that died; refuses to touch anything
// else, or a socket a live daemon still listens on.
Status RemoveStaleSocket(const std::string& path, const sockaddr_un& addr) {
  struct stat st;
  if (lstat(path.c_str(), &st) != 0) {
    return errno == ENOENT ? Status::Ok() : Status::IoError(Errno(path));
  }
  if (!S_ISSOCK(st.st_mode)) return Status::InvalidArgument(path + ": exists and is not a socket; not replacing it");
  // Non-blocking: a blocking connect to a daemon that is stopped (SIGSTOP)
  // with a full backlog would wait forever, with SIGTERM already blocked.
  int probe = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
  if (probe < 0) return Status::IoError(Errno("socket"));
  const int connected = connect(probe, reinterpret_cast<const sockaddr*>(&addr), sizeof(addr));
  const int connect_errno = errno;
  close(probe);
  if (connected == 0 || connect_errno == EAGAIN || connect_errno == EINPROGRESS) {
    return Status::Unavailable(path + ": another perseusd is already listening there" +
                               (connected == 0 ? "" : " (its queue of new connections is full: is it stopped?)"));
  }
  if (connect_errno != ECONNREFUSED && connect_errno != ENOENT) {
    return Status::IoError("connect(" + path + "), to see whether a daemon listens there: " + std::strerror(connect_errno));
  }
  if (unlink(path.c_str()) != 0) return Status::IoError(Errno("unlink(" + path + ")"));
  return Status::Ok();
}

Result<int> BindSocket(const DaemonServerOptions& options) {
  const std::string& path = options.socket_path;
  Result<sockaddr_un> addr = SocketAddress(path);
  if (!addr.ok()) return addr.status();
  std::string parent = std::filesystem::path(path).parent_path().string();
  if (!parent.empty()) {
    Status made = MakeDirs(parent);
    if (!made.ok()) return made.WithContext("socket " + path + ": cannot create its folder");
  }
  PERSEUS_RETURN_IF_ERROR(RemoveStaleSocket(path, *addr));
  int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
  if (fd < 0) return Status::IoError(Errno("socket"));
  // No window in which the socket is more open than asked: bind under a tight umask.
  mode_t old_umask = umask(0177);
  int bound = bind(fd, reinterpret_cast<const sockaddr*>(&*addr), sizeof(*addr));
  int bind_errno = errno;
  umask(old_umask);
  Status status;
  if (bound != 0) {
    status = Status::IoError("bind(" + path + "): " + std::strerror(bind_errno));
  } else if (options.socket_gid != static_cast<gid_t>(-1) && chown(path.c_str(), static_cast<uid_t>(-1), options.socket_gid) != 0) {
    status = Status::IoError(Errno("chown(" + path + ", group " + std::to_string(options.socket_gid) + ")"));
  } else if (chmod(path.c_str(), options.socket_mode) != 0) {
    status = Status::IoError(Errno("chmod(" + path + ")"));
  } else if (listen(fd, 64) != 0) {
    status = Status::IoError(Errno("listen(" + path + ")"));
  }
  if (!status.ok()) {
    if (bound == 0) unlink(path.c_str());
    close(fd);
    return status;
  }
  return fd;
}

std::string Who(const BrokerClient& c) {
  return "client pid " + std::to_string(c.pid) + " uid " + std::to_string(c.uid);
}

}  // namespace

Result<std::unique_ptr<DaemonServer>> DaemonServer::Listen(DaemonServerOptions options, GpuBroker* broker) {
  Result<int> fd = BindSocket(options);
  if (!fd.ok()) return fd.status();
  return std::unique_ptr<DaemonServer>(new DaemonServer(std::move(options), broker, *fd));
}

DaemonServer::DaemonServer(DaemonServerOptions options, GpuBroker* broker, int listen_fd)
    : options_(std::move(options)), broker_(broker), listen_fd_(listen_fd) {}

DaemonServer::~DaemonServer() {
  for (Connection& c : connections_) close(c.fd);
  close(listen_fd_);
  unlink(options_.socket_path.c_str());
}

void DaemonServer::Log(const std::string& line) const {
  if (options_.log) {
    options_.log(line);
  } else {
    std::fprintf(stderr, "perseusd: %s\n", line.c_str());
  }
}

void DaemonServer::LogLimited(const std::string& key, const std::string& line) {
  Limited& l = limited_logs_[key];
  const double now = NowS();
  if (now - l.last_s < 1) {
    ++l.held_back;
    return;
  }
  Log(l.held_back > 0 ? line + " (and " + std::to_string(l.held_back) + " more like it since the last one logged)" : line);
  l.last_s = now;
  l.held_back = 0;
}

bool DaemonServer::HasWaitingLine(const Connection& c) const {
  return !c.closing && c.out.size() < kMaxPendingOutputBytes && c.in.find('\n') != std::string::npos;
}

bool DaemonServer::WantsInput(const Connection& c) const {
  return !c.closing && !c.peer_done_sending && c.out.size() < kMaxPendingOutputBytes && c.in.size() <= kMaxDaemonLineBytes &&
         c.in.find('\n') == std::string::npos;
}

Status DaemonServer::Serve(int stop_fd) {
  std::vector<pollfd> fds;
  for (;;) {
    const double now = NowS();
    fds.clear();
    fds.push_back(pollfd{stop_fd, POLLIN, 0});
    const bool accepting = now >= accept_paused_until_s_;
    fds.push_back(pollfd{accepting ? listen_fd_ : -1, POLLIN, 0});
    bool work_waiting = false;
    double next_deadline_s = accepting ? 1e300 : accept_paused_until_s_;
    size_t buffered_bytes = 0;
    for (const Connection& c : connections_) {
      short events = 0;
      buffered_bytes += c.in.size() + c.out.size();
      // A client with requests still waiting their turn, or replies it has
      // not read, is not read from.
      work_waiting = work_waiting || HasWaitingLine(c);
      if (c.closing ? c.out.empty() : WantsInput(c)) events |= POLLIN;
      if (!c.out.empty()) events |= POLLOUT;
      if (c.closing) next_deadline_s = std::min(next_deadline_s, c.closing_since_s + options_.refused_linger_s);
      fds.push_back(pollfd{c.fd, events, 0});
    }
    if (buffered_bytes > peak_buffered_bytes_.load(std::memory_order_relaxed)) {
      peak_buffered_bytes_.store(buffered_bytes, std::memory_order_relaxed);
    }
    const int timeout_ms = work_waiting ? 0
                           : next_deadline_s > 1e299
                               ? -1
                               : std::max(0, static_cast<int>((next_deadline_s - now) * 1000) + 1);
    if (poll(fds.data(), fds.size(), timeout_ms) < 0) {
      if (errno == EINTR) continue;
      Status failed = Status::IoError(Errno("poll"));
      Shutdown();
      return failed;
    }
    if (fds[0].revents != 0) break;
    for (size_t i = 0; i < connections_.size(); ++i) Service(connections_[i], fds[i + 2].revents);
    if (fds[1].revents & POLLIN) AcceptAll();
    const double after = NowS();
    for (Connection& c : connections_) {
      if (c.closing && after - c.closing_since_s > options_.refused_linger_s) c.dead = true;
      if (c.dead) Drop(c);
    }
    std::erase_if(connections_, [](const Connection& c) { return c.dead; });
  }
  Shutdown();
  return Status::Ok();
}

void DaemonServer::AcceptAll() {
  for (;;) {
    int fd = accept4(listen_fd_, nullptr, nullptr, SOCK_CLOEXEC | SOCK_NONBLOCK);
    if (fd >= 0) {
      Admit(fd);
      continue;
    }
    if (errno == EINTR || errno == ECONNABORTED) continue;
    if (errno == EMFILE || errno == ENFILE || errno == ENOBUFS || errno == ENOMEM) {
      // The pending connection stays in the backlog; try again shortly
      // instead of spinning on a listening socket that stays readable.
      LogLimited("accept", Errno("accept") + "; not accepting for 100 ms");
      accept_paused_until_s_ = NowS() + kAcceptPauseS;
      return;
    }
    if (errno != EAGAIN && errno != EWOULDBLOCK) LogLimited("accept", Errno("accept"));
    return;
  }
}

void DaemonServer::Admit(int fd) {
  Result<PeerCredentials> peer = options_.read_peer(fd);
  if (!peer.ok()) {
    LogLimited("peer", "rejected a connection: " + peer.status().message());
    close(fd);
    return;
  }
  Connection c;
  c.fd = fd;
  c.client = BrokerClient{next_client_id_++, peer->pid, peer->uid};
  size_t admitted = 0, of_user = 0, refused = 0;
  for (const Connection& other : connections_) {
    admitted += other.admitted;
    of_user += other.admitted && other.client.uid == peer->uid;
    refused += !other.admitted;
  }
  Status allowed = options_.policy.Check(*peer);
  if (allowed.ok() && admitted >= options_.max_clients) {
    allowed = Status::Unavailable("perseusd serves at most " + std::to_string(options_.max_clients) + " clients");
  } else if (allowed.ok() && of_user >= options_.max_clients_per_uid) {
    allowed = Status::Unavailable("perseusd serves at most " + std::to_string(options_.max_clients_per_uid) +
                                  " clients of one user (uid " + std::to_string(peer->uid) + ")");
  }
  if (!allowed.ok() && refused >= options_.max_clients) {
    // A flood of refused connections: no reply, so none of them holds a descriptor.
    LogLimited("refused", "refused " + Who(c.client) + ": " + allowed.message() + " (closed without a reply)");
    close(fd);
    return;
  }
  if (!allowed.ok()) {
    LogLimited("refused", "refused " + Who(c.client) + ": " + allowed.message());
    c.out = ErrorReply(allowed) + "\n";
    c.closing = true;
    c.closing_since_s = NowS();
  } else {
    c.admitted = true;
    Log(Who(c.client) + " connected");
  }
  connections_.push_back(std::move(c));
  Flush(connections_.back());
}

void DaemonServer::Service(Connection& c, short revents) {
  if (revents & POLLNVAL) {
    c.dead = true;
    return;
  }
  if (WantsInput(c) && (revents & (POLLIN | POLLHUP | POLLERR))) {
    ReadRequests(c);
  } else if (HasWaitingLine(c)) {
    HandleLines(c);  // its next turn
  }
  if (!c.dead) Flush(c);
  // A closing connection's reply is out and its write side shut; once the
  // client reads it and hangs up (or sends more), close.
  if (c.closing && c.out.empty() && (revents & (POLLIN | POLLHUP | POLLERR))) c.dead = true;
  // A client that said it sends nothing more (shutdown(SHUT_WR), the end of
  // a pipe into socat) has every request answered before it is released.
  if (c.peer_done_sending && !c.closing && c.out.empty() && c.in.find('\n') == std::string::npos) c.dead = true;
}

void DaemonServer::ReadRequests(Connection& c) {
  char buffer[16384];
  // At most one line's worth past the longest line: the buffered input of a
  // client stays under kMaxDaemonLineBytes + sizeof(buffer).
  while (c.in.size() <= kMaxDaemonLineBytes) {
    ssize_t n = recv(c.fd, buffer, sizeof(buffer), 0);
    if (n > 0) {
      c.in.append(buffer, static_cast<size_t>(n));
      continue;
    }
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) break;
    if (n < 0) {
      c.dead = true;  // a reset connection: the client is gone
      return;
    }
    // End of stream: the client may still read. Its last line may lack the newline.
    c.peer_done_sending = true;
    if (!c.in.empty() && c.in.back() != '\n') c.in += '\n';
    break;
  }
  HandleLines(c);
}

void DaemonServer::HandleLines(Connection& c) {
  size_t start = 0, handled = 0;
  bool too_long = false;
  for (size_t newline; handled < options_.max_requests_per_turn && c.out.size() < kMaxPendingOutputBytes &&
                       (newline = c.in.find('\n', start)) != std::string::npos;
       start = newline + 1) {
    std::string_view line(c.in.data() + start, newline - start);
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    if (line.empty()) continue;
    if (line.size() > kMaxDaemonLineBytes) {
      too_long = true;
      break;
    }
    c.out += broker_->Handle(c.client, line);
    c.out += '\n';
    ++handled;
  }
  c.in.erase(0, start);
  if (too_long || (c.in.size() > kMaxDaemonLineBytes && c.in.find('\n') == std::string::npos)) {
    c.out += ErrorReply(Status::InvalidArgument("request line longer than " + std::to_string(kMaxDaemonLineBytes) +
                                                " bytes; closing the connection")) +
             "\n";
    c.in.clear();
    c.closing = true;
    c.closing_since_s = NowS();
  }
}

void DaemonServer::Flush(Connection& c) {
  while (!c.out.empty()) {
    ssize_t n = send(c.fd, c.out.data(), c.out.size(), MSG_NOSIGNAL);
    if (n > 0) {
      c.out.erase(0, static_cast<size_t>(n));
      continue;
    }
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) return;
    c.dead = true;  // EPIPE, ECONNRESET: the client is gone
    return;
  }
  // Closing right away could discard the reply: the client's own request may
  // still be unread, and closing a Unix socket with unread data resets it.
  if (c.closing) shutdown(c.fd, SHUT_WR);
}

void DaemonServer::Drop(Connection& c) {
  for (const GpuReset& r : broker_->Release(c.client)) {
    if (r.status.ok()) {
      Log(Who(c.client) + " gone: GPU " + std::to_string(r.gpu) + " clock reset");
    } else {
      Log(Who(c.client) + " gone: GPU " + std::to_string(r.gpu) + " clock NOT reset: " + r.status.message());
    }
  }
  // A refused connection was logged (rate-limited) when it was refused.
  if (c.admitted) Log(Who(c.client) + " disconnected");
  // Read what the client sent before closing: closing a Unix socket with
  // unread data makes the peer's recv fail with ECONNRESET, and a refused
  // client would then see that instead of the refusal it was sent.
  char discard[4096];
  while (recv(c.fd, discard, sizeof discard, MSG_DONTWAIT) > 0) {
  }
  close(c.fd);
  c.fd = -1;
}

void DaemonServer::Shutdown() {
  for (Connection& c : connections_) {
    close(c.fd);
  }
  connections_.clear();
  for (const GpuReset& r : broker_->ResetAll()) {
    if (!r.status.ok()) Log("shutdown: GPU " + std::to_string(r.gpu) + " clock NOT reset: " + r.status.message());
  }
  Log("stopped");
}

}  // namespace perseus::runtime
