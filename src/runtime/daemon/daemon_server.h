// DaemonServer: perseusd's Unix-socket front end.
//
// It listens on a Unix stream socket (mode 0660 by default, optionally owned
// by a group of GPU users), checks each connecting process's uid with
// SO_PEERCRED against a PeerPolicy, and feeds request lines to a GpuBroker in
// one poll() loop; no threads. A client that disconnects, cleanly or by dying,
// is released: the broker resets the clocks it locked. When `stop_fd` becomes
// readable (main passes a signalfd for SIGTERM/SIGINT) Serve resets every GPU
// and returns. The protocol is in runtime/gpu/daemon_protocol.h.
// Thread safety: not thread-safe; Serve runs on one thread, and the broker
// must not be used elsewhere while it runs.
#pragma once

#include <sys/types.h>
#include <unistd.h>

#include <cstdint>
#include <functional>
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
  size_t max_clients = 256;
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

 private:
  struct Connection {
    int fd = -1;
    BrokerClient client;
    std::string in;
    std::string out;
    bool closing = false;  // close once `out` is flushed; read nothing more
    bool dead = false;
  };

  DaemonServer(DaemonServerOptions options, GpuBroker* broker, int listen_fd);
  void Log(const std::string& line) const;
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
};

}  // namespace perseus::runtime
