// HttpServer: the perseus server's HTTP front end (cpp-httplib).
//
// Binds to 127.0.0.1 by default, admits requests as admission.h says before
// reading their bodies (Host, bearer token, JSON content type, Origin, body
// size), closes connections idle or stalled for `idle_timeout_s`, and logs
// mutating requests and errors as JSON lines. Routes live in routes_*.cc, one file per resource.
// Thread safety: Stop() may be called from any thread; the rest from one.
#pragma once

#include <atomic>
#include <memory>
#include <string>
#include <vector>

#include "perseus/status.h"
#include "runtime/server/job_service.h"
#include "runtime/server/json_log.h"

namespace httplib {
class Server;
}

namespace perseus::server {

class ConnectionTracker;  // http_server.cc

struct ServerOptions {
  std::string host = "127.0.0.1";
  int port = 7787;  // 0: any free port
  std::string token;
  bool reads_need_token = false;  // with a token: reads (but the dashboard's files and /healthz) need it too
  size_t max_body_bytes = 1 << 20;
  // Connections served at once. A keep-alive connection holds a worker
  // between its requests; while connections wait for one, every reply says
  // "Connection: close", so workers pass from connection to connection and
  // any number of ranks is served (docs/http_api.md, --threads).
  int threads = 256;
  int idle_timeout_s = 5;  // keep-alive idle time, and the longest wait for one read or write
  // A connection must deliver each request in full and get its reply within
  // this long of connecting or of its previous reply, or it is closed: a
  // client that trickles its headers or body a byte at a time cannot keep a
  // worker (docs/http_api.md, --request-deadline-s).
  double request_deadline_s = 30;
  std::vector<std::string> allowed_hosts;  // Host names accepted besides the loopback ones
  bool log_all_requests = false;
  // HTTPS when both are set: PEM certificate (chain) and private key files.
  std::string tls_cert_path;
  std::string tls_key_path;
};

class HttpServer {
 public:
  HttpServer(JobService* service, JsonLog* log, ServerOptions options);
  ~HttpServer();
  // Binds and listens; returns the bound port.
  Result<int> Bind();
  // Serves requests until Stop(). REQUIRES: Bind() succeeded.
  void Serve();
  void Stop();

 private:
  JobService* service_;
  JsonLog* log_;
  ServerOptions options_;
  std::string tls_error_;  // why the TLS setup failed, reported by Bind(); set while server_ is made
  // Shared with the task queue, which httplib owns and may outlive a Stop().
  std::shared_ptr<ConnectionTracker> connections_;
  std::unique_ptr<httplib::Server> server_;
  int listen_fd_ = -1;
};

}  // namespace perseus::server
