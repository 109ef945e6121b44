// Status codes on the perseusd wire.
#include "runtime/gpu/daemon_protocol.h"

namespace perseus::runtime {

std::string StatusCodeName(Status::Code code) {
  switch (code) {
    case Status::Code::kOk: return "ok";
    case Status::Code::kInvalidArgument: return "invalid_argument";
    case Status::Code::kNotFound: return "not_found";
    case Status::Code::kIoError: return "io_error";
    case Status::Code::kInternal: return "internal";
    case Status::Code::kUnavailable: return "unavailable";
  }
  return "internal";
}

Status StatusFromCodeName(const std::string& code_name, std::string message) {
  if (code_name == "invalid_argument") return Status::InvalidArgument(std::move(message));
  if (code_name == "not_found") return Status::NotFound(std::move(message));
  if (code_name == "io_error") return Status::IoError(std::move(message));
  if (code_name == "unavailable") return Status::Unavailable(std::move(message));
  return Status::Internal(std::move(message));
}

}  // namespace perseus::runtime
