// The built-in GPU model: time, power and energy of a computation as a
// function of the GPU SM frequency, for GPUs whose constants are public
// (A100-SXM4, H100-SXM5). It produces the bundled example profiles and drives
// the simulated GPU of emulated ranks; real users bring measured profiles.
// The formulas and their sources are in docs/gpu_model.md.
// Thread safety: all functions are pure.
#pragma once

#include <array>
#include <string>
#include <vector>

#include "perseus/problem.h"
#include "perseus/profile.h"
#include "perseus/status.h"

namespace perseus {

// The shape of the voltage/frequency curve and of board power, as fractions so
// that one fit serves several GPUs. V(f) stays at floor_voltage_fraction * V_max
// up to knee_clock_fraction * f_max and rises linearly to V_max at f_max. The
// defaults are fitted to the measured GPT-3 A100 profile (docs/gpu_model.md).
struct DvfsCurve {
  double static_power_fraction = 0.16;   // share of busy power at f_max that is clock-independent
  double knee_clock_fraction = 0.77;     // below knee * f_max the voltage is at its floor
  double floor_voltage_fraction = 0.82;  // V_floor / V_max
};

struct GpuSpec {
  std::string name;                            // e.g. "A100-SXM4-40GB"
  std::vector<int> supported_sm_clocks_mhz;    // descending
  int max_sm_clock_mhz = 0;
  int min_sm_clock_mhz = 0;
  double tdp_w = 0;               // default power limit
  double min_power_limit_w = 0;
  double idle_power_w = 0;
  double blocking_power_w = 0;    // drawn while waiting on pipeline communication
  DvfsCurve dvfs;                 // shape of the V/f and power curve; defaults are the A100 fit
};

// Looks a GPU up by full name or alias ("a100", "h100"), case-insensitive; an
// NVML product name ("NVIDIA A100-SXM4-40GB") finds its model too.
Result<GpuSpec> FindGpu(const std::string& name);
std::vector<std::string> GpuNames();

// What a computation asks of the GPU, measured at the maximum SM clock.
struct KernelWork {
  double time_at_max_s = 0;       // duration at max SM clock
  double compute_bound_fraction = 0.8;  // share of that time that scales with 1/f
  double busy_power_at_max_w = 0; // average board power at max SM clock
};

struct OperatingPoint {
  double time_s = 0;
  double power_w = 0;
  double energy_j = 0;
};

// The modelled time, power and energy of `work` at `sm_clock_mhz`:
//   time(f)  = t_max * (c * f_max / f + (1 - c))
//   power(f) = P_static + (P_busy - P_static) * (f / f_max) * (V(f) / V_max)^2
// with P_busy = busy_power_at_max_w clamped to [idle, TDP] and
// P_static = max(idle, static_power_fraction * P_busy), so idle <= power <= TDP.
// Clocks outside [min_sm_clock_mhz, max_sm_clock_mhz] are clamped into it.
// REQUIRES: gpu.max_sm_clock_mhz > 0 (otherwise all fields are 0).
OperatingPoint ModelComputation(const GpuSpec& gpu, const KernelWork& work, int sm_clock_mhz);

// Compute-bound fractions fitted to the measured GPT-3 A100 profile; good
// defaults for transformer stages (docs/gpu_model.md).
inline constexpr double kTransformerForwardComputeFraction = 0.81;
inline constexpr double kTransformerBackwardComputeFraction = 0.75;

// What the caller calls KernelWork's fields, for messages (the Python API
// says busy_power_w and compute_fraction).
struct KernelWorkNames {
  const char* time_at_max_s = "time_at_max_s";
  const char* compute_bound_fraction = "compute_bound_fraction";
  const char* busy_power_at_max_w = "busy_power_at_max_w";
};
// Checks that `work` has a positive, finite time and power and a
// compute-bound fraction in [0, 1]; errors name `where` and the field.
Status ValidateKernelWork(const KernelWork& work, const std::string& where, const KernelWorkNames& names = {});

// A modelled profile: for every stage, forward ([0]) and backward ([1]) work at
// every supported clock of `gpu` from the maximum down to `min_clock_mhz`
// (inclusive), and the backward's input- and weight-gradient halves (half its
// time and energy each, for zero-bubble schedules). Errors name the stage and field, or the out-of-range clock.
Result<Profile> GenerateProfile(const GpuSpec& gpu, const std::vector<std::array<KernelWork, 2>>& stages,
                                int min_clock_mhz);

// A bundled example: a modelled profile and the job it belongs to.
struct Example {
  std::string name;
  std::string description;
  Profile profile;
  ProblemSpec spec;
};

// "gpt3-xl-a100", "gpt3-175b-a100", ... (see ExampleNames()).
Result<Example> FindExample(const std::string& name);
std::vector<std::string> ExampleNames();

}  // namespace perseus
