// perseus.RankClient: the rank client for a training loop (perseus.Optimizer
// is its deprecated alias, defined in perseus/__init__.py), and
// perseus.register_job / job_status / carbon_status for launchers.
//
// Warnings: after OnStepEnd (and in stats() and close()) the binding compares
// the client's WarningCount() with the count it last saw (one integer
// compare per step); when it changed, it takes the new warnings and hands
// them to the module's `_warning_sink` (perseus/__init__.py: the `warnings`
// module with PerseusWarning, and the "perseus" logger).
#include <pybind11/stl.h>

#include <cmath>
#include <cstdio>

#include "bindings.h"
#include "common/job_id.h"
#include "common/json_fields.h"
#include "runtime/client/open_rank_gpu.h"
#include "runtime/client/rank_client.h"
#include "runtime/protocol/job_requests.h"
#include "runtime/protocol/job_spec.h"
#include "runtime/gpu/simulated_gpu.h"

namespace perseus::python {

namespace {

using client::RankClient;

// The work simulate() and perseus.torch.SimulatedWork describe, checked with
// their names for the fields; compute_fraction -1 is the model's transformer
// figure for `ins`.
KernelWork PythonKernelWork(double time_at_max_s, double busy_power_w, double compute_fraction, Instruction ins,
                            const std::string& where) {
  if (compute_fraction == -1) {
    compute_fraction = ins == Instruction::kForward ? kTransformerForwardComputeFraction
                                                    : kTransformerBackwardComputeFraction;
  }
  const KernelWork work{time_at_max_s, compute_fraction, busy_power_w};
  Check(ValidateKernelWork(work, where, KernelWorkNames{"time_at_max_s", "compute_fraction", "busy_power_w"}));
  return work;
}

// The _perseus module (lives as long as the interpreter); set by BindClient.
PyObject* g_module = nullptr;

// The instruction a hook names, without allocating (the hooks' hot path);
// every name perseus knows (zero-bubble schedules hook backward_input and
// backward_weight too).
Instruction ParseInstruction(py::handle name) {
  Py_ssize_t size = 0;
  const char* text = PyUnicode_Check(name.ptr()) ? PyUnicode_AsUTF8AndSize(name.ptr(), &size) : nullptr;
  if (text != nullptr) {
    if (std::optional<Instruction> ins = InstructionFromName(std::string_view(text, static_cast<size_t>(size)))) {
      return *ins;
    }
  }
  PyErr_Clear();
  if (text == nullptr) throw py::value_error("instruction: expected a str, got " + std::string(py::str(py::repr(name))));
  throw py::value_error("instruction: " + perseus::ParseInstruction(std::string(text, static_cast<size_t>(size))).status().message());
}

// Hands warning texts to perseus._perseus._warning_sink, or to Python's
// warnings module (RuntimeWarning) when no sink is installed.
void EmitWarnings(const std::vector<std::string>& texts) {
  py::object sink = py::none();
  if (g_module != nullptr && PyObject_HasAttrString(g_module, "_warning_sink")) {
    sink = py::handle(g_module).attr("_warning_sink");
  }
  for (const std::string& text : texts) {
    if (!sink.is_none()) {
      sink(text);
    } else if (PyErr_WarnEx(PyExc_RuntimeWarning, ("perseus: " + text).c_str(), 1) != 0) {
      throw py::error_already_set();
    }
  }
}

// The server's address, checked before any request: a bad URL or missing CA
// bundle is a ValueError naming it (cpp-httplib would throw its own words).
client::ServerAddress CheckedAddress(const std::string& url, const std::string& token, const std::string& ca_cert) {
  client::ServerAddress address{url, token, ca_cert};
  if (Status st = client::CheckServerAddress(address, "server_url", "ca_cert"); !st.ok()) throw py::value_error(st.message());
  return address;
}

class PyRankClient {
 public:
  PyRankClient(const std::string& server_url, const std::string& job, int rank, int dp_rank, int pp_rank, int tp_rank,
               int gpu_index, const std::string& gpu, const std::string& token, int poll_interval_ms,
               bool restore_on_signal, bool framework_durations, const std::string& ca_cert) {
    client::RankClientOptions o;
    o.server = CheckedAddress(server_url, token, ca_cert);  // errors name server_url, token, ca_cert
    gpu_ = Unwrap(client::OpenRankGpu(gpu, gpu_index, nullptr));
    o.identity = {job, rank, dp_rank, pp_rank, tp_rank};
    o.poll_interval_ms = poll_interval_ms;
    o.restore_on_signal = restore_on_signal;
    o.warnings_to_stderr = false;  // EmitWarnings hands each to Python's warnings module, which shows it
    o.framework_durations = framework_durations;
    framework_durations_ = framework_durations;
    client_ = Unwrap(RankClient::Create(o, gpu_));
  }
  RankClient& c() {
    if (!client_) throw std::runtime_error("perseus.RankClient is closed");
    return *client_;
  }
  void StepEnd() {
    c().OnStepEnd();
    if (client_->WarningCount() != warnings_seen_) TakeAndEmit();
  }
  // New warnings since the last emission go to the sink. Not on the hot path.
  void TakeAndEmit() {
    if (!client_) return;
    warnings_seen_ = client_->WarningCount();
    std::vector<std::string> texts = client_->TakeWarnings();
    if (!texts.empty()) EmitWarnings(texts);
  }
  std::vector<std::string> TakeWarnings() {
    warnings_seen_ = c().WarningCount();
    return client_->TakeWarnings();
  }
  // Dropped without close(): the client stops as close() would, and warnings
  // Python has not been handed yet go to stderr (a destructor calls no Python).
  ~PyRankClient() {
    if (!client_) return;
    client_->Close();
    for (const std::string& text : client_->TakeWarnings()) std::fprintf(stderr, "perseus: warning: %s\n", text.c_str());
  }
  PyRankClient(const PyRankClient&) = delete;
  PyRankClient& operator=(const PyRankClient&) = delete;
  void Close() {
    if (!client_) return;
    {
      py::gil_scoped_release release;
      client_->Close();
    }
    std::vector<std::string> texts = client_->TakeWarnings();
    client_.reset();
    if (!texts.empty()) EmitWarnings(texts);
  }
  double Simulate(py::handle instruction, double time_at_max_s, double busy_power_w, double compute_fraction) {
    Instruction ins = ParseInstruction(instruction);
    auto* sim = dynamic_cast<runtime::SimulatedGpu*>(gpu_.get());
    if (sim == nullptr) throw py::value_error("simulate: the GPU is not simulated (gpu='simulated:<name>')");
    return sim->Run(PythonKernelWork(time_at_max_s, busy_power_w, compute_fraction, ins, "simulate")).time_s;
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
    d["measurements_sent"] = s.windows_sent;  // the name before windowed profiling
    d["iterations_sent"] = s.iterations_sent;
    d["iterations_dropped"] = s.iterations_dropped;
    d["clock_changes"] = s.clock_changes;
    d["requested_clock_mhz"] = s.requested_clock_mhz;
    d["applied_clock_mhz"] = s.applied_clock_mhz;
    d["achieved_clock_mhz"] = s.achieved_clock_mhz;
    d["profiling_window"] = s.profiling_window;
    d["windows_sent"] = s.windows_sent;
    d["warnings"] = s.warnings;
    d["paused"] = s.paused;
    d["pauses"] = s.pauses;
    d["paused_s"] = s.paused_s;
    d["last_error"] = s.last_error;
    if (s.warnings != warnings_seen_) TakeAndEmit();
    return d;
  }
  py::object PauseRequested() {
    switch (c().PauseRequested()) {
      case RankClient::kHoldPause: return py::str("hold");
      case RankClient::kReleasePause: return py::str("release");
      case RankClient::kNoPause: break;
    }
    return py::none();
  }
  double WaitWhilePaused(double max_wait_s) {
    c();  // closed: an error
    // A close() from another thread ends the wait and drops the client; this
    // copy keeps it alive until the wait has returned.
    std::shared_ptr<RankClient> client = client_;
    py::gil_scoped_release release;  // other Python threads run while the rank waits
    return client->WaitWhilePaused(max_wait_s);
  }
  std::string GpuName() { return gpu_->Name(); }
  bool framework_durations() const { return framework_durations_; }
  bool simulated() const { return dynamic_cast<runtime::SimulatedGpu*>(gpu_.get()) != nullptr; }

