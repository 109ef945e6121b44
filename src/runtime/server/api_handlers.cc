#include "runtime/server/api_handlers.h"

#include <utility>

#include "runtime/protocol/rank_messages.h"

namespace perseus::server {

namespace {

// The reply of a request that could not be parsed, or of the service.
template <typename T, typename Encode>
Result<ApiReply> Encoded(const Result<T>& result, Encode encode) {
  if (!result.ok()) return result.status();
  return encode(*result);
}

Json StragglersReply(const std::vector<Straggler>& stragglers) { return {{"stragglers", StragglersJson(stragglers)}}; }

ApiReply PowerCapReply(const Json& summary) { return ApiReply{false, {{"power_cap", summary}}}; }

}  // namespace

Result<ApiReply> HandleRegisterJob(JobService& service, const Json& body) {
  Result<JobSpec> spec = ParseJobSpec(body);
  if (!spec.ok()) return spec.status();
  return Encoded(service.RegisterJob(*spec), [&](const Registered& r) {
    return ApiReply{r.created, {{"id", spec->id}, {"created", r.created}}};
  });
}

Result<ApiReply> HandleRegisterRank(JobService& service, const std::string& job_id, const Json& body) {
  Result<RankInfo> rank = protocol::ParseRankRegistration(body);
  if (!rank.ok()) return rank.status();
  return Encoded(service.RegisterRank(job_id, *rank), [&](const Registered& r) {
    Json reply = {{"job", job_id}, {"rank", rank->rank}, {"created", r.created}};
    if (r.created) reply["phase"] = PhaseName(r.phase);
    return ApiReply{r.created, std::move(reply)};
  });
}

Result<ApiReply> HandleReportWindow(JobService& service, const std::string& job_id, int rank, const Json& body) {
  Result<protocol::WindowReport> report = protocol::ParseWindowReport(body);
  if (!report.ok()) return report.status();
  report->rank = rank;
  return Encoded(service.ReportWindow(job_id, *report), [](const WindowAccepted& w) {
    Json reply = {{"accepted", w.accepted}, {"phase", PhaseName(w.phase)}};
    if (!w.accepted) reply["duplicate"] = true;
    return ApiReply{false, std::move(reply)};
  });
}

Result<ApiReply> HandleReportIterations(JobService& service, const std::string& job_id, int rank, const Json& body) {
  Result<protocol::IterationReports> reports = protocol::ParseIterationReports(body, rank);
  if (!reports.ok()) return reports.status();
  return Encoded(service.ReportIterations(job_id, rank, std::move(reports->reports), reports->session),
                 [](const IterationsAccepted& a) {
                   Json reply = {{"accepted", a.accepted}, {"stragglers", StragglersJson(a.stragglers)}};
                   if (a.stale > 0) reply["stale"] = a.stale;
                   return ApiReply{false, std::move(reply)};
                 });
}

Result<ApiReply> HandleDeclareStraggler(JobService& service, const std::string& job_id, const Json& body) {
  Result<protocol::StragglerDeclaration> declared = protocol::ParseStragglerDeclaration(body);
  if (!declared.ok()) return declared.status();
  return Encoded(service.DeclareStraggler(job_id, *declared),
                 [](const std::vector<Straggler>& s) { return ApiReply{false, StragglersReply(s)}; });
}

Result<ApiReply> HandleClearStraggler(JobService& service, const std::string& job_id, int pipeline) {
  return Encoded(service.ClearStraggler(job_id, pipeline),
                 [](const std::vector<Straggler>& s) { return ApiReply{false, StragglersReply(s)}; });
}

Result<ApiReply> HandleFinishJob(JobService& service, const std::string& job_id) {
  PERSEUS_RETURN_IF_ERROR(service.FinishJob(job_id));
  return ApiReply{false, {{"id", job_id}, {"phase", PhaseName(Phase::kDone)}}};
}

Result<ApiReply> HandleReprofile(JobService& service, const std::string& job_id) {
  return Encoded(service.Reprofile(job_id), [&](Phase phase) {
    return ApiReply{false, {{"id", job_id}, {"phase", PhaseName(phase)}}};
  });
}

Result<ApiReply> HandleReoptimize(JobService& service, const std::string& job_id) {
  return Encoded(service.Reoptimize(job_id), [&](Phase phase) {
    return ApiReply{false, {{"id", job_id}, {"phase", PhaseName(phase)}}};
  });
}

Result<ApiReply> HandleDeleteJob(JobService& service, const std::string& job_id) {
  PERSEUS_RETURN_IF_ERROR(service.DeleteJob(job_id));
  return ApiReply{false, {{"id", job_id}, {"deleted", true}}};
}

Result<ApiReply> HandleSetPowerCap(JobService& service, const std::string& job_id, const Json& body) {
  Result<protocol::PowerCapRequest> cap = protocol::ParsePowerCapRequest(body, "");
  if (!cap.ok()) return cap.status();
  return Encoded(service.SetPowerCap(job_id, *cap), PowerCapReply);
}

Result<ApiReply> HandleClearPowerCap(JobService& service, const std::string& job_id) {
  return Encoded(service.SetPowerCap(job_id, std::nullopt), PowerCapReply);
}

Result<ApiReply> HandleSetServerPowerCap(JobService& service, const Json& body) {
  Result<protocol::PowerCapRequest> cap = protocol::ParsePowerCapRequest(body, "");
  if (!cap.ok()) return cap.status();
  if (cap->peak_w > 0) {
    return Status::InvalidArgument("field 'peak_w': the server's cap is an average only (set a peak on each job)");
  }
  return Encoded(service.SetServerPowerCap(*cap), PowerCapReply);
}

Result<ApiReply> HandleClearServerPowerCap(JobService& service) {
  return Encoded(service.SetServerPowerCap(std::nullopt), PowerCapReply);
}

Result<ApiReply> HandleEvaluateCarbon(JobService& service, const std::string& job_id) {
  return Encoded(service.EvaluateCarbon(job_id), [](const Json& summary) { return ApiReply{false, summary}; });
}

}  // namespace perseus::server
