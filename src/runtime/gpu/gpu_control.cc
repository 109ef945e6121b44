// The supported-clock check shared by every GpuControl.
#include "runtime/gpu/gpu_control.h"

#include <algorithm>
#include <chrono>
#include <cstdlib>

namespace perseus::runtime {

SecondsClock SteadySeconds() {
  return [] { return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count(); };
}

Status CheckSupportedSmClock(const std::vector<int>& supported_mhz, int sm_clock_mhz, const std::string& gpu_label) {
  if (std::find(supported_mhz.begin(), supported_mhz.end(), sm_clock_mhz) != supported_mhz.end()) return Status::Ok();
  std::string msg = gpu_label + ": " + std::to_string(sm_clock_mhz) + " MHz is not a supported SM clock";
  if (supported_mhz.empty()) return Status::InvalidArgument(msg + " (the GPU reports no supported clocks)");
  auto nearest = std::min_element(supported_mhz.begin(), supported_mhz.end(), [&](int a, int b) {
    return std::abs(a - sm_clock_mhz) < std::abs(b - sm_clock_mhz);
  });
  auto [lo, hi] = std::minmax_element(supported_mhz.begin(), supported_mhz.end());
  return Status::InvalidArgument(msg + " (nearest: " + std::to_string(*nearest) + " MHz; supported: " +
                                 std::to_string(*lo) + "-" + std::to_string(*hi) + " MHz)");
}

}  // namespace perseus::runtime
