// The built-in GPU model: time, power and energy of a computation as a
// function of the GPU SM frequency, for GPUs whose constants are public
// (A100-SXM4, H100-SXM5). It produces the bundled example profiles and drives
// the simulated GPU of emulated ranks; real users bring measured profiles.
// The formulas and their sources are in docs/gpu_model.md.
// Thread safety: all functions are pure.
#pragma once

#include <string>
#include <vector>

#include "perseus/problem.h"
#include "perseus/profile.h"
#include "perseus/status.h"

namespace perseus {

struct GpuSpec {
  std::string name;                            // e.g. "A100-SXM4-40GB"
  std::vector<int> supported_sm_clocks_mhz;    // descending
  int max_sm_clock_mhz = 0;
  int min_sm_clock_mhz = 0;
  double tdp_w = 0;               // default power limit
  double min_power_limit_w = 0;
  double idle_power_w = 0;
  double blocking_power_w = 0;    // drawn while waiting on pipeline communication
};

// Looks a GPU up by full name or alias ("a100", "h100"), case-insensitive.
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

// The modelled time, power and energy of `work` at `sm_clock_mhz`.
OperatingPoint ModelComputation(const GpuSpec& gpu, const KernelWork& work, int sm_clock_mhz);

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
