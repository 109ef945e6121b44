// Exact reference solutions for tiny problems, by enumerating every plan,
// and random tiny instances to run them on. Used by the property tests and
// by bench/optimizer_quality_bench.cc to measure the solver's gap to optimal.
#pragma once

#include <random>
#include <vector>

#include "perseus/optimizer.h"
#include "perseus/problem.h"
#include "perseus/profile.h"

namespace perseus::testing {

struct ExactPoint {
  double time_s;
  double energy_j;
};

// Every plan's (time, energy), reduced to the exact Pareto frontier (time
// ascending). REQUIRES: the product of option counts is at most ~5 million.
std::vector<ExactPoint> ExactFrontier(const Problem& problem);

// Least energy among plans with time <= time_s (+inf if none).
double ExactEnergyAtMost(const std::vector<ExactPoint>& frontier, double time_s);

// A random profile with `options` frequencies per stage and instruction:
// time grows as the frequency falls, energy is noisy and not always convex,
// and sometimes the highest frequency is not the fastest. With
// `split_backward` it also lists backward_input and backward_weight rows,
// random shares of the backward that sum to it.
Profile RandomProfile(std::mt19937& rng, int stages, int options, bool split_backward = false);

// The random tiny 1F1B instances (2-3 stages, 2-3 microbatches, 2-3 clocks,
// 83.64 W blocking power, at most 3^12 or 2^18 plans) that
// optimizer_quality_bench and the frontier tests compare with exhaustive
// search: `trials` draws from one seeded generator, fewer instances.
std::vector<Problem> TinyInstances(int trials);

// Every computation at its option at `mhz` (its first option where it lists
// none): the same clock on every GPU all iteration.
PlanChoice EveryComputationAt(const Problem& problem, int mhz);

// A frontier's energy against the exact one, as shares of the exact energy.
struct GapToExact {
  // At every exact frontier point (but those faster than all of ours), our least
  // energy within its time: counts, besides worse plans, an exact point that
  // falls between two of our plan times.
  double worst = 0, sum = 0;
  int count = 0;
  // At each of our plans' own times: worse plans only.
  double worst_own = 0, sum_own = 0;
  int count_own = 0;
  // Adds one instance: its frontier and the exact one.
  void Add(const Frontier& ours, const std::vector<ExactPoint>& exact);
};

}  // namespace perseus::testing
