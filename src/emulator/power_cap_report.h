// The power-cap evaluation (`perseus powercap`, docs/power.md): on one job,
// the least slowdown at which each way of saving power meets a cap, from no
// cap down to the lowest cap any of them reaches:
//  - perseus: the frontier, through the control library's cap decision
//    (control/power_cap.h: the job's settings and mixes of two neighbours);
//  - one SM clock for every GPU (Chase's knob, carbon::GlobalClockKnobs);
//  - one power limit for every GPU: each computation runs at the highest
//    clock whose measured average power per GPU is within the limit (how a
//    GPU's power limiter throttles, without its averaging window).
// Each baseline may also mix two of its settings in time, so every approach
// meets a cap exactly. Slowdown is against all-max clocks (today's practice).
// Thread safety: pure functions.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "control/power_cap.h"
#include "perseus/optimizer.h"
#include "perseus/problem.h"

namespace perseus::emulator {

struct CapPoint {
  double cap_w = 0;
  bool reachable = false;
  double slowdown = 0;  // average iteration time / all-max time - 1
  double power_w = 0;   // the job's average power under the cap
};

struct CapCurve {
  std::string name;
  std::vector<control::JobSetting> settings;  // the approach's settings (plan_index empty for baselines)
  std::vector<CapPoint> points;               // one per cap, caps descending
};

struct PowerCapReport {
  std::string job;
  int pipelines = 1;
  std::vector<std::pair<int, double>> stragglers;  // (pipeline, slowdown)
  double all_max_time_s = 0;   // the job's iteration at all-max clocks (the slowest pipeline's)
  double all_max_power_w = 0;  // the whole job at all-max clocks: no cap binds above it
  double lowest_cap_w = 0;     // the lowest cap any approach reaches
  std::vector<CapCurve> curves;  // perseus, global SM clock, power limit
};

// The plan of a per-GPU power limit (exposed for tests).
PlanChoice PlanForPowerLimit(const Problem& problem, double limit_w_per_gpu);

// `slowdowns[p]` >= 1 is pipeline p's (1: not straggling); every approach
// faces the same stragglers, and slowdown is against all-max with them.
// REQUIRES: frontier solved for `problem`; !slowdowns.empty(); caps >= 2.
PowerCapReport EvaluatePowerCaps(const Problem& problem, const Frontier& frontier,
                                 const std::vector<double>& slowdowns, const std::string& job, int caps = 25);

std::string PowerCapMarkdown(const PowerCapReport& report);
std::string PowerCapCsv(const PowerCapReport& report);
// Slowdown (%) against the cap (W) for each approach.
std::string PowerCapSvg(const PowerCapReport& report);

}  // namespace perseus::emulator
