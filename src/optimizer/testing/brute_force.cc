// Exhaustive enumeration of plans.
#include "optimizer/testing/brute_force.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <limits>

namespace perseus::testing {

std::vector<ExactPoint> ExactFrontier(const Problem& problem) {
  const int n = problem.num_nodes();
  PlanChoice choice(n, 0);
  std::vector<ExactPoint> all;
  while (true) {
    PlanCost c = EvaluatePlan(problem, choice);
    all.push_back({c.time_s, c.energy_j});
    int i = 0;
    while (i < n && ++choice[i] == static_cast<int>(problem.nodes[i].options.size())) choice[i++] = 0;
    if (i == n) break;
  }
  std::sort(all.begin(), all.end(), [](const ExactPoint& a, const ExactPoint& b) {
    return a.time_s != b.time_s ? a.time_s < b.time_s : a.energy_j < b.energy_j;
  });
  std::vector<ExactPoint> front;
  for (const ExactPoint& p : all) {
    if (front.empty() || p.energy_j < front.back().energy_j) front.push_back(p);
  }
  return front;
}

double ExactEnergyAtMost(const std::vector<ExactPoint>& frontier, double time_s) {
  double best = std::numeric_limits<double>::infinity();
  for (const ExactPoint& p : frontier) {
    if (p.time_s <= time_s) best = std::min(best, p.energy_j);
  }
  return best;
}

Profile RandomProfile(std::mt19937& rng, int stages, int options, bool split_backward) {
  std::uniform_real_distribution<double> u(0, 1);
  Profile profile;
  profile.stages.resize(stages);
  for (int s = 0; s < stages; ++s) {
    for (int ins = 0; ins < 2; ++ins) {  // forward, backward
      double base_s = (ins ? 0.08 : 0.04) * (0.6 + 0.8 * u(rng));
      double power_w = 200 + 200 * u(rng);
      for (int k = 0; k < options; ++k) {
        int freq = 1410 - 150 * k;
        double slow = 1.0 + 0.12 * k * (0.5 + u(rng));
        if (k == 1 && u(rng) < 0.15) slow = 0.995;  // a noisy profile: max frequency not fastest
        double time_s = base_s * slow;
        double watts = power_w * (1.0 - 0.18 * k * (0.4 + u(rng)));
        profile.stages[s].points[ins].push_back({freq, time_s, watts * time_s});
      }
    }
    if (!split_backward) continue;
    // Halves of uneven size and power; the whole backward is their sum.
    StageProfile& sp = profile.stages[s];
    for (FreqPoint& whole : sp.at(Instruction::kBackward)) {
      const double time_share = 0.35 + 0.3 * u(rng), energy_share = 0.35 + 0.3 * u(rng);
      sp.at(Instruction::kBackwardInput).push_back({whole.freq_mhz, whole.time_s * time_share, whole.energy_j * energy_share});
      sp.at(Instruction::kBackwardWeight)
          .push_back({whole.freq_mhz, whole.time_s * (1 - time_share), whole.energy_j * (1 - energy_share)});
    }
  }
  return profile;
}

PlanChoice EveryComputationAt(const Problem& problem, int mhz) {
  PlanChoice plan(problem.num_nodes(), 0);
  for (int id = 0; id < problem.num_nodes(); ++id) {
    const std::vector<FreqPoint>& options = problem.nodes[id].options;
    for (int o = 0; o < static_cast<int>(options.size()); ++o) {
      if (options[o].freq_mhz == mhz) plan[id] = o;
    }
  }
  return plan;
}

std::vector<Problem> TinyInstances(int trials) {
  std::mt19937 rng(11);
  std::vector<Problem> out;
  for (int trial = 0; trial < trials; ++trial) {
    const int stages = 2 + trial % 2, microbatches = 2 + (trial / 2) % 2;
    const Profile profile = RandomProfile(rng, stages, 2 + (trial % 3 == 0));
    ProblemSpec spec;
    spec.schedule = {ScheduleKind::k1F1B, stages, microbatches, 1};
    spec.blocking_power_w = 83.64;
    Result<Problem> problem = BuildProblem(profile, spec);
    if (!problem.ok()) {
      std::fprintf(stderr, "TinyInstances: trial %d: %s\n", trial, problem.status().ToString().c_str());
      std::abort();
    }
    if (!(problem->num_nodes() > 12 && trial % 3 == 0)) out.push_back(std::move(*problem));
  }
  return out;
}

void GapToExact::Add(const Frontier& ours, const std::vector<ExactPoint>& exact) {
  for (const ExactPoint& e : exact) {
    const FrontierPlan* mine = ours.PlanForTime(e.time_s);
    if (!mine) continue;  // faster than all our plans
    const double gap = mine->energy_j / e.energy_j - 1;
    worst = std::max(worst, gap);
    sum += gap;
    ++count;
  }
  for (const FrontierPlan& p : ours.plans) {
    // The same plan's time may differ in its last bits between evaluations.
    const double gap = p.energy_j / ExactEnergyAtMost(exact, p.time_s * (1 + Frontier::kSameTime)) - 1;
    worst_own = std::max(worst_own, gap);
    sum_own += gap;
    ++count_own;
  }
}

}  // namespace perseus::testing
