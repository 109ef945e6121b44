#include "profiling/profile_checks.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "common/strings.h"

namespace perseus::profiling {
namespace {

constexpr double kSigmas = 3;
constexpr double kNoEffectFraction = 0.02;
constexpr double kNoEffectMinClockRatio = 0.9;
constexpr double kNonMonotonicFraction = 0.01;

struct Point {
  int clock_mhz = 0;
  bool measured = false;
  double time_s = 0, time_se_s = 0, power_w = 0, power_se_w = 0, energy_j = 0;
};

Point At(const ClockEstimate& c, Instruction ins) {
  if (ins == Instruction::kForward) {
    return {c.clock_mhz,       c.forward_measured,   c.forward_time_s,  c.forward_time_se_s,
            c.forward_power_w, c.forward_power_se_w, c.forward_energy_j};
  }
  return {c.clock_mhz,        c.backward_measured,   c.backward_time_s,  c.backward_time_se_s,
          c.backward_power_w, c.backward_power_se_w, c.backward_energy_j};
}

double Hypot(double a, double b) { return std::sqrt(a * a + b * b); }

void CheckClockEffect(int stage, const StageEstimate& e, std::vector<ProfileIssue>& issues) {
  const ClockEstimate* high = nullptr;
  const ClockEstimate* low = nullptr;
  for (const ClockEstimate& c : e.clocks) {
    if (!c.measured) continue;
    if (!high) high = &c;
    low = &c;
  }
  if (!high || low->clock_mhz > kNoEffectMinClockRatio * high->clock_mhz) return;
  const double high_s = high->forward_time_s + high->backward_time_s;
  const double low_s = low->forward_time_s + low->backward_time_s;
  const double se_s = Hypot(Hypot(high->forward_time_se_s, high->backward_time_se_s),
                            Hypot(low->forward_time_se_s, low->backward_time_se_s));
  if (low_s - high_s >= std::max(kSigmas * se_s, kNoEffectFraction * high_s)) return;
  issues.push_back({"clock_has_no_effect",
                    Format("stage %d's time does not depend on the SM clock (%d MHz: %.1f ms, %d MHz: %.1f ms per "
                           "forward and backward): is the job GPU-bound, and is this rank bound to the GPU it names?",
                           stage, high->clock_mhz, high_s * 1e3, low->clock_mhz, low_s * 1e3),
                    stage});
}

void CheckMonotonic(int stage, const StageEstimate& e, Instruction ins, std::vector<ProfileIssue>& issues) {
  double worst = 0;
  Point worst_high, worst_low;
  for (size_t i = 0; i < e.clocks.size(); ++i) {
    const Point high = At(e.clocks[i], ins);
    if (!high.measured) continue;
    for (size_t j = i + 1; j < e.clocks.size(); ++j) {
      const Point low = At(e.clocks[j], ins);
      const double drop_s = high.time_s - low.time_s;
      if (!low.measured ||
          drop_s <= std::max(kSigmas * Hypot(high.time_se_s, low.time_se_s), kNonMonotonicFraction * high.time_s)) {
        continue;
      }
      if (drop_s / high.time_s > worst) {
        worst = drop_s / high.time_s;
        worst_high = high;
        worst_low = low;
      }
    }
  }
  if (worst <= 0) return;
  issues.push_back({"time_not_monotonic",
                    Format("stage %d's %s time falls as the clock falls: %d MHz: %.2f ms, %d MHz: %.2f ms (by more "
                           "than 3 standard errors and 1%%)",
                           stage, InstructionName(ins), worst_high.clock_mhz, worst_high.time_s * 1e3,
                           worst_low.clock_mhz, worst_low.time_s * 1e3),
                    stage});
}

bool ImplausiblePower(const Point& p, const PlausibilityLimits& l) {
  const double margin_w = kSigmas * p.power_se_w;
  return p.energy_j <= 0 || p.power_w + margin_w < l.min_power_w || p.power_w - margin_w > l.max_power_w;
}

void CheckPower(int stage, const StageEstimate& e, Instruction ins, const PlausibilityLimits& l,
                std::vector<ProfileIssue>& issues) {
  int bad = 0, measured = 0;
  Point first;
  for (const ClockEstimate& c : e.clocks) {
    const Point p = At(c, ins);
    if (!p.measured) continue;
    ++measured;
    if (!ImplausiblePower(p, l)) continue;
    if (bad++ == 0) first = p;
  }
  if (bad == 0) return;
  issues.push_back({"implausible_power",
                    Format("stage %d's %s power is implausible at %d of %d measured clocks (first: %d MHz, %.0f W "
                           "± %.0f W, %.3g J; plausible: %.0f-%.0f W and a positive energy)",
                           stage, InstructionName(ins), bad, measured, first.clock_mhz, first.power_w, first.power_se_w,
                           first.energy_j, l.min_power_w, l.max_power_w),
                    stage});
}

void CheckUncertainty(int stage, const StageEstimate& e, const PlausibilityLimits& l,
                      std::vector<ProfileIssue>& issues) {
  const std::vector<int> above = ClockIndicesAboveTarget(e, l.target_relative_se);
  if (above.empty()) return;
  int worst = above.front();
  double worst_rel = 0;
  for (int i : above) {
    const ClockEstimate& c = e.clocks[i];
    const double total_j = std::abs(c.forward_energy_j + c.backward_energy_j);
    const double rel = total_j > 0 ? c.total_energy_se_j / total_j : std::numeric_limits<double>::infinity();
    if (rel > worst_rel) {
      worst_rel = rel;
      worst = i;
    }
  }
  issues.push_back({"high_uncertainty",
                    Format("stage %d's energy is uncertain at %zu of %zu clocks (worst: %d MHz, ±%.1f%%; target "
                           "%.1f%%)",
                           stage, above.size(), e.clocks.size(), e.clocks[worst].clock_mhz, 100 * worst_rel,
                           100 * l.target_relative_se),
                    stage});
}

void CheckBlocking(int stage, const StageEstimate& e, const PlausibilityLimits& l, std::vector<ProfileIssue>& issues) {
  double busy_w = 0;
  for (const ClockEstimate& c : e.clocks) {
    if (c.measured) busy_w = std::max({busy_w, c.forward_power_w, c.backward_power_w});
  }
  const double margin_w = kSigmas * e.blocking_power_se_w;
  const double p = e.blocking_power_w;
  const bool above_busy = busy_w > 0 && p - margin_w > busy_w;
  if (p + margin_w >= l.min_power_w && p - margin_w <= l.max_power_w && !above_busy) return;
  issues.push_back({"blocking_power_implausible",
                    Format("stage %d's blocking power %.0f W ± %.0f W is implausible (plausible: %.0f-%.0f W and "
                           "below the highest computation power, %.0f W)",
                           stage, p, e.blocking_power_se_w, l.min_power_w, l.max_power_w, busy_w),
                    stage});
}

}  // namespace

std::vector<ProfileIssue> CheckStage(int stage, const StageEstimate& estimate, const PlausibilityLimits& limits) {
  std::vector<ProfileIssue> issues;
  CheckClockEffect(stage, estimate, issues);
  for (Instruction ins : {Instruction::kForward, Instruction::kBackward}) CheckMonotonic(stage, estimate, ins, issues);
  for (Instruction ins : {Instruction::kForward, Instruction::kBackward}) {
    CheckPower(stage, estimate, ins, limits, issues);
  }
  CheckUncertainty(stage, estimate, limits, issues);
  CheckBlocking(stage, estimate, limits, issues);
  return issues;
}

}  // namespace perseus::profiling
