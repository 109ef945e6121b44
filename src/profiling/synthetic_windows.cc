#include "profiling/synthetic_windows.h"

#include <algorithm>
#include <cmath>
#include <numbers>
#include <random>

namespace perseus::profiling {
namespace {

// Box-Muller on mt19937_64: the same numbers on every standard library.
class Normal {
 public:
  explicit Normal(uint64_t seed) : rng_(seed) {}
  double operator()() {
    const double u1 = (static_cast<double>(rng_() >> 11) + 0.5) * 0x1.0p-53;
    const double u2 = static_cast<double>(rng_() >> 11) * 0x1.0p-53;
    return std::sqrt(-2 * std::log(u1)) * std::cos(2 * std::numbers::pi * u2);
  }

 private:
  std::mt19937_64 rng_;
};

// Sums of `count` jittered durations around time_s.
void Durations(double time_s, int64_t count, double jitter, Normal& normal, double& sum_s, double& sum_sq_s2) {
  sum_s = sum_sq_s2 = 0;
  for (int64_t k = 0; k < count; ++k) {
    const double t = time_s * std::max(0.0, 1 + jitter * normal());
    sum_s += t;
    sum_sq_s2 += t * t;
  }
}

// 1F1B: (M - 1) times the slowest stage's microbatch plus one of each stage.
double CycleTime(const std::vector<double>& busy_s, int microbatches) {
  double max_s = 0, sum_s = 0;
  for (double b : busy_s) {
    max_s = std::max(max_s, b);
    sum_s += b;
  }
  return ((microbatches - 1) * max_s + sum_s) / microbatches;
}

double TrueEnergyJ(const StageTruth& s, const WindowObservation& w) {
  return s.forward_power_w[w.forward_index] * w.forward_time_s +
         s.backward_power_w[w.backward_index] * w.backward_time_s +
         s.blocking_power_w * (w.cycle_time_s - w.forward_time_s - w.backward_time_s);
}

}  // namespace

double DriftFactor(double t_s, const SyntheticConditions& c) {
  if (c.drift_tau_s <= 0) return 1 + c.drift_fraction * t_s / 1000;
  return 1 - c.drift_fraction * std::expm1(-t_s / c.drift_tau_s);
}

StageTruth TruthAt(const StageTruth& truth, double t_s, const SyntheticConditions& conditions) {
  const double f = DriftFactor(t_s, conditions);
  StageTruth out = truth;
  for (double& p : out.forward_power_w) p *= f;
  for (double& p : out.backward_power_w) p *= f;
  out.blocking_power_w *= f;
  return out;
}

Result<std::vector<StageTruth>> TruthFromProfile(const Profile& profile, double blocking_power_w) {
  std::vector<StageTruth> truths;
  for (int s = 0; s < profile.num_stages(); ++s) {
    const auto& f = profile.stages[s].at(Instruction::kForward);
    const auto& b = profile.stages[s].at(Instruction::kBackward);
    if (f.size() != b.size()) return Status::InvalidArgument("stage " + std::to_string(s) + ": clock lists differ");
    StageTruth t;
    t.blocking_power_w = blocking_power_w;
    for (size_t i = 0; i < f.size(); ++i) {
      if (f[i].freq_mhz != b[i].freq_mhz) {
        return Status::InvalidArgument("stage " + std::to_string(s) + ": clock lists differ");
      }
      t.clocks_mhz.push_back(f[i].freq_mhz);
      t.forward_time_s.push_back(f[i].time_s);
      t.forward_power_w.push_back(f[i].energy_j / f[i].time_s);
      t.backward_time_s.push_back(b[i].time_s);
      t.backward_power_w.push_back(b[i].energy_j / b[i].time_s);
    }
    truths.push_back(std::move(t));
  }
  return truths;
}

std::vector<std::vector<WindowObservation>> SimulateWindows(const std::vector<StageTruth>& stages,
                                                            const std::vector<WindowPlan>& plans,
                                                            const SyntheticConditions& c) {
  Normal normal(c.seed);
  const int64_t count = static_cast<int64_t>(c.microbatches) * c.iterations;
  std::vector<double> reference_busy_s;
  for (const StageTruth& s : stages) reference_busy_s.push_back(count * (s.forward_time_s[0] + s.backward_time_s[0]));
  const double reference_cycle_s = CycleTime(reference_busy_s, c.microbatches);
  std::vector<std::vector<WindowObservation>> out(stages.size());
  double now_s = 0;
  for (size_t k = 0; k < plans.size(); ++k) {
    std::vector<WindowObservation> windows(stages.size());
    std::vector<double> busy_s;
    for (size_t s = 0; s < stages.size(); ++s) {
      WindowObservation& w = windows[s];
      w.forward_index = plans[k].stages[s].forward_index;
      w.backward_index = plans[k].stages[s].backward_index;
      w.iterations = c.iterations;
      w.forward_count = w.backward_count = count;
      Durations(stages[s].forward_time_s[w.forward_index], count, c.time_jitter, normal, w.forward_time_s,
                w.forward_time_sq_s2);
      Durations(stages[s].backward_time_s[w.backward_index], count, c.time_jitter, normal, w.backward_time_s,
                w.backward_time_sq_s2);
      busy_s.push_back(w.forward_time_s + w.backward_time_s);
    }
    const double cycle_s = CycleTime(busy_s, c.microbatches);
    const double mid_s = now_s + cycle_s / c.iterations + cycle_s / 2;
    now_s += cycle_s / c.iterations + cycle_s;
    double factor = 1;
    for (const auto& [window, f] : c.energy_factors) {
      if (window == static_cast<int>(k)) factor *= f;
    }
    for (size_t s = 0; s < stages.size(); ++s) {
      WindowObservation& w = windows[s];
      w.cycle_time_s = cycle_s;
      w.mid_time_s = mid_s;
      const double noise = c.energy_relative_sd * std::sqrt(reference_cycle_s / cycle_s) * normal();
      w.energy_j = TrueEnergyJ(stages[s], w) * DriftFactor(mid_s, c) * (1 + noise) * factor;
      out[s].push_back(w);
    }
  }
  return out;
}

}  // namespace perseus::profiling
