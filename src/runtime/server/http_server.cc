#include "runtime/server/http_server.h"

#include <httplib.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <openssl/err.h>
#include <sys/socket.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <thread>
#include <unordered_map>

#include "runtime/server/admission.h"
#include "runtime/server/http_util.h"

namespace perseus::server {

namespace {

constexpr int kListenBacklog = 4096;

bool IsMutating(const std::string& method) { return method != "GET" && method != "HEAD"; }

// The ranks' routine traffic (reports, plan polls) at debug, so the log is
// about events; other changes at info; refusals at warn; successful reads
// at debug, or at info with --log-requests.
LogLevel RequestLogLevel(const std::string& method, const std::string& path, int status, bool log_reads) {
  if (status >= 400) return LogLevel::kWarn;
  if (!IsMutating(method)) return log_reads ? LogLevel::kInfo : LogLevel::kDebug;
  const bool report = path.find("/ranks/") != std::string::npos &&
                      (path.ends_with("/iterations") || path.ends_with("/windows"));
  return report ? LogLevel::kDebug : LogLevel::kInfo;
}

// The OpenSSL errors queued on this thread, oldest first ("" if none).
std::string TakeOpenSslErrors() {
  std::string out;
  for (unsigned long e = ERR_get_error(); e != 0; e = ERR_get_error()) {
    char text[256];
    ERR_error_string_n(e, text, sizeof(text));
    out += (out.empty() ? "" : "; ") + std::string(text);
  }
  return out;
}

// Plain HTTP, or HTTPS with the certificate and key (checked by Bind()).
std::unique_ptr<httplib::Server> MakeServer(const ServerOptions& o, std::string* tls_error) {
  if (o.tls_cert_path.empty() && o.tls_key_path.empty()) return std::make_unique<httplib::Server>();
  if (o.tls_cert_path.empty() || o.tls_key_path.empty()) {
    *tls_error = "TLS needs both a certificate (--tls-cert) and its private key (--tls-key)";
    return std::make_unique<httplib::Server>();
  }
  ERR_clear_error();
  auto server = std::make_unique<httplib::SSLServer>(o.tls_cert_path.c_str(), o.tls_key_path.c_str());
  if (!server->is_valid()) {
    const std::string why = TakeOpenSslErrors();
    *tls_error = "TLS: cannot use certificate " + o.tls_cert_path + " with key " + o.tls_key_path + ": " +
                 (why.empty() ? "unreadable, not PEM, or the key does not match the certificate" : why);
  }
  return server;
}

// The socket the calling thread accepted last (accept() below), and the
// connection the calling worker serves.
thread_local int t_accepted_fd = -1;
thread_local uint64_t t_connection = 0;

void NoteAccepted(int fd) { t_accepted_fd = fd; }

}  // namespace

// The server's connections: how many wait for a worker, and since when each
// worker's connection has waited for its current request to arrive in full
// and be answered. One past the request deadline is shut down, which ends
// the worker's blocked read: a client trickling its headers or body a byte at
// a time cannot keep a worker (cpp-httplib's timeouts restart at every byte).
class ConnectionTracker {
 public:
  using Clock = std::chrono::steady_clock;
  explicit ConnectionTracker(double deadline_s) : deadline_(std::chrono::duration<double>(deadline_s)) {}
  std::atomic<int> waiting{0};  // accepted connections no worker has taken yet

  uint64_t Begin(int fd) {
    std::lock_guard<std::mutex> lock(mu_);
    const uint64_t id = next_id_++;
    open_[id] = {fd, Clock::now(), false};
    return id;
  }
  void Answered(uint64_t id) {  // a reply went out: the next request's clock starts
    std::lock_guard<std::mutex> lock(mu_);
    auto it = open_.find(id);
    if (it != open_.end()) it->second.since = Clock::now();
  }
  void End(uint64_t id) {
    std::lock_guard<std::mutex> lock(mu_);
    open_.erase(id);
  }
  // Shuts down the connections past the deadline, each once. (A worker ends
  // its entry just after closing the socket, so in that instant a reused
  // descriptor could be hit: its client sees a reset and retries, as after
  // any dropped connection.)
  void CloseOverdue() {
    std::lock_guard<std::mutex> lock(mu_);
    const Clock::time_point now = Clock::now();
    for (auto& [id, c] : open_) {
      if (c.closed || now - c.since < deadline_) continue;
      ::shutdown(c.fd, SHUT_RDWR);
      c.closed = true;
    }
  }
  Clock::duration check_interval() const {
    return std::min<Clock::duration>(std::chrono::milliseconds(250),
                                      std::chrono::duration_cast<Clock::duration>(deadline_ / 4));
  }

