#include "runtime/client/open_rank_gpu.h"

#include <chrono>
#include <cstdlib>

#include "runtime/gpu/open_gpu.h"
#include "runtime/gpu/realism.h"
#include "runtime/gpu/simulated_gpu.h"

namespace perseus::client {
namespace {

// "A100" or "A100:<realism>" -> the GPU name and its realism.
Result<runtime::GpuRealism> SimulatedRealism(const std::string& spec, std::string& gpu_name) {
  const size_t colon = spec.find(':');
  gpu_name = spec.substr(0, colon);
  if (colon != std::string::npos) {
    Result<runtime::GpuRealism> r = runtime::ParseGpuRealism(spec.substr(colon + 1));
    if (!r.ok()) return r.status().WithContext("gpu 'simulated:" + spec + "'");
    return r;
  }
  const char* env = std::getenv("PERSEUS_SIM_REALISM");
  if (env == nullptr || env[0] == '\0') return runtime::IdealRealism();
  Result<runtime::GpuRealism> r = runtime::ParseGpuRealism(env);
  if (!r.ok()) return r.status().WithContext("PERSEUS_SIM_REALISM");
  return r;
}

}  // namespace

Result<std::shared_ptr<runtime::GpuControl>> OpenRankGpu(const std::string& spec, int gpu_index,
                                                         std::function<double()> now_s) {
  if (gpu_index < 0) return Status::InvalidArgument("gpu_index: expected >= 0, got " + std::to_string(gpu_index));
  const std::string simulated = "simulated:", daemon = "daemon:";
  if (spec.rfind(simulated, 0) == 0) {
    if (!now_s) now_s = runtime::SteadySeconds();
    std::string gpu_name;
    Result<runtime::GpuRealism> realism = SimulatedRealism(spec.substr(simulated.size()), gpu_name);
    if (!realism.ok()) return realism.status();
    auto gpu = runtime::SimulatedGpu::Create(gpu_name, gpu_index, std::move(now_s), *realism);
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
