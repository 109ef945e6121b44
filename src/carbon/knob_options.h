// The settings a carbon policy can choose between, as (time, energy) per unit
// of work: the Perseus frontier's plans, one SM clock for every GPU (Chase's
// knob on a pipeline job), or a GPU power limit (Chase's knob on a
// data-parallel job, from a Zeus power-limit profile).
//
// Only settings on the lower convex hull of (time, energy) can minimise
// intensity * energy + lambda * time, so KnobSet keeps just those.
// Thread safety: plain values and pure functions.
#pragma once

#include <string>
#include <vector>

#include "perseus/optimizer.h"
#include "perseus/problem.h"

namespace perseus::carbon {

struct KnobOption {
  std::string label;     // e.g. "frontier plan 12", "1260 MHz", "175 W"
  double time_s = 0;     // per unit of work (an iteration or a profiling window)
  double energy_j = 0;   // per unit of work
  int plan_index = -1;   // the Frontier::plans index it stands for; -1: not a frontier plan
};

struct KnobSet {
  std::string name;                   // "Perseus frontier", "global SM clock", "power limit"
  std::vector<KnobOption> options;    // lower convex hull, time ascending (energy descending)
  std::vector<KnobOption> pareto;     // every Pareto-optimal option, time ascending
  KnobOption reference;               // today's practice: all-max clocks / maximum power limit
  // Power drawn while the job is paused (control/carbon_choice.h): 0 when a
  // pause releases the GPUs, their idle draw when the processes wait holding
  // them (a pipeline's blocking power x its GPUs, as `perseus serve` pauses).
  double pause_power_w = 0;
  // Power drawn while a job whose pause released the GPUs restarts
  // (control::CarbonWindowConfig::restart_windows): its GPUs idle while the
  // processes start and restore the checkpoint (`perseus serve`: the
  // blocking power x its GPUs unless carbon.restart_power_w says otherwise).
  double restart_power_w = 0;
  // The option that is no slower than the reference and uses the least energy
  // (index into options), or 0 when none is that fast.
  int NoSlowdownIndex() const;
};

// Pareto-optimal options, time ascending.
std::vector<KnobOption> ParetoFront(std::vector<KnobOption> options);
// Keeps the Pareto-optimal options on the lower convex hull, time ascending.
std::vector<KnobOption> LowerConvexHull(std::vector<KnobOption> options);

// Every frontier plan; the reference is all-max.
KnobSet FrontierKnobs(const Frontier& frontier);
// One SM clock for every computation (each at the highest clock it lists
// that is <= the knob, or its lowest), evaluated with EvaluatePlan; the
// reference is all-max.
KnobSet GlobalClockKnobs(const Problem& problem);
// The plan a global clock means (exposed for tests).
PlanChoice PlanForGlobalClock(const Problem& problem, int clock_mhz);

}  // namespace perseus::carbon
