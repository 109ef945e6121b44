// NvmlGpu: GpuControl of a local NVIDIA GPU through NVML.
//
// libnvidia-ml.so.1 is loaded at run time with dlopen, so perseus builds and
// runs on machines without a GPU driver; only opening a GPU fails there, with
// "dlopen(libnvidia-ml.so.1): <reason>". Setting clocks needs root (or the
// node daemon perseusd, which runs as root and uses this class).
// AchievedSmClockMhz reads nvmlDeviceGetClockInfo(NVML_CLOCK_SM), an optional
// symbol: without it the call is kUnavailable and everything else works.
// Thread safety: thread-safe (NVML itself is thread-safe).
#pragma once

#include <memory>
#include <string>

#include "runtime/gpu/gpu_control.h"

namespace perseus::runtime {

// The NVML library to load when the caller names none: $PERSEUS_NVML_LIBRARY
// if set and non-empty, else "libnvidia-ml.so.1" (found by the dynamic loader).
std::string DefaultNvmlLibraryPath();

// Number of GPUs NVML sees. `library_path` empty: DefaultNvmlLibraryPath().
Result<int> CountNvmlGpus(const std::string& library_path);

// Opens GPU `index` (NVML numbering). `library_path` empty:
// DefaultNvmlLibraryPath(). Each open GPU keeps the library loaded and NVML
// initialised until it is destroyed.
Result<std::unique_ptr<GpuControl>> OpenNvmlGpu(int index, const std::string& library_path);

}  // namespace perseus::runtime
