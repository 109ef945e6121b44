// DaemonServer: perseusd's Unix-socket front end.
//
// It listens on a Unix stream socket (mode 0660 by default, optionally owned
// by a group of GPU users), checks each connecting process's uid with
// SO_PEERCRED against a PeerPolicy, and feeds request lines to a GpuBroker in
// one poll() loop; no threads. A client that disconnects, cleanly or by dying,
// is released: the broker resets the clocks it locked. When `stop_fd` becomes
// readable (main passes a signalfd for SIGTERM/SIGINT) Serve resets every GPU
// and returns. The protocol is in runtime/gpu/daemon_protocol.h.
//
// Nothing one client does can lock the others out: refused connections do
// not count against the limits and are closed after `refused_linger_s`; one
// user holds at most `max_clients_per_uid` of the `max_clients` slots; each
// client gets `max_requests_per_turn` requests handled per turn of the loop;
// out of descriptors, the loop stops accepting for 100 ms instead of
// spinning, and repeated events are logged at most once a second.
// Thread safety: not thread-safe; Serve runs on one thread, and the broker
// must not be used elsewhere while it runs.
#pragma once

#include <sys/types.h>
#include <unistd.h>

#include <atomic>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "runtime/daemon/gpu_broker.h"
#include "runtime/daemon/peer_policy.h"
#include "runtime/gpu/daemon_protocol.h"

namespace perseus::runtime {

struct DaemonServerOptions {
  std::string socket_path = kDefaultDaemonSocketPath;
  mode_t socket_mode = 0660;
  gid_t socket_gid = static_cast<gid_t>(-1);  // -1: leave the group alone
  PeerPolicy policy{{}, geteuid()};
  // Identifies the process behind an accepted connection; tests inject uids.
  std::function<Result<PeerCredentials>(int fd)> read_peer = ReadPeerCredentials;
  // Receives one line per event (connects, refusals, resets); default: stderr.
  std::function<void(const std::string&)> log;
  size_t max_clients = 256;         // admitted clients at once
  size_t max_clients_per_uid = 64;  // admitted clients of one user at once (fairness between users)
  size_t max_requests_per_turn = 8; // requests of one client handled before the others get a turn
  double refused_linger_s = 1;      // a refused or closing connection is closed this long after its last reply at most
};

class DaemonServer {
 public:
  // Binds the socket, creating its parent directory and replacing a stale
  // socket file; fails if another daemon is listening there.
  // REQUIRES: `broker` outlives the server.
  static Result<std::unique_ptr<DaemonServer>> Listen(DaemonServerOptions options, GpuBroker* broker);
  // Closes all connections and removes the socket file.
  ~DaemonServer();
  DaemonServer(const DaemonServer&) = delete;
  DaemonServer& operator=(const DaemonServer&) = delete;

  // Serves until `stop_fd` is readable, then resets every GPU and closes all
  // connections. Returns an error only if poll() itself fails.
  Status Serve(int stop_fd);

  // The most bytes of requests and unread replies held for all clients at
  // once so far. Each client's share is bounded (kMaxBufferedBytesPerClient),
  // so this stays under max_clients times that. Safe to call from any thread.
  size_t peak_buffered_bytes() const { return peak_buffered_bytes_.load(std::memory_order_relaxed); }
  // Unread requests (one line past the longest allowed) plus unread replies
  // (64 KiB, plus the replies of one turn).
  static constexpr size_t kMaxBufferedBytesPerClient = 64 * 1024 + 16384 + 64 * 1024 + 16384;

 private:
  struct Connection {
    int fd = -1;
    BrokerClient client;
    std::string in;
    std::string out;
    bool closing = false;  // close once `out` is flushed; read nothing more
    bool admitted = false; // counts against the client limits
    double closing_since_s = 0;
    bool dead = false;
    bool peer_done_sending = false;  // end of stream read: answer what is buffered, then close
  };

  DaemonServer(DaemonServerOptions options, GpuBroker* broker, int listen_fd);
  void Log(const std::string& line) const;
  // Logs `line` at most once a second per `key`, saying how many were held back.
  void LogLimited(const std::string& key, const std::string& line);
  // Handles complete request lines of `c`, at most max_requests_per_turn.
  void HandleLines(Connection& c);
  // A complete request waits and the client's unread replies leave room.
  bool HasWaitingLine(const Connection& c) const;
  // Reading more from `c` now keeps its buffers within their bounds.
  bool WantsInput(const Connection& c) const;
  void AcceptAll();
  void Admit(int fd);
  void Service(Connection& c, short revents);
  void ReadRequests(Connection& c);
  void Flush(Connection& c);
  void Drop(Connection& c);
  void Shutdown();

  DaemonServerOptions options_;
  GpuBroker* broker_;
  int listen_fd_;
  uint64_t next_client_id_ = 1;
  std::vector<Connection> connections_;
  double accept_paused_until_s_ = 0;  // out of descriptors: accept again after this
  struct Limited {
    double last_s = -1e9;
    int64_t held_back = 0;
  };
  std::map<std::string, Limited> limited_logs_;
  std::atomic<size_t> peak_buffered_bytes_{0};
};

}  // namespace perseus::runtime
