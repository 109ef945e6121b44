// OpenRankGpu: the GpuControl a rank asks for by name.
//
//   "simulated:<gpu>[:<realism>]"
//                         the built-in GPU model ("simulated:A100", "simulated:h100"),
//                         driven by `now_s` (a virtual clock for emulations; the
//                         steady clock when empty), as realistic as <realism>
//                         (ParseGpuRealism: "simulated:A100:default,noise=2"); without
//                         one, $PERSEUS_SIM_REALISM if set and non-empty, else ideal
//   "nvml"                NVML in this process (needs root to set clocks)
//   "daemon:<socket>"     the node daemon perseusd at <socket>
// NVML and the daemon fall back to measure-only when clock control is denied
// (open_gpu.h). Thread safety: may be called from any thread.
#pragma once

#include <functional>
#include <memory>
#include <string>

#include "runtime/gpu/gpu_control.h"

namespace perseus::client {

Result<std::shared_ptr<runtime::GpuControl>> OpenRankGpu(const std::string& spec, int gpu_index,
                                                         std::function<double()> now_s);

}  // namespace perseus::client
