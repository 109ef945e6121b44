#include "runtime/client/open_rank_gpu.h"

#include <chrono>

#include "runtime/gpu/open_gpu.h"
#include "runtime/gpu/simulated_gpu.h"

namespace perseus::client {

Result<std::shared_ptr<runtime::GpuControl>> OpenRankGpu(const std::string& spec, int gpu_index,
                                                         std::function<double()> now_s) {
  if (gpu_index < 0) return Status::InvalidArgument("gpu_index: expected >= 0, got " + std::to_string(gpu_index));
  const std::string simulated = "simulated:", daemon = "daemon:";
  if (spec.rfind(simulated, 0) == 0) {
    if (!now_s) {
      now_s = [] {
        return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
      };
    }
    auto gpu = runtime::SimulatedGpu::Create(spec.substr(simulated.size()), gpu_index, std::move(now_s));
    if (!gpu.ok()) return gpu.status();
    return std::shared_ptr<runtime::GpuControl>(std::move(*gpu));
  }
  runtime::GpuOpenOptions options;
  options.index = gpu_index;
  if (spec.rfind(daemon, 0) == 0) {
    options.daemon_socket = spec.substr(daemon.size());
    if (options.daemon_socket.empty()) return Status::InvalidArgument("gpu: 'daemon:' needs a socket path");
  } else if (spec != "nvml") {
    return Status::InvalidArgument("gpu: expected 'simulated:<name>', 'nvml' or 'daemon:<socket>', got '" + spec + "'");
  }
  auto gpu = runtime::OpenGpu(options);
  if (!gpu.ok()) return gpu.status();
  return std::shared_ptr<runtime::GpuControl>(std::move(*gpu));
}

}  // namespace perseus::client
