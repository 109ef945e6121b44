// Resource /jobs/{id}/history: the job's plans, stragglers, carbon decisions
// and iterations over time, for the dashboard (job_history.h).
#include <limits>

#include "runtime/server/http_util.h"

namespace perseus::server {

namespace {

Result<HistoryQuery> ParseHistoryQuery(const httplib::Request& req) {
  HistoryQuery q;
  Result<int64_t> events = QueryIntParam(req, "events", 0, JobHistory::kMaxEvents, q.max_events);
  if (!events.ok()) return events.status();
  Result<int64_t> iterations = QueryIntParam(req, "iterations", 0, JobHistory::kMaxIterations, q.max_iterations);
  if (!iterations.ok()) return iterations.status();
  q.max_events = *events;
  q.max_iterations = *iterations;
  if (req.has_param("pipeline")) {
    Result<int64_t> pipeline = QueryIntParam(req, "pipeline", 0, std::numeric_limits<int>::max(), 0);  // the job checks it against dp
    if (!pipeline.ok()) return pipeline.status();
    q.pipeline = static_cast<int>(*pipeline);
  }
  return q;
}

}  // namespace

void AddHistoryRoutes(httplib::Server& server, const RouteContext& ctx) {
  JobService* service = ctx.service;
  server.Get(R"(/jobs/([^/]+)/history)", [service](const httplib::Request& req, httplib::Response& res) {
    Result<HistoryQuery> query = ParseHistoryQuery(req);
    if (!query.ok()) return SendError(res, query.status());
    Result<Json> history = service->HistoryJson(req.matches[1], *query);
    if (!history.ok()) return SendError(res, history.status());
    SendJson(res, 200, *history);
  });
}

}  // namespace perseus::server
