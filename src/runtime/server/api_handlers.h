// The HTTP API's mutating requests without HTTP: each parses its JSON body
// with the protocol's parser (runtime/protocol/: the same code the rank
// client and the Python module write with), calls the JobService's typed
// method and encodes the reply body. The routes (routes_*.cc) add only HTTP:
// reading the body, path parameters, and Status -> HTTP status
// (http_util.h). Tests call these to exercise exactly what a request does.
// Thread safety: as JobService (thread-safe).
#pragma once

#include <string>

#include "runtime/server/job_service.h"

namespace perseus::server {

// A reply body; `created` makes it a 201 instead of a 200.
struct ApiReply {
  bool created = false;
  Json body;
};

// POST /jobs
Result<ApiReply> HandleRegisterJob(JobService& service, const Json& body);
// POST /jobs/{id}/ranks
Result<ApiReply> HandleRegisterRank(JobService& service, const std::string& job_id, const Json& body);
// POST /jobs/{id}/ranks/{rank}/windows
Result<ApiReply> HandleReportWindow(JobService& service, const std::string& job_id, int rank, const Json& body);
// POST /jobs/{id}/ranks/{rank}/iterations
Result<ApiReply> HandleReportIterations(JobService& service, const std::string& job_id, int rank, const Json& body);
// POST /jobs/{id}/stragglers and DELETE /jobs/{id}/stragglers/{pipeline}
Result<ApiReply> HandleDeclareStraggler(JobService& service, const std::string& job_id, const Json& body);
Result<ApiReply> HandleClearStraggler(JobService& service, const std::string& job_id, int pipeline);
// POST /jobs/{id}/finish, POST /jobs/{id}/reprofile, POST /jobs/{id}/optimize, DELETE /jobs/{id}
Result<ApiReply> HandleFinishJob(JobService& service, const std::string& job_id);
Result<ApiReply> HandleReprofile(JobService& service, const std::string& job_id);
Result<ApiReply> HandleReoptimize(JobService& service, const std::string& job_id);
Result<ApiReply> HandleDeleteJob(JobService& service, const std::string& job_id);
// PUT and DELETE /jobs/{id}/power-cap: the job's power-cap summary afterwards.
Result<ApiReply> HandleSetPowerCap(JobService& service, const std::string& job_id, const Json& body);
Result<ApiReply> HandleClearPowerCap(JobService& service, const std::string& job_id);
// PUT / DELETE /power-cap: the server's cap, shared by its running jobs.
Result<ApiReply> HandleSetServerPowerCap(JobService& service, const Json& body);
Result<ApiReply> HandleClearServerPowerCap(JobService& service);
// POST /jobs/{id}/carbon/evaluate
Result<ApiReply> HandleEvaluateCarbon(JobService& service, const std::string& job_id);

}  // namespace perseus::server
