// Resource /jobs/{id}/power-cap: put a power cap in force, or lift it (docs/power.md).
#include "runtime/server/http_util.h"

namespace perseus::server {

void AddPowerCapRoutes(httplib::Server& server, const RouteContext& ctx) {
  JobService* service = ctx.service;
  server.Put(R"(/jobs/([^/]+)/power-cap)", [service](const httplib::Request& req, httplib::Response& res) {
    Result<Json> body = RequestJson(req);
    if (!body.ok()) return SendError(res, body.status());
    SendReply(res, HandleSetPowerCap(*service, req.matches[1], *body));
  });
  server.Delete(R"(/jobs/([^/]+)/power-cap)", [service](const httplib::Request& req, httplib::Response& res) {
    SendReply(res, HandleClearPowerCap(*service, req.matches[1]));
  });
}

}  // namespace perseus::server
