// The DVFS model: time, power and energy of a computation as a function of
// the SM clock, and modelled profiles built from it. The formulas are stated
// in include/perseus/gpu_model.h and derived in docs/gpu_model.md.
#include <algorithm>
#include <cmath>
#include <functional>

#include "perseus/gpu_model.h"

namespace perseus {
namespace {

// V(f) / V_max: flat at the floor up to the knee, then linear up to 1 at f_max.
double RelativeVoltage(const DvfsCurve& curve, double clock_fraction) {
  const double knee = curve.knee_clock_fraction;
  const double floor = curve.floor_voltage_fraction;
  if (clock_fraction <= knee || knee >= 1) return floor;
  return floor + (1 - floor) * (clock_fraction - knee) / (1 - knee);
}

double ModelPowerW(const GpuSpec& gpu, const KernelWork& work, double clock_fraction) {
  const double busy_w = std::clamp(work.busy_power_at_max_w, gpu.idle_power_w, std::max(gpu.idle_power_w, gpu.tdp_w));
  const double static_w = std::clamp(gpu.dvfs.static_power_fraction * busy_w, gpu.idle_power_w, busy_w);
  const double v = RelativeVoltage(gpu.dvfs, clock_fraction);
  return static_w + (busy_w - static_w) * clock_fraction * v * v;
}

std::string Num(double v) {
  std::string s = std::to_string(v);
  s.erase(s.find_last_not_of('0') + 1);
  if (!s.empty() && s.back() == '.') s.pop_back();
  return s;
}

// The supported clocks from the maximum down to `min_clock_mhz`, highest first.
Result<std::vector<int>> ProfileClocks(const GpuSpec& gpu, int min_clock_mhz) {
  if (min_clock_mhz < gpu.min_sm_clock_mhz || min_clock_mhz > gpu.max_sm_clock_mhz) {
    return Status::InvalidArgument("minimum clock " + std::to_string(min_clock_mhz) + " MHz is outside " + gpu.name +
                                   "'s range " + std::to_string(gpu.min_sm_clock_mhz) + ".." +
                                   std::to_string(gpu.max_sm_clock_mhz) + " MHz");
  }
  std::vector<int> clocks_mhz;
  for (int f : gpu.supported_sm_clocks_mhz) {
    if (f >= min_clock_mhz && f <= gpu.max_sm_clock_mhz) clocks_mhz.push_back(f);
  }
  if (clocks_mhz.empty()) {
    return Status::InvalidArgument("GPU '" + gpu.name + "' lists no supported clock in " +
                                   std::to_string(min_clock_mhz) + ".." + std::to_string(gpu.max_sm_clock_mhz) +
                                   " MHz");
  }
  std::sort(clocks_mhz.begin(), clocks_mhz.end(), std::greater<int>());
  return clocks_mhz;
}

std::vector<FreqPoint> ModelPoints(const GpuSpec& gpu, const KernelWork& work, const std::vector<int>& clocks_mhz) {
  std::vector<FreqPoint> points;
  for (int f : clocks_mhz) {
    OperatingPoint op = ModelComputation(gpu, work, f);
    points.push_back(FreqPoint{f, op.time_s, op.energy_j});
  }
  return points;
}

}  // namespace

OperatingPoint ModelComputation(const GpuSpec& gpu, const KernelWork& work, int sm_clock_mhz) {
  if (gpu.max_sm_clock_mhz <= 0) return OperatingPoint{};
  const int lowest_mhz = std::clamp(gpu.min_sm_clock_mhz, 1, gpu.max_sm_clock_mhz);
  const int f_mhz = std::clamp(sm_clock_mhz, lowest_mhz, gpu.max_sm_clock_mhz);
  const double x = static_cast<double>(f_mhz) / gpu.max_sm_clock_mhz;
  const double c = work.compute_bound_fraction;
  OperatingPoint op;
  op.time_s = work.time_at_max_s * (c / x + (1 - c));
  op.power_w = ModelPowerW(gpu, work, x);
  op.energy_j = op.power_w * op.time_s;
  return op;
}

Status ValidateKernelWork(const KernelWork& work, const std::string& where, const KernelWorkNames& names) {
  if (!(work.time_at_max_s > 0) || !std::isfinite(work.time_at_max_s)) {
    return Status::InvalidArgument(where + ": " + names.time_at_max_s + ": expected a positive number, got " +
                                   Num(work.time_at_max_s));
  }
  if (!(work.compute_bound_fraction >= 0 && work.compute_bound_fraction <= 1)) {
    return Status::InvalidArgument(where + ": " + names.compute_bound_fraction + ": expected 0..1, got " +
                                   Num(work.compute_bound_fraction));
  }
  if (!(work.busy_power_at_max_w > 0) || !std::isfinite(work.busy_power_at_max_w)) {
    return Status::InvalidArgument(where + ": " + names.busy_power_at_max_w + ": expected a positive number, got " +
                                   Num(work.busy_power_at_max_w));
  }
  return Status::Ok();
}

Result<Profile> GenerateProfile(const GpuSpec& gpu, const std::vector<std::array<KernelWork, 2>>& stages,
                                int min_clock_mhz) {
  if (stages.empty()) return Status::InvalidArgument("no stages to model");
  Result<std::vector<int>> clocks_mhz = ProfileClocks(gpu, min_clock_mhz);
  if (!clocks_mhz.ok()) return clocks_mhz.status();
  Profile profile;
  for (size_t s = 0; s < stages.size(); ++s) {
    StageProfile sp;
    for (int i = 0; i < 2; ++i) {  // forward, backward
      const std::string where = "stage " + std::to_string(s) + " " + InstructionName(static_cast<Instruction>(i));
      PERSEUS_RETURN_IF_ERROR(ValidateKernelWork(stages[s][i], where));
      sp.points[i] = ModelPoints(gpu, stages[s][i], *clocks_mhz);
    }
    // A transformer's input gradient and weight gradient each do one
    // forward's worth of matrix multiplies: half the backward's work apiece.
    for (const FreqPoint& whole : sp.at(Instruction::kBackward)) {
      const FreqPoint half{whole.freq_mhz, whole.time_s / 2, whole.energy_j / 2};
      sp.at(Instruction::kBackwardInput).push_back(half);
      sp.at(Instruction::kBackwardWeight).push_back(half);
    }
    profile.stages.push_back(std::move(sp));
  }
  return profile;
}

}  // namespace perseus
