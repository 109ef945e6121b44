// Exact reference solutions for tiny problems, by enumerating every plan,
// and random tiny instances to run them on. Used by the property tests and
// by bench/optimizer_bench.cc to measure the solver's gap to optimal.
#pragma once

#include <random>
#include <vector>

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

}  // namespace perseus::testing
