// Helpers shared by the HTTP routes: JSON replies, Status -> HTTP status,
// and path parameters (authentication is admission.h's).
//
// Error bodies are {"error": {"code": "invalid_argument", "message": "...",
// "field": "pp"}}; "field" is present when the message names one. Status
// codes: kInvalidArgument 400, kNotFound 404, kUnavailable 409 (conflicts
// with the job's state), kIoError/kInternal 500. Thread safety: pure.
#pragma once

#include <functional>
#include <string>

#include <httplib.h>

#include "perseus/status.h"
#include "runtime/server/api_handlers.h"
#include "common/json_fields.h"
#include "runtime/server/json_log.h"

namespace perseus::server {

struct RouteContext {
  JobService* service = nullptr;
  JsonLog* log = nullptr;
};

int HttpStatusFor(const Status& status);
Json ErrorBody(const std::string& code, const std::string& message);
void SendJson(httplib::Response& res, int http_status, const Json& body);
void SendError(httplib::Response& res, const Status& status);
// 201 for a created resource, else 200; errors by HttpStatusFor.
void SendReply(httplib::Response& res, const Result<ApiReply>& reply);

// The request body as a JSON object, or a 400-worthy error.
Result<Json> RequestJson(const httplib::Request& req);
// A non-negative integer path or query parameter; errors name it.
Result<int64_t> ParseIntParam(const std::string& text, const std::string& name);
// The integer query parameter `name` in [min_value, max_value], or
// `fallback` when the request has none; errors name it ("query 'events'").
Result<int64_t> QueryIntParam(const httplib::Request& req, const std::string& name, int64_t min_value,
                              int64_t max_value, int64_t fallback);

// Route registration, one function per resource (routes_*.cc).
void AddJobRoutes(httplib::Server& server, const RouteContext& ctx);
void AddRankRoutes(httplib::Server& server, const RouteContext& ctx);
void AddProfilingRoutes(httplib::Server& server, const RouteContext& ctx);
void AddIterationRoutes(httplib::Server& server, const RouteContext& ctx);
void AddStragglerRoutes(httplib::Server& server, const RouteContext& ctx);
void AddCarbonRoutes(httplib::Server& server, const RouteContext& ctx);
void AddPowerCapRoutes(httplib::Server& server, const RouteContext& ctx);
void AddMetricsRoutes(httplib::Server& server, const RouteContext& ctx);
void AddHistoryRoutes(httplib::Server& server, const RouteContext& ctx);
// The web dashboard (dashboard/) at / and /dashboard/*: no job data in it.
void AddDashboardRoutes(httplib::Server& server);

}  // namespace perseus::server
