// Resource /jobs/{id}/carbon: the carbon policy's current intensity, forecast
// and plan, and a decision on demand.
#include "runtime/server/http_util.h"

namespace perseus::server {

void AddCarbonRoutes(httplib::Server& server, const RouteContext& ctx) {
  JobService* service = ctx.service;
  server.Get(R"(/jobs/([^/]+)/carbon)", [service](const httplib::Request& req, httplib::Response& res) {
    Result<Json> carbon = service->CarbonJson(req.matches[1]);
    if (!carbon.ok()) return SendError(res, carbon.status());
    SendJson(res, 200, *carbon);
  });
  server.Post(R"(/jobs/([^/]+)/carbon/evaluate)",
              [service](const httplib::Request& req, httplib::Response& res) {
                SendReply(res, HandleEvaluateCarbon(*service, req.matches[1]));
              });
}

}  // namespace perseus::server