 private:
  std::shared_ptr<runtime::GpuControl> gpu_;
  std::shared_ptr<RankClient> client_;
  bool framework_durations_ = false;
  int64_t warnings_seen_ = 0;
};

// The job's path on the server ("/jobs/ID"); a bad id is a ValueError before any request.
std::string JobPath(const std::string& job) {
  if (!IsValidJobId(job)) throw py::value_error("job: expected " + std::string(kJobIdRule) + ", got '" + job + "'");
  return "/jobs/" + job;
}

// REQUIRES: `j` is an object (ServerApi's replies are).
py::dict ToDict(const nlohmann::json& j) { return py::module_::import("json").attr("loads")(j.dump()); }

// The reply of one request to the server, as a dict. The request runs
// without the GIL: other Python threads (a data loader, a metrics server)
// run while it waits on the network, up to its timeouts.
template <typename Request>
py::dict Reply(Request request) {
  Result<nlohmann::json> reply = Status::Internal("not sent");
  {
    py::gil_scoped_release release;
    reply = request();
  }
  return ToDict(Unwrap(std::move(reply)));
}

// A Python value as the JSON of a request body, field by field: NaN and
// infinity (which JSON cannot carry), keys that are not strings and values
// JSON has no place for are ValueErrors naming the field ("job spec: field
// 'carbon.slowdown_budget': expected a finite number, got nan").
nlohmann::json PyToJson(py::handle value, const std::string& path, const std::string& what, int depth = 0) {
  auto refuse = [&](const std::string& problem) -> py::value_error {
    return py::value_error(what + ": " + FieldError(path.empty() ? "(top level)" : path, problem).message());
  };
  auto type_name = [&] { return py::str(py::type::of(value).attr("__name__")).cast<std::string>(); };
  constexpr int kMaxDepth = 64;  // a spec is a few levels deep; a circular one would overflow the stack
  if (depth > kMaxDepth) throw refuse("nested more than 64 levels deep (a container that contains itself?)");
  if (value.is_none()) return nullptr;
  if (py::isinstance<py::bool_>(value)) return value.cast<bool>();
  if (py::isinstance<py::str>(value)) return value.cast<std::string>();
  // numpy and torch scalars: a bool dtype is a bool; an integer one an int;
  // anything else goes by float() below (their __index__ would truncate a
  // float array, and int() of it would too).
  if (py::hasattr(value, "dtype") && py::hasattr(value.attr("dtype"), "kind")) {
    const std::string kind = py::str(value.attr("dtype").attr("kind"));
    if (kind == "b") {
      try {
        return py::bool_(py::reinterpret_borrow<py::object>(value)).cast<bool>();
      } catch (const py::error_already_set&) {
        throw refuse("cannot be sent as JSON (a " + type_name() +
                     " of more than one value)");
      }
    }
  }
  if (py::isinstance<py::dict>(value)) {
    nlohmann::json out = nlohmann::json::object();
    for (auto [key, item] : py::reinterpret_borrow<py::dict>(value)) {
      if (!py::isinstance<py::str>(key)) throw refuse("keys must be strings, got " + py::repr(key).cast<std::string>());
      const std::string name = key.cast<std::string>();
      out[name] = PyToJson(item, FieldPath(path, name), what, depth + 1);
    }
    return out;
  }
  if (py::isinstance<py::list>(value) || py::isinstance<py::tuple>(value)) {
    nlohmann::json out = nlohmann::json::array();
    size_t i = 0;
    for (py::handle item : value) out.push_back(PyToJson(item, FieldPath(path, i++), what, depth + 1));
    return out;
  }
  if (!py::isinstance<py::float_>(value)) {
    // operator.index(): int and integer scalars; a TypeError for anything else.
    py::object index = py::reinterpret_steal<py::object>(PyNumber_Index(value.ptr()));
    if (index) {
      try {
        return index.cast<int64_t>();
      } catch (const py::cast_error&) {
        throw refuse("integer out of range, got " + py::repr(value).cast<std::string>());
      }
    }
    PyErr_Clear();
  }
  if (py::isinstance<py::float_>(value) || py::hasattr(value, "__float__")) {  // float, numpy and torch floats
    py::object as_float = py::reinterpret_steal<py::object>(PyNumber_Float(value.ptr()));
    if (!as_float) {
      PyErr_Clear();
      throw refuse("cannot be sent as JSON (a " + type_name() +
                   " that is not one number)");
    }
    const double x = as_float.cast<double>();
    if (!std::isfinite(x)) throw refuse("expected a finite number, got " + py::repr(value).cast<std::string>());
    return x;
  }
  throw refuse("cannot be sent as JSON (a " + type_name() + ")");
}

enum class JobRequest { kGet, kPost, kDelete };

// perseus.<name>(server_url, job, token="", ca_cert=""): one request on the
// job's path + `suffix` (a POST sends {}), its reply as a dict.
void DefJobRequest(py::module_& m, const char* name, JobRequest method, std::string suffix, const char* doc) {
  m.def(
      name,
      [method, suffix](const std::string& server_url, const std::string& job, const std::string& token,
                       const std::string& ca_cert) {
        const std::string path = JobPath(job) + suffix;
        client::ServerApi api(CheckedAddress(server_url, token, ca_cert));
        switch (method) {
          case JobRequest::kPost: return Reply([&] { return api.Post(path, nlohmann::json::object()); });
          case JobRequest::kDelete: return Reply([&] { return api.Delete(path); });
          case JobRequest::kGet: break;
        }
        return Reply([&] { return api.Get(path); });
      },
      py::arg("server_url"), py::arg("job"), py::arg("token") = "", py::arg("ca_cert") = "", doc);
}

constexpr const char* kRankClientDoc = R"doc(
The perseus rank client. Wrap every forward and backward of the training loop
(perseus.torch.PipelineHooks does it for PyTorch):

