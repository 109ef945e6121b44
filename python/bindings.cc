// The _perseus extension module.
#include "bindings.h"

#include "perseus/version.h"

namespace perseus::python {

void ThrowStatus(const Status& status) {
  switch (status.code()) {
    case Status::Code::kInvalidArgument: throw py::value_error(status.message());
    case Status::Code::kNotFound: {
      PyErr_SetString(PyExc_LookupError, status.message().c_str());
      throw py::error_already_set();
    }
    case Status::Code::kIoError: {
      PyErr_SetString(PyExc_OSError, status.message().c_str());
      throw py::error_already_set();
    }
    case Status::Code::kUnavailable: {
      PyErr_SetString(PyExc_ConnectionError, status.message().c_str());
      throw py::error_already_set();
    }
    default: throw std::runtime_error(status.message());
  }
}

}  // namespace perseus::python

PYBIND11_MODULE(_perseus, m) {
  m.doc() = "perseus: energy-optimal pipeline-parallel training (native module)";
  m.attr("__version__") = perseus::kVersion;
  perseus::python::BindOptimizer(m);
  perseus::python::BindClient(m);
}
