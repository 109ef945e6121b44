// Resource /jobs: register a job, list jobs, read one, finish, re-profile or delete it.
#include "runtime/server/http_util.h"

namespace perseus::server {

void AddJobRoutes(httplib::Server& server, const RouteContext& ctx) {
  JobService* service = ctx.service;
  server.Post("/jobs", [service](const httplib::Request& req, httplib::Response& res) {
                Result<Json> body = RequestJson(req);
                if (!body.ok()) return SendError(res, body.status());
                SendReply(res, HandleRegisterJob(*service, *body));
              });
  server.Get("/jobs", [service](const httplib::Request&, httplib::Response& res) {
    Json jobs = Json::array();
    for (Json& j : service->AllSummaries()) {
      jobs.push_back({{"id", j["id"]}, {"phase", j["phase"]}, {"ranks_registered", j["ranks_registered"]},
                      {"world_size", j["world_size"]}, {"warnings", j["warnings"]}});
    }
    Json quarantined = Json::array();
    for (const auto& [id, why] : service->QuarantinedJobs()) quarantined.push_back({{"id", id}, {"error", why}});
    SendJson(res, 200, {{"jobs", jobs}, {"quarantined", quarantined},
                        {"unknown_rank_requests", service->UnknownRankRequests()}});
  });
  server.Get(R"(/jobs/([^/]+))", [service](const httplib::Request& req, httplib::Response& res) {
    Result<Json> summary = service->JobSummary(req.matches[1]);
    if (!summary.ok()) return SendError(res, summary.status());
    SendJson(res, 200, *summary);
  });
  server.Post(R"(/jobs/([^/]+)/finish)", [service](const httplib::Request& req, httplib::Response& res) {
                SendReply(res, HandleFinishJob(*service, req.matches[1]));
              });
  server.Post(R"(/jobs/([^/]+)/reprofile)", [service](const httplib::Request& req, httplib::Response& res) {
    SendReply(res, HandleReprofile(*service, req.matches[1]));
  });
  server.Post(R"(/jobs/([^/]+)/optimize)", [service](const httplib::Request& req, httplib::Response& res) {
    SendReply(res, HandleReoptimize(*service, req.matches[1]));
  });
  server.Delete(R"(/jobs/([^/]+))", [service](const httplib::Request& req, httplib::Response& res) {
    SendReply(res, HandleDeleteJob(*service, req.matches[1]));
  });
}

}  // namespace perseus::server