    client = perseus.RankClient("http://127.0.0.1:7787", "my-job", rank, dp_rank, pp_rank, tp_rank,
                                gpu_index, gpu="nvml")
    client.on_step_begin()
    client.on_instruction_begin("forward"); forward(); client.on_instruction_end("forward")
    ...
    client.on_step_end()   # before gradient synchronisation

gpu: "nvml", "daemon:/run/perseusd.sock" or "simulated:A100[:realism]" (realism: "ideal",
"default", "default,noise=2", ...; docs/gpu_control.md). The hooks never wait on the network;
plans arrive on a background thread and apply from the next step. An https server_url is
verified against ca_cert (a PEM CA bundle; default $PERSEUS_CA_CERT, else the system's CAs).

framework_durations=True: the framework measures each computation's duration itself (CUDA
events) and passes them with record_durations(); needed on asynchronous GPUs, where the hooks'
timestamps measure kernel launches.

Problems (unknown job or rank, a loop that runs another order than the declared schedule,
clock-set errors, an achieved clock other than the one locked, the server's warnings about
the job) are raised as perseus.PerseusWarning and logged to the "perseus" logger, checked at
every on_step_end (one integer compare).
)doc";

}  // namespace

void BindClient(py::module_& m) {
  g_module = m.ptr();
  py::class_<PyRankClient>(m, "RankClient", kRankClientDoc)
      .def(py::init<const std::string&, const std::string&, int, int, int, int, int, const std::string&,
                    const std::string&, int, bool, bool, const std::string&>(),
           py::arg("server_url"), py::arg("job"), py::arg("rank"), py::arg("dp_rank") = 0, py::arg("pp_rank") = 0,
           py::arg("tp_rank") = 0, py::arg("gpu_index") = 0, py::arg("gpu") = "nvml", py::arg("token") = "",
           py::arg("poll_interval_ms") = 200, py::arg("restore_on_signal") = true,
           py::arg("framework_durations") = false, py::arg("ca_cert") = "")
      .def("on_step_begin", [](PyRankClient& o) { o.c().OnStepBegin(); },
           "Call at the start of every training step (iteration), before the first forward.")
      .def("on_step_end", &PyRankClient::StepEnd,
           "Call after the step's last computation, before gradient synchronisation; emits new warnings.")
      .def("on_instruction_begin",
           [](PyRankClient& o, py::handle ins) { o.c().OnInstructionBegin(ParseInstruction(ins)); },
           py::arg("instruction"), "Call before each 'forward' or 'backward': sets the plan's SM clock for it.")
      .def("on_instruction_end", [](PyRankClient& o, py::handle ins) { o.c().OnInstructionEnd(ParseInstruction(ins)); },
           py::arg("instruction"), "Call after each 'forward' or 'backward' (the same instruction as the begin).")
      .def("record_durations",
           [](PyRankClient& o, int64_t iteration, const std::vector<double>& seconds) {
             Check(o.c().RecordDurations(iteration, seconds));
           },
           py::arg("iteration"), py::arg("seconds"),
           "With framework_durations=True: the durations (s) of iteration `iteration`'s computations in\n"
           "hook order, measured by the framework (CUDA events), possibly a few iterations later. Never blocks.\n"
           "ValueError for a negative iteration or a negative, NaN or infinite duration ([] is fine). A count\n"
           "other than the hooks saw is warned about when the profiling window is reported.")
      .def("sync_wanted_at_next_step", [](PyRankClient& o) { return o.c().SyncWantedAtNextStep(); },
           "True when the next step starts or ends a profiling window: synchronise the device\n"
           "(torch.cuda.synchronize()) before on_step_begin so the window covers the GPU's work.")
      .def("take_warnings", &PyRankClient::TakeWarnings,
           "The warnings raised since the last call (they are then not emitted as PerseusWarning).")
      .def_property_readonly("warning_count", [](PyRankClient& o) { return o.c().WarningCount(); },
                             "Warnings raised so far.")
      .def_property_readonly("framework_durations", &PyRankClient::framework_durations,
                             "True when the framework passes durations with record_durations().")
      .def_property_readonly("simulated", &PyRankClient::simulated, "True for gpu='simulated:...'.")
      .def("clock_settled", [](PyRankClient& o) { return o.c().ClockSettled(); },
           "True once the GPU's achieved clock matches the last one set.")
      .def("simulate", &PyRankClient::Simulate, py::arg("instruction"), py::arg("time_at_max_s"),
           py::arg("busy_power_w") = 300.0, py::arg("compute_fraction") = -1.0,
           "Simulated GPUs only: starts modelled work now at the clock in effect; returns its modelled seconds.")
      .def("pause_requested", &PyRankClient::PauseRequested,
           "None while the job runs; 'hold' when the carbon policy paused it and the ranks should wait\n"
           "(wait_while_paused()); 'release' when the job should stop (checkpoint and exit; start it again\n"
           "once `python3 -m perseus.launch wait-resume` returns). docs/carbon.md, \"Pausing in the server\".")
      .def("wait_while_paused", &PyRankClient::WaitWhilePaused, py::arg("max_wait_s") = 1e18,
           "At an iteration boundary, before on_step_begin: while the job is paused ('hold'), holds the GPU's\n"
           "lowest clock and waits until the server resumes it, the client is closed, max_wait_s passes or the\n"
           "pause's own limit runs out (a server that went away). Returns the seconds waited (0: not paused).")
      .def("stats", &PyRankClient::Stats,
           "Counters and state of the client as a dict (registered, plan_index, iterations, iterations_sent,\n"
           "iterations_dropped, schedule_mismatches, requested/applied/achieved_clock_mhz, warnings, paused,\n"
           "pauses, paused_s, last_error, ...).")
      .def_property_readonly("gpu_name", &PyRankClient::GpuName, "The GPU's name as NVML (or the simulation) reports it.")
      .def("close", &PyRankClient::Close, "Stops the background thread and unlocks the GPU clock.")
      .def("__enter__", [](PyRankClient& o) -> PyRankClient& { return o; }, py::return_value_policy::reference,
           "Returns the client; the with-block's end closes it.")
      .def("__exit__", [](PyRankClient& o, py::args) { o.Close(); }, "Closes the client.");

  m.def(
      "_validate_simulated_work",
      [](double time_at_max_s, double busy_power_w, double compute_fraction) {
        PythonKernelWork(time_at_max_s, busy_power_w, compute_fraction, Instruction::kForward, "SimulatedWork");
      },
      py::arg("time_at_max_s"), py::arg("busy_power_w"), py::arg("compute_fraction"),
      "Raises ValueError naming the field unless simulate() would take this work (perseus.torch.SimulatedWork).");
  m.def("register_job",
        [](const std::string& server_url, const py::dict& spec, const std::string& token, const std::string& ca_cert) {
          const nlohmann::json body = PyToJson(spec, "", "job spec");
          // The server's own parser: a bad field is a ValueError naming it, before anything is sent.
          Result<protocol::JobSpec> parsed = protocol::ParseJobSpec(body);
          if (!parsed.ok()) throw py::value_error("job spec: " + parsed.status().message());
          client::ServerApi api(CheckedAddress(server_url, token, ca_cert));
          return Reply([&] { return api.Post("/jobs", body); });
        },
        py::arg("server_url"), py::arg("spec"), py::arg("token") = "", py::arg("ca_cert") = "",
        "POST /jobs: registers a job (see docs/http_api.md for the fields). A spec the server would\n"
        "refuse raises ValueError naming the field, without contacting the server.");
  m.def("declare_straggler",
        [](const std::string& server_url, const std::string& job, int pipeline, double slowdown,
           const std::string& token, const std::string& ca_cert) {
          const nlohmann::json body = protocol::StragglerDeclarationToJson({pipeline, slowdown});
          Result<protocol::StragglerDeclaration> checked = protocol::ParseStragglerDeclaration(body);
          if (!checked.ok()) throw py::value_error(checked.status().message());
          client::ServerApi api(CheckedAddress(server_url, token, ca_cert));
          const std::string path = JobPath(job) + "/stragglers";
          return Reply([&] { return api.Post(path, body); });
        },
        py::arg("server_url"), py::arg("job"), py::arg("pipeline"), py::arg("slowdown"), py::arg("token") = "",
        py::arg("ca_cert") = "",
        "POST /jobs/{job}/stragglers: pipeline `pipeline` runs `slowdown` (>= 1) times slower; the other\n"
        "pipelines slow down to match. Returns the job's stragglers.");
  m.def("set_power_cap",
        [](const std::string& server_url, const std::string& job, double average_w, double peak_w, double window_s,
           const std::string& token, const std::string& ca_cert) {
          const nlohmann::json body = protocol::PowerCapRequestToJson({average_w, peak_w, window_s});
          Result<protocol::PowerCapRequest> checked = protocol::ParsePowerCapRequest(body, "");
          if (!checked.ok()) throw py::value_error(checked.status().message());
          client::ServerApi api(CheckedAddress(server_url, token, ca_cert));
          const std::string path = JobPath(job) + "/power-cap";
          return Reply([&] { return api.Put(path, body); });
        },
        py::arg("server_url"), py::arg("job"), py::arg("average_w"), py::arg("peak_w") = 0.0, py::arg("window_s") = 60.0,
        py::arg("token") = "", py::arg("ca_cert") = "",
        "PUT /jobs/{job}/power-cap: keep the job's GPUs within `average_w` watts on average over each\n"
        "`window_s` window (and never a setting predicted above `peak_w`, if given); docs/power.md.\n"
        "Returns {'power_cap': {...}}.");
  DefJobRequest(m, "clear_power_cap", JobRequest::kDelete, "/power-cap",
                "DELETE /jobs/{job}/power-cap: lift the cap (also the one the job registered with).");
  m.def("set_server_power_cap",
        [](const std::string& server_url, double average_w, double window_s, const std::string& token,
           const std::string& ca_cert) {
          const nlohmann::json body = protocol::PowerCapRequestToJson({average_w, 0, window_s});
          Result<protocol::PowerCapRequest> checked = protocol::ParsePowerCapRequest(body, "");
          if (!checked.ok()) throw py::value_error(checked.status().message());
          client::ServerApi api(CheckedAddress(server_url, token, ca_cert));
          return Reply([&] { return api.Put("/power-cap", body); });
        },
        py::arg("server_url"), py::arg("average_w"), py::arg("window_s") = 60.0, py::arg("token") = "",
        py::arg("ca_cert") = "",
        "PUT /power-cap: keep all the server's running jobs within `average_w` watts on average over each\n"
        "`window_s` window, split among them for the most throughput (docs/power.md). Returns\n"
        "{'power_cap': {'cap': ..., 'jobs': [{'id', 'share_w'}], 'shared_w', 'feasible', 'error'}}.");
  m.def("clear_server_power_cap",
        [](const std::string& server_url, const std::string& token, const std::string& ca_cert) {
          client::ServerApi api(CheckedAddress(server_url, token, ca_cert));
          return Reply([&] { return api.Delete("/power-cap"); });
        },
        py::arg("server_url"), py::arg("token") = "", py::arg("ca_cert") = "",
        "DELETE /power-cap: lift the server's cap (the jobs' own caps stay).");
  m.def("server_power_cap",
        [](const std::string& server_url, const std::string& token, const std::string& ca_cert) {
          client::ServerApi api(CheckedAddress(server_url, token, ca_cert));
          return Reply([&] { return api.Get("/power-cap"); });
        },
        py::arg("server_url"), py::arg("token") = "", py::arg("ca_cert") = "",
        "GET /power-cap: the server's cap and each running job's share.");
  m.def("clear_straggler",
        [](const std::string& server_url, const std::string& job, int pipeline, const std::string& token,
           const std::string& ca_cert) {
          if (pipeline < 0) throw py::value_error("pipeline: expected an integer >= 0, got " + std::to_string(pipeline));
          client::ServerApi api(CheckedAddress(server_url, token, ca_cert));
          const std::string path = JobPath(job) + "/stragglers/" + std::to_string(pipeline);
          return Reply([&] { return api.Delete(path); });
        },
        py::arg("server_url"), py::arg("job"), py::arg("pipeline"), py::arg("token") = "", py::arg("ca_cert") = "",
        "DELETE /jobs/{job}/stragglers/{pipeline}: the pipeline is no longer a straggler.");
  DefJobRequest(m, "finish_job", JobRequest::kPost, "/finish",
                "POST /jobs/{job}/finish: the job is done; its ranks unlock their clocks.");
  DefJobRequest(m, "job_status", JobRequest::kGet, "",
                "GET /jobs/{job}: the job's summary as a dict (phase, pipelines, frontier, warnings, ...).");
  DefJobRequest(m, "carbon_status", JobRequest::kGet, "/carbon",
                "GET /jobs/{job}/carbon: the carbon policy's state as a dict (paused, plan_index, intensity, ...).");
}

}  // namespace perseus::python