 private:
  struct Connection {
    int fd;
    Clock::time_point since;
    bool closed;
  };
  const std::chrono::duration<double> deadline_;
  std::mutex mu_;
  uint64_t next_id_ = 1;
  std::unordered_map<uint64_t, Connection> open_;
};

namespace {

// httplib's thread pool, with the connection tracker: it counts the accepted
// connections (one task each) waiting for a worker, registers each one a
// worker takes, and runs the thread that closes overdue ones.
class TrackingPool : public httplib::TaskQueue {
 public:
  TrackingPool(int threads, std::shared_ptr<ConnectionTracker> tracker)
      : pool_(static_cast<size_t>(threads)), tracker_(std::move(tracker)), watchdog_([this] { Watch(); }) {}
  ~TrackingPool() override { StopWatching(); }

  void enqueue(std::function<void()> fn) override {
    // Called on the accepting thread right after accept(): its socket.
    const int fd = t_accepted_fd;
    t_accepted_fd = -1;
    tracker_->waiting.fetch_add(1);
    pool_.enqueue([fn = std::move(fn), fd, tracker = tracker_] {
      tracker->waiting.fetch_sub(1);
      const uint64_t id = fd >= 0 ? tracker->Begin(fd) : 0;
      t_connection = id;
      fn();
      if (id != 0) tracker->End(id);
      t_connection = 0;
    });
  }
  void shutdown() override {
    StopWatching();
    pool_.shutdown();
  }

 private:
  void Watch() {
    std::unique_lock<std::mutex> lock(mu_);
    while (!stop_) {
      cv_.wait_for(lock, tracker_->check_interval());
      if (!stop_) tracker_->CloseOverdue();
    }
  }
  void StopWatching() {
    {
      std::lock_guard<std::mutex> lock(mu_);
      stop_ = true;
    }
    cv_.notify_all();
    if (watchdog_.joinable()) watchdog_.join();
  }

