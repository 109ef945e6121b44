// Resources /jobs/{id}/power-cap and /power-cap (the server's, shared by its
// running jobs): put a power cap in force, or lift it (docs/power.md).
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
  server.Get("/power-cap", [service](const httplib::Request&, httplib::Response& res) {
    SendJson(res, 200, {{"power_cap", service->ServerPowerCapJson()}});
  });
  server.Put("/power-cap", [service](const httplib::Request& req, httplib::Response& res) {
    Result<Json> body = RequestJson(req);
    if (!body.ok()) return SendError(res, body.status());
    SendReply(res, HandleSetServerPowerCap(*service, *body));
  });
  server.Delete("/power-cap", [service](const httplib::Request&, httplib::Response& res) {
    SendReply(res, HandleClearServerPowerCap(*service));
  });
}

}  // namespace perseus::server
