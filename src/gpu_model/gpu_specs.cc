// The GPUs the built-in model knows, with constants hard-coded from public
// sources. Each constant cites its row in the compiled facts table
// shared/data/gpu/gpu_constants_compiled.csv ("<gpu>,<quantity>"), which is
// not read at run time. docs/gpu_model.md explains every choice.
#include <algorithm>
#include <cctype>

#include "common/strings.h"
#include "perseus/gpu_model.h"

namespace perseus {
namespace {

struct KnownGpu {
  const char* name;
  const char* alias;
  int max_sm_clock_mhz;
  int min_sm_clock_mhz;
  int sm_clock_step_mhz;
  double tdp_w;
  double min_power_limit_w;
  double idle_power_w;
  double blocking_power_w;
};

const KnownGpu kKnownGpus[] = {
    // A100-SXM4-40GB: max_sm_clock 1410, min_sm_clock 210, sm_clock_step 15
    // (81 clocks, as measured in supported_clocks_measured.csv),
    // tdp_default_power_limit 400, min_power_limit 100, idle_power_P0_unloaded
    // 52-53 (midpoint 52.5). Blocking power 83.64 W is the Perseus artifact
    // value (shared/data/README.md); the kareus p2p_blocking_power row says 85.
    {"A100-SXM4-40GB", "a100", 1410, 210, 15, 400, 100, 52.5, 83.64},
    // H100-SXM5-80GB: max_sm_clock 1980, min_sm_clock 345 (inferred, medium
    // confidence), sm_clock_step 15 (assumed from H100 NVL), tdp 700, min
    // power limit 200, idle 72. p2p_blocking_power ~110 W is an ASSUMPTION
    // (low confidence): no public measurement exists.
    {"H100-SXM5-80GB", "h100", 1980, 345, 15, 700, 200, 72, 110},
};

GpuSpec ToSpec(const KnownGpu& k) {
  GpuSpec spec;
  spec.name = k.name;
  for (int f = k.max_sm_clock_mhz; f >= k.min_sm_clock_mhz; f -= k.sm_clock_step_mhz) {
    spec.supported_sm_clocks_mhz.push_back(f);
  }
  spec.max_sm_clock_mhz = k.max_sm_clock_mhz;
  spec.min_sm_clock_mhz = k.min_sm_clock_mhz;
  spec.tdp_w = k.tdp_w;
  spec.min_power_limit_w = k.min_power_limit_w;
  spec.idle_power_w = k.idle_power_w;
  spec.blocking_power_w = k.blocking_power_w;
  return spec;  // dvfs keeps its defaults: the A100 fit (assumed for H100)
}

std::string KnownGpuList() {
  std::string list;
  for (const KnownGpu& k : kKnownGpus) {
    if (!list.empty()) list += ", ";
    list += std::string(k.name) + " (" + k.alias + ")";
  }
  return list;
}

}  // namespace

Result<GpuSpec> FindGpu(const std::string& name) {
  std::string want = ToLower(name);
  if (want.rfind("nvidia ", 0) == 0) want = want.substr(7);  // NVML's product names
  for (const KnownGpu& k : kKnownGpus) {
    if (want == ToLower(k.name) || want == k.alias) return ToSpec(k);
  }
  return Status::NotFound("unknown GPU '" + name + "'; known GPUs: " + KnownGpuList());
}

std::vector<std::string> GpuNames() {
  std::vector<std::string> names;
  for (const KnownGpu& k : kKnownGpus) names.push_back(k.name);
  return names;
}

}  // namespace perseus
