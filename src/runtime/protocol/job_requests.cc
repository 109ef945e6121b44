#include "runtime/protocol/job_requests.h"

namespace perseus::protocol {

Json StragglerDeclarationToJson(const StragglerDeclaration& d) {
  return {{"pipeline", d.pipeline}, {"slowdown", d.slowdown}};
}

Result<StragglerDeclaration> ParseStragglerDeclaration(const Json& body) {
  if (!body.is_object()) return Status::InvalidArgument("expected a JSON object, got " + Quote(body));
  PERSEUS_RETURN_IF_ERROR(CheckKnownFields(body, "", {"pipeline", "slowdown"}));
  Result<int64_t> pipeline = GetInt(body, "pipeline", "pipeline", 0, 1'000'000);
  if (!pipeline.ok()) return pipeline.status();
  Result<double> slowdown = GetNumber(body, "slowdown", "slowdown", 1, kMaxStragglerSlowdown);
  if (!slowdown.ok()) return slowdown.status();
  return StragglerDeclaration{static_cast<int>(*pipeline), *slowdown};
}

Json PowerCapRequestToJson(const PowerCapRequest& r) {
  Json j = {{"average_w", r.average_w}, {"window_s", r.window_s}};
  if (r.peak_w > 0) j["peak_w"] = r.peak_w;
  return j;
}

Result<PowerCapRequest> ParsePowerCapRequest(const Json& body, const std::string& path) {
  const auto at = [&](const std::string& key) { return path.empty() ? key : FieldPath(path, key); };
  if (!body.is_object()) {
    if (path.empty()) return Status::InvalidArgument("expected a JSON object, got " + Quote(body));
    return FieldError(path, "expected an object, got " + Quote(body));
  }
  PERSEUS_RETURN_IF_ERROR(CheckKnownFields(body, path, {"average_w", "peak_w", "window_s"}));
  PowerCapRequest r;
  Result<double> average = GetNumber(body, "average_w", at("average_w"), 1, 1e9);
  if (!average.ok()) return average.status();
  r.average_w = *average;
  Result<std::optional<double>> peak = GetOptionalNumber(body, "peak_w", at("peak_w"), r.average_w, 1e9);
  if (!peak.ok()) return peak.status();
  r.peak_w = peak->value_or(0.0);
  Result<std::optional<double>> window = GetOptionalNumber(body, "window_s", at("window_s"), 1, 3600);
  if (!window.ok()) return window.status();
  r.window_s = window->value_or(60.0);
  return r;
}

}  // namespace perseus::protocol
