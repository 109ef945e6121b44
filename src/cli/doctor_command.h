// `perseus doctor`: is this machine's GPU ready for perseus?
//
//   perseus doctor [--gpu INDEX] [--nvml-library PATH] [--daemon SOCKET] [--json]
//
// Checks, one line each with a verdict (ok, warn, fail, skip) and a reason:
// the NVML library loads, the GPUs NVML sees, the supported SM clocks, that a
// clock can be locked (as root, or through perseusd with --daemon), that the
// GPU runs at the locked clock, how long a clock switch takes to show in the
// achieved clock, the energy counter's update period and resolution, the
// power reading, and finally that the clock is unlocked again (always, even
// after a failed check). Takes about 2-5 s. docs/real_gpu.md explains each.
//
// Exit code 0 when no check failed, 1 otherwise, 2 for bad usage. GPU access
// goes through src/runtime/gpu (NvmlGpu, DaemonGpu); nothing here calls NVML.
#pragma once

#include <iosfwd>
#include <string>

namespace CLI {
class App;
}

namespace perseus::cli {

struct DoctorArgs {
  int gpu = 0;                 // NVML index
  std::string nvml_library;    // empty: DefaultNvmlLibraryPath()
  std::string daemon_socket;   // non-empty: set clocks through the perseusd on this socket
  bool json = false;           // print a machine-readable report (schema perseus.doctor/v1)
};

// Runs every check on the GPU, prints the report to `out` and returns the exit code.
int RunDoctor(const DoctorArgs& args, std::ostream& out);
void RegisterDoctorCommand(CLI::App& app);

}  // namespace perseus::cli
