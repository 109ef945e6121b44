// Status and Result<T>: the one error type of perseus.
//
// Every fallible function returns a Status (success or an error code plus a
// message that says where: "profile.csv:41: column 'energy': expected a
// number, got 'abc'") or a Result<T> holding either a value or such a Status.
// No exceptions cross library boundaries; the CLI, the server and the Python
// bindings translate Status into exit codes, HTTP codes and exceptions.
// Thread safety: plain values, safe to copy between threads.
#pragma once

#include <cassert>
#include <optional>
#include <string>
#include <utility>

namespace perseus {

class Status {
 public:
  enum class Code { kOk, kInvalidArgument, kNotFound, kIoError, kInternal, kUnavailable };

  Status() = default;
  static Status Ok() { return Status(); }
  static Status InvalidArgument(std::string msg) { return Status(Code::kInvalidArgument, std::move(msg)); }
  static Status NotFound(std::string msg) { return Status(Code::kNotFound, std::move(msg)); }
  static Status IoError(std::string msg) { return Status(Code::kIoError, std::move(msg)); }
  static Status Internal(std::string msg) { return Status(Code::kInternal, std::move(msg)); }
  static Status Unavailable(std::string msg) { return Status(Code::kUnavailable, std::move(msg)); }

  bool ok() const { return code_ == Code::kOk; }
  Code code() const { return code_; }
  const std::string& message() const { return message_; }
  // "invalid argument: <message>", or "ok".
  std::string ToString() const;
  // Returns a copy whose message is "<prefix>: <message>".
  Status WithContext(const std::string& prefix) const;

 private:
  Status(Code code, std::string msg) : code_(code), message_(std::move(msg)) {}
  Code code_ = Code::kOk;
  std::string message_;
};

// Either a T or a non-ok Status.
template <typename T>
class Result {
 public:
  Result(T value) : value_(std::move(value)) {}  // NOLINT: implicit by design
  Result(Status status) : status_(std::move(status)) { assert(!status_.ok()); }  // NOLINT

  bool ok() const { return value_.has_value(); }
  const Status& status() const { return status_; }
  // REQUIRES: ok()
  T& value() & { assert(ok()); return *value_; }
  const T& value() const& { assert(ok()); return *value_; }
  T&& value() && { assert(ok()); return std::move(*value_); }
  T* operator->() { return &value(); }
  const T* operator->() const { return &value(); }
  T& operator*() & { return value(); }
  const T& operator*() const& { return value(); }

 private:
  std::optional<T> value_;
  Status status_;
};

}  // namespace perseus

// Propagates a non-ok Status out of the calling function.
#define PERSEUS_RETURN_IF_ERROR(expr)        \
  do {                                       \
    ::perseus::Status _st = (expr);          \
    if (!_st.ok()) return _st;               \
  } while (0)
