#include "runtime/client/server_api.h"

#include <httplib.h>

#include <openssl/x509.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>

#include "common/http_error.h"
#include "common/http_url.h"
#include "common/strings.h"

namespace perseus::client {

using Json = nlohmann::json;

namespace {
constexpr int kConnectTimeoutS = 1;
}  // namespace

ServerApi::ServerApi(ServerAddress address)
    : address_(std::move(address)), http_(std::make_unique<httplib::Client>(address_.url)) {
  http_->set_connection_timeout(kConnectTimeoutS, 0);
  http_->set_read_timeout(5, 0);
  http_->set_write_timeout(5, 0);
  http_->set_keep_alive(true);
  http_->set_tcp_nodelay(true);
  if (address_.token.empty()) {
    const char* env = std::getenv("PERSEUS_TOKEN");
    if (env != nullptr) address_.token = env;
  }
  if (!address_.token.empty()) http_->set_bearer_token_auth(address_.token);
  if (address_.ca_cert_path.empty()) {
    const char* env = std::getenv("PERSEUS_CA_CERT");
    if (env != nullptr) address_.ca_cert_path = env;
  }
  if (!address_.ca_cert_path.empty()) http_->set_ca_cert_path(address_.ca_cert_path);
  http_->enable_server_certificate_verification(true);
}

namespace {

Status CheckToken(const ServerAddress& address) {
  const char* env = address.token.empty() ? std::getenv("PERSEUS_TOKEN") : nullptr;
  const std::string token = env != nullptr ? env : address.token;
  return CheckHeaderValue(token, env != nullptr ? "$PERSEUS_TOKEN" : "token");
}

}  // namespace

Status CheckServerAddress(const ServerAddress& address, const std::string& url_what, const std::string& ca_what) {
  PERSEUS_RETURN_IF_ERROR(CheckHttpUrl(address.url, url_what));
  PERSEUS_RETURN_IF_ERROR(CheckToken(address));
  if (!address.ca_cert_path.empty() && !std::filesystem::is_regular_file(address.ca_cert_path)) {
    return Status::InvalidArgument(ca_what + " " + address.ca_cert_path + ": no such file");
  }
  return Status::Ok();
}

std::string ServerApi::TransportError(const std::string& what, httplib::Error error) const {
  std::string message = what + ": " + DescribeHttpError(error, kConnectTimeoutS);
  if (error == httplib::Error::SSLServerVerification) {
    message += " (" + std::string(X509_verify_cert_error_string(http_->get_openssl_verify_result())) +
               "; CA bundle: " + (address_.ca_cert_path.empty() ? "the system's" : address_.ca_cert_path) +
               "; give the server's CA with --ca-cert, ca_cert= or $PERSEUS_CA_CERT)";
  } else if (error == httplib::Error::SSLConnection || error == httplib::Error::SSLLoadingCerts) {
    message += " (TLS handshake or CA bundle failed; is the server serving HTTPS, and is " +
               (address_.ca_cert_path.empty() ? std::string("the system's CA store") : address_.ca_cert_path) +
               " a readable PEM file?)";
  }
  return message;
}

ServerApi::~ServerApi() = default;

Result<std::string> ServerApi::Check(const std::string& what, int http_status, const std::string& body) {
  reached_ = true;
  if (http_status >= 200 && http_status < 300) return body;
  // The server's words, or the start of a reply of another shape (a proxy's
  // page), never escape sequences for the terminal they are printed on.
  constexpr size_t kMaxShownBytes = 500;
  std::string message = CutText(body, kMaxShownBytes);
  Json j = Json::parse(body, nullptr, false);
  if (j.is_object() && j.contains("error") && j["error"].is_object() && j["error"].value("message", Json()).is_string()) {
    message = j["error"]["message"].get<std::string>();
  }
  message = what + ": HTTP " + std::to_string(http_status) + ": " + EscapeControlChars(message);
  if (http_status == 404) return Status::NotFound(message);
  if (http_status == 409) return Status::Unavailable(message);
  if (http_status >= 500) return Status::Unavailable(message);
  return Status::InvalidArgument(message);
}

Result<std::string> ServerApi::Send(const std::string& method, const std::string& path, const std::string* body) {
  const std::string what = method + " " + path;
  httplib::Request req;
  req.method = method;
  req.path = path;
  if (body != nullptr) {
    req.body = *body;
    req.set_header("Content-Type", "application/json");
  }
  std::string received;
  const char* refused = nullptr;
  const auto start = std::chrono::steady_clock::now();
  req.content_receiver = [&](const char* data, size_t n, uint64_t, uint64_t) {
    if (received.size() + n > kMaxReplyBytes) {
      refused = "reply larger than 32 MiB";
    } else if (std::chrono::steady_clock::now() - start > std::chrono::duration<double>(kReplyDeadlineS)) {
      refused = "reply took longer than 10 s";
    } else {
      received.append(data, n);
      return true;
    }
    return false;
  };
  httplib::Result r = http_->send(req);
  reached_ = false;
  if (refused != nullptr) return Status::Unavailable(what + ": " + refused);
  if (!r) return Status::Unavailable(TransportError(method + " " + address_.url + path, r.error()));
  return Check(what, r->status, received);
}

Result<Json> ServerApi::SendJson(const std::string& method, const std::string& path, const Json* body) {
  const std::string text = body != nullptr ? body->dump() : std::string();
  Result<std::string> reply = Send(method, path, body != nullptr ? &text : nullptr);
  if (!reply.ok()) return reply.status();
  // Every reply of the server is one object; anything else is not a perseus server.
  Result<Json> j = ParseJsonObject(*reply, method + " " + path + ": reply");
  if (!j.ok()) return Status::Internal(j.status().message());
  return j;
}

Result<Json> ServerApi::Post(const std::string& path, const Json& body) { return SendJson("POST", path, &body); }

Result<Json> ServerApi::Get(const std::string& path) { return SendJson("GET", path, nullptr); }

Result<Json> ServerApi::Delete(const std::string& path) { return SendJson("DELETE", path, nullptr); }

Result<Json> ServerApi::Put(const std::string& path, const Json& body) { return SendJson("PUT", path, &body); }

Result<std::optional<RankPlan>> ServerApi::FetchPlan(const std::string& job, int rank, int64_t known_version) {
  std::string path = "/jobs/" + job + "/ranks/" + std::to_string(rank) + "/plan";
  if (known_version >= 0) path += "?version=" + std::to_string(known_version);
  Result<std::string> reply = Send("GET", path, nullptr);
  if (!reply.ok()) return reply.status();
  return ParseRankPlan(*reply);
}

}  // namespace perseus::client
