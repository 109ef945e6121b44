// Resource /jobs/{id}/ranks/{rank}/iterations: per-iteration compute times,
// the input of straggler detection.
#include "runtime/server/http_util.h"

namespace perseus::server {

void AddIterationRoutes(httplib::Server& server, const RouteContext& ctx) {
  JobService* service = ctx.service;
  server.Post(R"(/jobs/([^/]+)/ranks/([^/]+)/iterations)",
              [service](const httplib::Request& req, httplib::Response& res) {
                Result<int64_t> rank = ParseIntParam(req.matches[2], "path 'rank'");
                if (!rank.ok()) return SendError(res, rank.status());
                Result<Json> body = RequestJson(req);
                if (!body.ok()) return SendError(res, body.status());
                SendReply(res, HandleReportIterations(*service, req.matches[1], static_cast<int>(*rank), *body));
              });
}

}  // namespace perseus::server
