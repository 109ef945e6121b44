// Resource /jobs/{id}/ranks: rank registration and each rank's plan.
#include "runtime/server/http_util.h"

namespace perseus::server {

void AddRankRoutes(httplib::Server& server, const RouteContext& ctx) {
  JobService* service = ctx.service;
  server.Post(R"(/jobs/([^/]+)/ranks)", [service](const httplib::Request& req, httplib::Response& res) {
                Result<Json> body = RequestJson(req);
                if (!body.ok()) return SendError(res, body.status());
                SendReply(res, HandleRegisterRank(*service, req.matches[1], *body));
              });
  server.Get(R"(/jobs/([^/]+)/ranks/([^/]+)/plan)", [service](const httplib::Request& req, httplib::Response& res) {
    Result<int64_t> rank = ParseIntParam(req.matches[2], "path 'rank'");
    if (!rank.ok()) return SendError(res, rank.status());
    int64_t known = -1;
    if (req.has_param("version")) {
      Result<int64_t> v = ParseIntParam(req.get_param_value("version"), "query 'version'");
      if (!v.ok()) return SendError(res, v.status());
      known = *v;
    }
    Result<std::string> plan = service->RankPlan(req.matches[1], static_cast<int>(*rank), known);
    if (!plan.ok()) return SendError(res, plan.status());
    res.status = 200;
    res.set_content(*plan, "application/json");
  });
}

}  // namespace perseus::server
