// Status formatting.
#include "perseus/status.h"

namespace perseus {

std::string Status::ToString() const {
  switch (code_) {
    case Code::kOk: return "ok";
    case Code::kInvalidArgument: return "invalid argument: " + message_;
    case Code::kNotFound: return "not found: " + message_;
    case Code::kIoError: return "I/O error: " + message_;
    case Code::kInternal: return "internal error: " + message_;
    case Code::kUnavailable: return "unavailable: " + message_;
  }
  return message_;
}

Status Status::WithContext(const std::string& prefix) const {
  if (ok()) return *this;
  return Status(code_, prefix + ": " + message_);
}

}  // namespace perseus
