#include "runtime/server/http_server.h"

#include <httplib.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <openssl/err.h>
#include <sys/socket.h>

#include <atomic>
#include <chrono>
#include <functional>
#include <memory>

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

// httplib's thread pool, counting the accepted connections (one task each)
// that wait for a worker.
class CountingPool : public httplib::TaskQueue {
 public:
  CountingPool(int threads, std::shared_ptr<std::atomic<int>> waiting)
      : pool_(static_cast<size_t>(threads)), waiting_(std::move(waiting)) {}
  void enqueue(std::function<void()> fn) override {
    waiting_->fetch_add(1);
    pool_.enqueue([fn = std::move(fn), waiting = waiting_] {
      waiting->fetch_sub(1);
      fn();
    });
  }
  void shutdown() override { pool_.shutdown(); }

 private:
  httplib::ThreadPool pool_;
  std::shared_ptr<std::atomic<int>> waiting_;
};

}  // namespace

HttpServer::HttpServer(JobService* service, JsonLog* log, ServerOptions options)
    : service_(service), log_(log), options_(std::move(options)), server_(MakeServer(options_, &tls_error_)) {
  httplib::Server& s = *server_;
  const int threads = options_.threads;
  s.new_task_queue = [threads, waiting = waiting_connections_] { return new CountingPool(threads, waiting); };
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
  s.set_post_routing_handler([waiting = waiting_connections_](const httplib::Request&, httplib::Response& res) {
    if (waiting->load() > 0) res.set_header("Connection", "close");
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
