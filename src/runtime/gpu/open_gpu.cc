// OpenGpu: pick the backend, probe clock control, fall back to measure-only.
#include "runtime/gpu/open_gpu.h"

#include "runtime/gpu/daemon_gpu.h"
#include "runtime/gpu/measure_only_gpu.h"
#include "runtime/gpu/nvml_gpu.h"

namespace perseus::runtime {

Result<std::unique_ptr<GpuControl>> OpenGpu(const GpuOpenOptions& options) {
  Result<std::unique_ptr<GpuControl>> gpu = options.daemon_socket.empty()
                                                ? OpenNvmlGpu(options.index, options.nvml_library)
                                                : OpenDaemonGpu(options.daemon_socket, options.index);
  if (!gpu.ok()) return gpu.status();
  Status probe = (*gpu)->ResetSmClock();
  if (probe.ok()) return gpu;
  if (probe.code() != Status::Code::kUnavailable || !options.measure_only_fallback) return probe;
  std::string label = "GPU " + std::to_string(options.index);
  return std::unique_ptr<GpuControl>(new MeasureOnlyGpu(std::move(gpu).value(), probe.message(), label));
}

}  // namespace perseus::runtime
