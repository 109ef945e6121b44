// Resource /jobs/{id}/stragglers: declare and clear stragglers by hand.
#include "runtime/server/http_util.h"

namespace perseus::server {

void AddStragglerRoutes(httplib::Server& server, const RouteContext& ctx) {
  JobService* service = ctx.service;
  server.Post(R"(/jobs/([^/]+)/stragglers)",
              [service](const httplib::Request& req, httplib::Response& res) {
                Result<Json> body = RequestJson(req);
                if (!body.ok()) return SendError(res, body.status());
                SendReply(res, HandleDeclareStraggler(*service, req.matches[1], *body));
              });
  server.Delete(R"(/jobs/([^/]+)/stragglers/([^/]+))",
                [service](const httplib::Request& req, httplib::Response& res) {
                  Result<int64_t> pipeline = ParseIntParam(req.matches[2], "path 'pipeline'");
                  if (!pipeline.ok()) return SendError(res, pipeline.status());
                  SendReply(res, HandleClearStraggler(*service, req.matches[1], static_cast<int>(*pipeline)));
                });
}

}  // namespace perseus::server