  httplib::ThreadPool pool_;
  std::shared_ptr<ConnectionTracker> tracker_;
  std::mutex mu_;
  std::condition_variable cv_;
  bool stop_ = false;
  std::thread watchdog_;  // last: started once the rest exists
};

}  // namespace

HttpServer::HttpServer(JobService* service, JsonLog* log, ServerOptions options)
    : service_(service), log_(log), options_(std::move(options)), server_(MakeServer(options_, &tls_error_)) {
  httplib::Server& s = *server_;
  const int threads = options_.threads;
  connections_ = std::make_shared<ConnectionTracker>(options_.request_deadline_s);
  s.new_task_queue = [threads, tracker = connections_] { return new TrackingPool(threads, tracker); };
  s.set_payload_max_length(options_.max_body_bytes);
  s.set_keep_alive_max_count(1000000);
  // A connection holds a worker while open: idle or slow clients let go soon.
  s.set_keep_alive_timeout(options_.idle_timeout_s);
  s.set_read_timeout(options_.idle_timeout_s);
  s.set_write_timeout(options_.idle_timeout_s);
  AdmissionPolicy policy;
  policy.token = options_.token;
  policy.max_body_bytes = options_.max_body_bytes;
  policy.loopback_only = IsLoopbackAddress(options_.host);
  policy.allowed_hosts = options_.allowed_hosts;
  policy.reads_need_token = options_.reads_need_token;
  // Before the body is read: a refused request costs no memory.
  s.set_pre_routing_handler([policy](const httplib::Request& req, httplib::Response& res) {
    AdmissionRequest r{req.method,
                       req.get_header_value("Host"),
                       req.get_header_value("Authorization"),
                       req.get_header_value("Content-Type"),
                       req.get_header_value("Origin"),
                       req.get_header_value("Transfer-Encoding"),
                       std::nullopt,
                       req.path};
    if (req.has_header("Content-Length")) {
      const std::string length = req.get_header_value("Content-Length");
      const bool digits = !length.empty() && length.size() < 19 && length.find_first_not_of("0123456789") == std::string::npos;
      r.content_length = digits ? std::stoull(length) : ~0ULL;  // unreadable: refused as too large
    }
    std::optional<Refusal> refused = Admit(r, policy);
    if (!refused) return httplib::Server::HandlerResponse::Unhandled;
    SendJson(res, refused->http_status, ErrorBody(refused->code, refused->message));
    if (refused->http_status == 401) res.set_header("WWW-Authenticate", "Bearer");
    return httplib::Server::HandlerResponse::Handled;
  });
  // libcpp-httplib listens with a backlog of 5; remember the socket to raise it.
  s.set_socket_options([this](int fd) {
    int yes = 1;
    setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &yes, sizeof(yes));
    // Replies go out in several writes; without this, Nagle's algorithm and
    // delayed ACKs add ~40 ms to each keep-alive request. Accepted sockets inherit it.
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &yes, sizeof(yes));
    listen_fd_ = fd;
  });
  // A connection that waits for a worker gets one as soon as any reply goes
  // out: that reply closes its connection (the client reconnects for its next
  // request, joining the queue behind the ones that waited).
  s.set_post_routing_handler([tracker = connections_](const httplib::Request&, httplib::Response& res) {
    if (tracker->waiting.load() > 0) res.set_header("Connection", "close");
  });
  s.set_error_handler([max = options_.max_body_bytes](const httplib::Request& req, httplib::Response& res) {
    if (!res.body.empty()) return;
    if (res.status == 413) {
      SendJson(res, 413, ErrorBody("payload_too_large", "body: larger than " + std::to_string(max) + " bytes"));
    } else if (res.status == 404) {
      SendJson(res, 404, ErrorBody("not_found", "no endpoint " + req.method + " " + req.path));
    } else {
      SendJson(res, res.status, ErrorBody("http_error", "HTTP " + std::to_string(res.status)));
    }
  });
  s.set_exception_handler([](const httplib::Request&, httplib::Response& res, std::exception_ptr ep) {
    std::string what = "unknown exception";
    try {
      std::rethrow_exception(ep);
    } catch (const std::exception& e) {
      what = e.what();
    } catch (...) {
    }
    SendJson(res, 500, ErrorBody("internal", what));
  });
  s.set_logger([this](const httplib::Request& req, const httplib::Response& res) {
    connections_->Answered(t_connection);  // called once the reply is written
    if (log_ == nullptr) return;
    const LogLevel level = RequestLogLevel(req.method, req.path, res.status, options_.log_all_requests);
    if (!log_->Enabled(level)) return;
    Json fields = {{"method", req.method}, {"path", req.path}, {"status", res.status},
                   {"remote", req.remote_addr}};
    if (res.status >= 400) {
      Json body = Json::parse(res.body, nullptr, false);
      if (body.is_object() && body.contains("error")) fields["error"] = body["error"]["message"];
    }
    log_->Write(level, "http_request", std::move(fields));
  });
  RouteContext ctx{service_, log_};
  AddRankRoutes(s, ctx);  // first: httplib tries routes in order, and plan polls are most requests
  AddJobRoutes(s, ctx);
  AddProfilingRoutes(s, ctx);
  AddIterationRoutes(s, ctx);
  AddStragglerRoutes(s, ctx);
  AddCarbonRoutes(s, ctx);
  AddPowerCapRoutes(s, ctx);
  AddMetricsRoutes(s, ctx);
  AddHistoryRoutes(s, ctx);
  AddDashboardRoutes(s);
}

HttpServer::~HttpServer() { Stop(); }

Result<int> HttpServer::Bind() {
  if (!tls_error_.empty()) return Status::InvalidArgument(tls_error_);
  int port = options_.port;
  if (port == 0) {
    port = server_->bind_to_any_port(options_.host);
  } else if (!server_->bind_to_port(options_.host, port)) {
    port = -1;
  }
  if (port < 0) {
    return Status::Unavailable("cannot listen on " + options_.host + ":" + std::to_string(options_.port) +
                               " (address in use or not local)");
  }
  if (listen_fd_ >= 0) ::listen(listen_fd_, kListenBacklog);  // re-listen raises the backlog
  if (log_) log_->Info("server_listening", {{"host", options_.host},
                                           {"port", port},
                                           {"auth", !options_.token.empty()},
                                           {"tls", !options_.tls_cert_path.empty()}});
  return port;
}

void HttpServer::Serve() { server_->listen_after_bind(); }

void HttpServer::Stop() {
  if (server_) server_->stop();
}

}  // namespace perseus::server

// Interposes libc's accept(): cpp-httplib, a shared library, accepts every
// connection through it on its listening thread and hands the socket to the
// task queue without showing it; this lets TrackingPool::enqueue see it.
// Everything else calling accept() gets exactly libc's behaviour.
extern "C" int accept(int fd, sockaddr* __restrict addr, socklen_t* __restrict len) {
  const int s = ::accept4(fd, addr, len, 0);
  perseus::server::NoteAccepted(s);
  return s;
}
