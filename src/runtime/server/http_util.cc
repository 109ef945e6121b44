#include "runtime/server/http_util.h"

namespace perseus::server {

namespace {

const char* CodeName(Status::Code code) {
  switch (code) {
    case Status::Code::kOk: return "ok";
    case Status::Code::kInvalidArgument: return "invalid_argument";
    case Status::Code::kNotFound: return "not_found";
    case Status::Code::kUnavailable: return "conflict";
    case Status::Code::kIoError: return "io_error";
    case Status::Code::kInternal: return "internal";
  }
  return "internal";
}

}  // namespace

int HttpStatusFor(const Status& status) {
  switch (status.code()) {
    case Status::Code::kOk: return 200;
    case Status::Code::kInvalidArgument: return 400;
    case Status::Code::kNotFound: return 404;
    case Status::Code::kUnavailable: return 409;
    default: return 500;
  }
}

Json ErrorBody(const std::string& code, const std::string& message) {
  Json e = {{"code", code}, {"message", message}};
  const std::string prefix = "field '";
  if (message.rfind(prefix, 0) == 0) {
    size_t end = message.find('\'', prefix.size());
    if (end != std::string::npos) e["field"] = message.substr(prefix.size(), end - prefix.size());
  }
  return {{"error", e}};
}

void SendJson(httplib::Response& res, int http_status, const Json& body) {
  res.status = http_status;
  res.set_content(body.dump(-1, ' ', false, Json::error_handler_t::replace), "application/json");
}

void SendError(httplib::Response& res, const Status& status) {
  SendJson(res, HttpStatusFor(status), ErrorBody(CodeName(status.code()), status.message()));
}

void SendReply(httplib::Response& res, const Result<ApiReply>& reply) {
  if (!reply.ok()) return SendError(res, reply.status());
  SendJson(res, reply->created ? 201 : 200, reply->body);
}

Result<Json> RequestJson(const httplib::Request& req) { return ParseJsonObject(req.body); }

Result<int64_t> ParseIntParam(const std::string& text, const std::string& name) {
  if (text.empty() || text.size() > 15 || text.find_first_not_of("0123456789") != std::string::npos) {
    return Status::InvalidArgument(name + ": expected a non-negative integer, got '" + text.substr(0, 40) + "'");
  }
  return std::stoll(text);
}

Result<int64_t> QueryIntParam(const httplib::Request& req, const std::string& name, int64_t min_value,
                              int64_t max_value, int64_t fallback) {
  if (!req.has_param(name)) return fallback;
  const std::string where = "query '" + name + "'";
  Result<int64_t> value = ParseIntParam(req.get_param_value(name), where);
  if (!value.ok()) return value.status();
  if (*value < min_value || *value > max_value) {
    return Status::InvalidArgument(where + ": expected an integer in [" + std::to_string(min_value) + ", " +
                                   std::to_string(max_value) + "], got " + std::to_string(*value));
  }
  return value;
}

}  // namespace perseus::server
