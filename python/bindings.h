// Shared pieces of the pybind11 bindings: Status -> Python exceptions.
//   kInvalidArgument -> ValueError, kNotFound -> LookupError, kIoError -> OSError,
//   kUnavailable -> ConnectionError, anything else -> RuntimeError;
// the exception message is the Status message.
#pragma once

#include <pybind11/pybind11.h>

#include "perseus/status.h"

namespace perseus::python {

namespace py = pybind11;

[[noreturn]] void ThrowStatus(const Status& status);

template <typename T>
T Unwrap(Result<T> result) {
  if (!result.ok()) ThrowStatus(result.status());
  return std::move(result).value();
}

inline void Check(const Status& status) {
  if (!status.ok()) ThrowStatus(status);
}

void BindClient(py::module_& m);
void BindOptimizer(py::module_& m);

}  // namespace perseus::python
