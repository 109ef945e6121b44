// Resources of online profiling and its result: a rank's window reports, the
// measured profile (Zeus CSV) and the frontier.
#include "runtime/server/http_util.h"

namespace perseus::server {

void AddProfilingRoutes(httplib::Server& server, const RouteContext& ctx) {
  JobService* service = ctx.service;
  server.Post(R"(/jobs/([^/]+)/ranks/([^/]+)/windows)",
              [service](const httplib::Request& req, httplib::Response& res) {
                Result<int64_t> rank = ParseIntParam(req.matches[2], "path 'rank'");
                if (!rank.ok()) return SendError(res, rank.status());
                Result<Json> body = RequestJson(req);
                if (!body.ok()) return SendError(res, body.status());
                SendReply(res, HandleReportWindow(*service, req.matches[1], static_cast<int>(*rank), *body));
              });
  server.Get(R"(/jobs/([^/]+)/profile)", [service](const httplib::Request& req, httplib::Response& res) {
    Result<std::string> csv = service->ProfileCsv(req.matches[1]);
    if (!csv.ok()) return SendError(res, csv.status());
    res.status = 200;
    res.set_content(*csv, "text/csv");
  });
  server.Get(R"(/jobs/([^/]+)/frontier)", [service](const httplib::Request& req, httplib::Response& res) {
    Result<Json> frontier = service->FrontierJson(req.matches[1]);
    if (!frontier.ok()) return SendError(res, frontier.status());
    SendJson(res, 200, *frontier);
  });
}

}  // namespace perseus::server
