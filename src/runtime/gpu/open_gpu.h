// OpenGpu: how a rank gets its GpuControl, with the measure-only fallback.
//
// The rank either talks to the node daemon perseusd (the normal setup: no
// root needed) or, without a daemon, to NVML directly (needs root to set
// clocks). Opening probes clock control with ResetSmClock(), which is
// harmless at start-up and needs the same permission as setting a clock; when
// the probe is refused (kUnavailable: NVML_ERROR_NO_PERMISSION or
// NVML_ERROR_NOT_SUPPORTED, locally or in the daemon) the GPU comes back
// wrapped in a MeasureOnlyGpu, so the job still runs and reports energy.
// Emulated ranks build a SimulatedGpu directly (simulated_gpu.h).
// Thread safety: OpenGpu may be called from any thread.
#pragma once

#include <memory>
#include <string>

#include "runtime/gpu/gpu_control.h"

namespace perseus::runtime {

struct GpuOpenOptions {
  int index = 0;  // GPU index on this node (NVML numbering)
  // Non-empty: control the GPU through the perseusd listening on this socket.
  // Empty: use NVML in this process.
  std::string daemon_socket;
  // NVML library for the in-process case; empty: DefaultNvmlLibraryPath().
  std::string nvml_library;
  // On a refused probe, return a MeasureOnlyGpu (true) or the error (false).
  bool measure_only_fallback = true;
};

Result<std::unique_ptr<GpuControl>> OpenGpu(const GpuOpenOptions& options);

}  // namespace perseus::runtime
