#include "runtime/protocol/job_requests.h"

namespace perseus::protocol {

Json StragglerDeclarationToJson(const StragglerDeclaration& d) {
  return {{"pipeline", d.pipeline}, {"slowdown", d.slowdown}};
}

Result<StragglerDeclaration> ParseStragglerDeclaration(const Json& body) {
  if (!body.is_object()) return Status::InvalidArgument("expected a JSON object, got " + Quote(body));
  Result<int64_t> pipeline = GetInt(body, "pipeline", "pipeline", 0, 1'000'000);
  if (!pipeline.ok()) return pipeline.status();
  Result<double> slowdown = GetNumber(body, "slowdown", "slowdown", 1, kMaxStragglerSlowdown);
  if (!slowdown.ok()) return slowdown.status();
  return StragglerDeclaration{static_cast<int>(*pipeline), *slowdown};
}

}  // namespace perseus::protocol
