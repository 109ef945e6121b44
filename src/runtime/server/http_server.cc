#include "runtime/server/http_server.h"

#include <fcntl.h>
#include <httplib.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <openssl/err.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <thread>
#include <unordered_map>
#include <vector>

#include "runtime/server/admission.h"
#include "runtime/server/http_util.h"

namespace perseus::server {

namespace {

// What cpp-httplib refused before any handler ran, from what it had parsed:
// its replies carry the status alone.
std::string ProtocolErrorMessage(const httplib::Request& req, int status) {
  constexpr const char* kLimit = "8192 bytes";  // cpp-httplib's URI and header line limits
  if (status == 414) return "request target longer than " + std::string(kLimit);
  if (status != 400) return "HTTP " + std::to_string(status);
  if (req.method.empty()) return "malformed request line (expected METHOD TARGET HTTP/1.1)";
  static const char* const kMethods[] = {"GET", "HEAD", "POST", "PUT", "DELETE", "CONNECT", "OPTIONS", "TRACE", "PATCH", "PRI"};
  if (std::find(std::begin(kMethods), std::end(kMethods), req.method) == std::end(kMethods)) {
    return "unknown method '" + req.method.substr(0, 40) + "'";
  }
  if (req.version != "HTTP/1.1" && req.version != "HTTP/1.0") {
    return "unsupported protocol version '" + req.version.substr(0, 40) + "' (HTTP/1.1 or HTTP/1.0)";
  }
  return "the request's headers could not be read: a header line longer than " + std::string(kLimit) +
         ", a malformed header, or headers that stopped arriving (--idle-timeout-s)";
}

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
// Set when the request was refused unread (admission): once its reply is
// written, the connection reads no more (ConnectionTracker::StopReading).
thread_local bool t_stop_reading_after_reply = false;

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
  // Reads on the connection end (its reply still goes out), so the worker
  // closes it after this reply: a refused request's unread body is never
  // read as the next request.
  void StopReading(uint64_t id) {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = open_.find(id);
    if (it != open_.end() && !it->second.closed) ::shutdown(it->second.fd, SHUT_RD);
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
//
// A worker reading a connection blocks until its request comes (up to the
// idle timeout), so connections that send nothing, queued first in first
// out, once held every worker in turn: 1,000 of them made each request wait
// 14 s (a review, 2026-11-28). An accepted connection therefore waits here,
// in poll(), until it has bytes to read (or hangs up), and only then joins
// the workers' queue; one that sends nothing within the idle timeout is shut
// down, and its task then ends at once.
class TrackingPool : public httplib::TaskQueue {
 public:
  TrackingPool(int threads, int idle_timeout_s, std::shared_ptr<ConnectionTracker> tracker)
      : pool_(static_cast<size_t>(threads)),
        idle_timeout_(std::chrono::seconds(idle_timeout_s)),
        tracker_(std::move(tracker)),
        watchdog_([this] { Watch(); }),
        gate_([this] { Gate(); }) {}
  ~TrackingPool() override {
    StopThreads();
    for (int fd : wake_) {
      if (fd >= 0) ::close(fd);
    }
  }

  void enqueue(std::function<void()> fn) override {
    // Called on the accepting thread right after accept(): its socket.
    const int fd = t_accepted_fd;
    t_accepted_fd = -1;
    if (fd < 0 || wake_[0] < 0) return Run(std::move(fn), fd);
    {
      std::lock_guard<std::mutex> lock(gate_mu_);
      if (!gate_stopped_) {
        pending_.push_back({fd, std::move(fn), std::chrono::steady_clock::now() + idle_timeout_});
        Wake();
        return;
      }
    }
    Run(std::move(fn), fd);
  }
  void shutdown() override {
    StopThreads();
    pool_.shutdown();
  }

 private:
  struct Pending {
    int fd;
    std::function<void()> fn;
    std::chrono::steady_clock::time_point give_up;
  };
  // Into the workers' queue.
  void Run(std::function<void()> fn, int fd) {
    tracker_->waiting.fetch_add(1);
    pool_.enqueue([fn = std::move(fn), fd, tracker = tracker_] {
      tracker->waiting.fetch_sub(1);
      const uint64_t id = fd >= 0 ? tracker->Begin(fd) : 0;
      t_connection = id;
      t_stop_reading_after_reply = false;
      fn();
      if (id != 0) tracker->End(id);
      t_connection = 0;
    });
  }
  void Wake() {
    const char byte = 0;
    (void)!::write(wake_[1], &byte, 1);
  }
  void Gate() {
    std::vector<pollfd> fds;
    std::vector<Pending> ready;
    for (;;) {
      std::chrono::steady_clock::time_point next_give_up = std::chrono::steady_clock::now() + idle_timeout_;
      {
        std::lock_guard<std::mutex> lock(gate_mu_);
        if (gate_stopped_) break;
        fds.assign(1, pollfd{wake_[0], POLLIN, 0});
        for (const Pending& p : pending_) {
          fds.push_back(pollfd{p.fd, POLLIN, 0});
          next_give_up = std::min(next_give_up, p.give_up);
        }
      }
      const auto wait = std::chrono::duration_cast<std::chrono::milliseconds>(next_give_up - std::chrono::steady_clock::now());
      ::poll(fds.data(), fds.size(), static_cast<int>(std::clamp<int64_t>(wait.count() + 1, 0, 1000)));
      if (fds[0].revents != 0) {
        char buf[256];
        while (::read(wake_[0], buf, sizeof buf) > 0) {
        }
      }
      const auto now = std::chrono::steady_clock::now();
      {
        std::lock_guard<std::mutex> lock(gate_mu_);
        // pending_ only grew since fds was built (new entries at its end).
        for (size_t i = pending_.size(); i-- > 0;) {
          const bool polled = i + 1 < fds.size();
          const bool readable = polled && fds[i + 1].revents != 0;
          if (!readable && pending_[i].give_up > now) continue;
          if (!readable) ::shutdown(pending_[i].fd, SHUT_RDWR);  // idle too long: its task ends at once
          ready.push_back(std::move(pending_[i]));
          pending_.erase(pending_.begin() + static_cast<std::ptrdiff_t>(i));
        }
      }
      for (auto it = ready.rbegin(); it != ready.rend(); ++it) Run(std::move(it->fn), it->fd);  // in arrival order
      ready.clear();
    }
    // Stopping: every connection still waiting is closed through its task.
    std::lock_guard<std::mutex> lock(gate_mu_);
    for (Pending& p : pending_) {
      ::shutdown(p.fd, SHUT_RDWR);
      Run(std::move(p.fn), p.fd);
    }
    pending_.clear();
  }
  void Watch() {
    std::unique_lock<std::mutex> lock(mu_);
    while (!stop_) {
      cv_.wait_for(lock, tracker_->check_interval());
      if (!stop_) tracker_->CloseOverdue();
    }
  }
  // Joins the watchdog and the gate (which first hands every connection
  // still waiting, shut down, to the workers). Idempotent.
  void StopThreads() {
    {
      std::lock_guard<std::mutex> lock(mu_);
      stop_ = true;
    }
    cv_.notify_all();
    if (watchdog_.joinable()) watchdog_.join();
    {
      std::lock_guard<std::mutex> lock(gate_mu_);
      gate_stopped_ = true;
    }
    Wake();
    if (gate_.joinable()) gate_.join();
  }
  static std::array<int, 2> MakePipe() {
    std::array<int, 2> fds{-1, -1};
    if (::pipe2(fds.data(), O_NONBLOCK | O_CLOEXEC) != 0) fds = {-1, -1};
    return fds;
  }

  httplib::ThreadPool pool_;
  const std::chrono::steady_clock::duration idle_timeout_;
  std::shared_ptr<ConnectionTracker> tracker_;
  std::mutex mu_;
  std::condition_variable cv_;
  bool stop_ = false;
  // The gate: accepted connections waiting for their first bytes.
  std::mutex gate_mu_;
  std::vector<Pending> pending_;
  bool gate_stopped_ = false;
  std::array<int, 2> wake_ = MakePipe();  // written to wake the gate's poll()
  std::thread watchdog_;  // last two: started once the rest exists
  std::thread gate_;
};

}  // namespace

HttpServer::HttpServer(JobService* service, JsonLog* log, ServerOptions options)
    : service_(service), log_(log), options_(std::move(options)), server_(MakeServer(options_, &tls_error_)) {
  httplib::Server& s = *server_;
  const int threads = options_.threads;
  connections_ = std::make_shared<ConnectionTracker>(options_.request_deadline_s);
  s.new_task_queue = [threads, idle_s = options_.idle_timeout_s, tracker = connections_] {
    return new TrackingPool(threads, idle_s, tracker);
  };
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
                       {},
                       req.path};
    for (size_t i = 0; i < req.get_header_value_count("Content-Length"); ++i) {
      r.content_lengths.push_back(req.get_header_value("Content-Length", i));
    }
    std::optional<Refusal> refused = Admit(r, policy);
    if (!refused) return httplib::Server::HandlerResponse::Unhandled;
    SendJson(res, refused->http_status, ErrorBody(refused->code, refused->message));
    if (refused->http_status == 401) res.set_header("WWW-Authenticate", "Bearer");
    // The body of a refused request is never read: the connection closes
    // rather than read it as the next request.
    res.set_header("Connection", "close");
    t_stop_reading_after_reply = true;
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
      SendJson(res, res.status, ErrorBody("http_error", ProtocolErrorMessage(req, res.status)));
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
    if (t_stop_reading_after_reply) {
      t_stop_reading_after_reply = false;
      connections_->StopReading(t_connection);
    }
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
