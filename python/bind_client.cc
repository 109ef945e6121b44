// perseus.Optimizer: the rank client for a training loop, and
// perseus.register_job / job_status for launchers.
#include <pybind11/stl.h>


#include "bindings.h"
#include "runtime/client/open_rank_gpu.h"
#include "runtime/client/rank_client.h"
#include "runtime/gpu/simulated_gpu.h"

namespace perseus::python {

namespace {

using client::RankClient;

// Maps "forward"/"backward" without allocating (the hooks' hot path).
Instruction ParseInstruction(py::handle name) {
  Py_ssize_t size = 0;
  const char* text = PyUnicode_Check(name.ptr()) ? PyUnicode_AsUTF8AndSize(name.ptr(), &size) : nullptr;
  if (text != nullptr) {
    std::string_view v(text, static_cast<size_t>(size));
    if (v == "forward") return Instruction::kForward;
    if (v == "backward") return Instruction::kBackward;
  }
  PyErr_Clear();
  throw py::value_error("instruction: expected 'forward' or 'backward', got " +
                        std::string(py::str(py::repr(name))));
}

class PyOptimizer {
 public:
  PyOptimizer(const std::string& server_url, const std::string& job, int rank, int dp_rank, int pp_rank, int tp_rank,
              int gpu_index, const std::string& gpu, const std::string& token, int poll_interval_ms,
              bool restore_on_signal) {
    gpu_ = Unwrap(client::OpenRankGpu(gpu, gpu_index, nullptr));
    client::RankClientOptions o;
    o.server = {server_url, token};
    o.identity = {job, rank, dp_rank, pp_rank, tp_rank};
    o.poll_interval_ms = poll_interval_ms;
    o.restore_on_signal = restore_on_signal;
    client_ = Unwrap(RankClient::Create(o, gpu_));
  }
  RankClient& c() {
    if (!client_) throw std::runtime_error("perseus.Optimizer is closed");
    return *client_;
  }
  void Close() {
    if (client_) {
      py::gil_scoped_release release;
      client_->Close();
      client_.reset();
    }
  }
  double Simulate(py::handle instruction, double time_at_max_s, double busy_power_w, double compute_fraction) {
    Instruction ins = ParseInstruction(instruction);
    auto* sim = dynamic_cast<runtime::SimulatedGpu*>(gpu_.get());
    if (sim == nullptr) throw py::value_error("simulate: the GPU is not simulated (gpu='simulated:<name>')");
    if (compute_fraction < 0) {
      compute_fraction = ins == Instruction::kForward ? kTransformerForwardComputeFraction
                                                      : kTransformerBackwardComputeFraction;
    }
    return sim->Run(KernelWork{time_at_max_s, compute_fraction, busy_power_w}).time_s;
  }
  py::dict Stats() {
    client::RankClientStats s = c().Stats();
    py::dict d;
    d["registered"] = s.registered;
    d["connected"] = s.connected;
    d["plan_version"] = s.plan_version;
    d["plan_kind"] = s.plan_kind;
    d["plan_index"] = s.plan_index;
    d["plans_received"] = s.plans_received;
    d["iterations"] = s.iterations;
    d["schedule_mismatches"] = s.schedule_mismatches;
    d["measurements_sent"] = s.measurements_sent;
    d["iterations_sent"] = s.iterations_sent;
    d["clock_changes"] = s.clock_changes;
    d["requested_clock_mhz"] = s.requested_clock_mhz;
    d["applied_clock_mhz"] = s.applied_clock_mhz;
    d["last_error"] = s.last_error;
    return d;
  }
  std::string GpuName() { return gpu_->Name(); }

 private:
  std::shared_ptr<runtime::GpuControl> gpu_;
  std::unique_ptr<RankClient> client_;
};

py::dict ToDict(const nlohmann::json& j) { return py::module_::import("json").attr("loads")(j.dump()); }

}  // namespace

void BindClient(py::module_& m) {
  py::class_<PyOptimizer>(m, "Optimizer", R"doc(
The perseus rank client. Wrap every forward and backward of the training loop:

    opt = perseus.Optimizer("http://127.0.0.1:7787", "my-job", rank, dp_rank, pp_rank, tp_rank,
                            gpu_index, gpu="nvml")
    opt.on_step_begin()
    opt.on_instruction_begin("forward"); forward(); opt.on_instruction_end("forward")
    ...
    opt.on_step_end()   # before gradient synchronisation

gpu: "nvml", "daemon:/run/perseusd.sock" or "simulated:A100". The hooks never wait on
the network; plans arrive on a background thread and apply from the next step.
)doc")
      .def(py::init<const std::string&, const std::string&, int, int, int, int, int, const std::string&,
                    const std::string&, int, bool>(),
           py::arg("server_url"), py::arg("job"), py::arg("rank"), py::arg("dp_rank") = 0, py::arg("pp_rank") = 0,
           py::arg("tp_rank") = 0, py::arg("gpu_index") = 0, py::arg("gpu") = "nvml", py::arg("token") = "",
           py::arg("poll_interval_ms") = 200, py::arg("restore_on_signal") = true)
      .def("on_step_begin", [](PyOptimizer& o) { o.c().OnStepBegin(); })
      .def("on_step_end", [](PyOptimizer& o) { o.c().OnStepEnd(); })
      .def("on_instruction_begin", [](PyOptimizer& o, py::handle ins) { o.c().OnInstructionBegin(ParseInstruction(ins)); },
           py::arg("instruction"))
      .def("on_instruction_end", [](PyOptimizer& o, py::handle ins) { o.c().OnInstructionEnd(ParseInstruction(ins)); },
           py::arg("instruction"))
      .def("clock_settled", [](PyOptimizer& o) { return o.c().ClockSettled(); })
      .def("simulate", &PyOptimizer::Simulate, py::arg("instruction"), py::arg("time_at_max_s"),
           py::arg("busy_power_w") = 300.0, py::arg("compute_fraction") = -1.0,
           "Simulated GPUs only: runs modelled work at the current clock; returns its modelled seconds.")
      .def("stats", &PyOptimizer::Stats)
      .def_property_readonly("gpu_name", &PyOptimizer::GpuName)
      .def("close", &PyOptimizer::Close, "Stops the background thread and unlocks the GPU clock.")
      .def("__enter__", [](PyOptimizer& o) -> PyOptimizer& { return o; }, py::return_value_policy::reference)
      .def("__exit__", [](PyOptimizer& o, py::args) { o.Close(); });

  m.def("register_job",
        [](const std::string& server_url, const py::dict& spec, const std::string& token) {
          nlohmann::json body = nlohmann::json::parse(
              py::str(py::module_::import("json").attr("dumps")(spec)).cast<std::string>());
          client::ServerApi api({server_url, token});
          return ToDict(Unwrap(api.Post("/jobs", body)));
        },
        py::arg("server_url"), py::arg("spec"), py::arg("token") = "",
        "POST /jobs: registers a job (see docs/http_api.md for the fields).");
  m.def("job_status",
        [](const std::string& server_url, const std::string& job) {
          client::ServerApi api({server_url, ""});
          return ToDict(Unwrap(api.Get("/jobs/" + job)));
        },
        py::arg("server_url"), py::arg("job"));
}

}  // namespace perseus::python
