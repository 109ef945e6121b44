#include "runtime/client/server_api.h"

#include <httplib.h>

namespace perseus::client {

using Json = nlohmann::json;

ServerApi::ServerApi(ServerAddress address)
    : address_(std::move(address)), http_(std::make_unique<httplib::Client>(address_.url)) {
  http_->set_connection_timeout(1, 0);
  http_->set_read_timeout(5, 0);
  http_->set_write_timeout(5, 0);
  http_->set_keep_alive(true);
  http_->set_tcp_nodelay(true);
  if (!address_.token.empty()) http_->set_bearer_token_auth(address_.token);
}

ServerApi::~ServerApi() = default;

Result<std::string> ServerApi::Check(const std::string& what, int http_status, const std::string& body) {
  reached_ = true;
  if (http_status >= 200 && http_status < 300) return body;
  std::string message = body;
  Json j = Json::parse(body, nullptr, false);
  if (j.is_object() && j.contains("error") && j["error"].is_object()) message = j["error"].value("message", body);
  message = what + ": HTTP " + std::to_string(http_status) + ": " + message;
  if (http_status == 404) return Status::NotFound(message);
  if (http_status == 409) return Status::Unavailable(message);
  if (http_status >= 500) return Status::Unavailable(message);
  return Status::InvalidArgument(message);
}

Result<Json> ServerApi::Post(const std::string& path, const Json& body) {
  httplib::Result r = http_->Post(path, body.dump(), "application/json");
  reached_ = false;
  if (!r) return Status::Unavailable("POST " + address_.url + path + ": " + httplib::to_string(r.error()));
  Result<std::string> text = Check("POST " + path, r->status, r->body);
  if (!text.ok()) return text.status();
  Json j = Json::parse(*text, nullptr, false);
  if (j.is_discarded()) return Status::Internal("POST " + path + ": reply is not JSON");
  return j;
}

Result<Json> ServerApi::Get(const std::string& path) {
  httplib::Result r = http_->Get(path);
  reached_ = false;
  if (!r) return Status::Unavailable("GET " + address_.url + path + ": " + httplib::to_string(r.error()));
  Result<std::string> text = Check("GET " + path, r->status, r->body);
  if (!text.ok()) return text.status();
  Json j = Json::parse(*text, nullptr, false);
  if (j.is_discarded()) return Status::Internal("GET " + path + ": reply is not JSON");
  return j;
}

Result<std::optional<RankPlan>> ServerApi::FetchPlan(const std::string& job, int rank, int64_t known_version) {
  std::string path = "/jobs/" + job + "/ranks/" + std::to_string(rank) + "/plan";
  if (known_version >= 0) path += "?version=" + std::to_string(known_version);
  httplib::Result r = http_->Get(path);
  reached_ = false;
  if (!r) return Status::Unavailable("GET " + address_.url + path + ": " + httplib::to_string(r.error()));
  Result<std::string> text = Check("GET " + path, r->status, r->body);
  if (!text.ok()) return text.status();
  return ParseRankPlan(*text);
}

}  // namespace perseus::client
