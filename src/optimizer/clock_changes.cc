// Limiting clock changes per GPU (docs/schedules.md, "Clock changes"):
// per GPU, a dynamic programme over its execution order.
//
// A GPU's computations may only move to options no slower than the plan's
// (so no path gets longer and the iteration time cannot grow); among those,
// the assignment with at most K clock changes around the cycle (the last
// computation to the next iteration's first counts) with the least energy,
//     sum_i (e_i' - e_i) + P_block * (t_i - t_i')
// (a faster computation leaves its GPU idle, at blocking power, for longer).
// The cycle is handled exactly by fixing the first computation's clock (one
// solve per clock it may take; the cycle starts at the computation with the
// fewest). Where no assignment of options no slower meets the limit (a lower
// clock measured faster than the highest one: then the fastest options of a
// GPU's computations sit at different clocks, and no single clock is no
// slower for all of them; found in review), any option may be taken, the
// least added time first (kSlowdownJPerS per second slower), so the limit
// holds and the plan slows down as little as it can; only where the GPU's
// computations share too few clocks even so does it get the fewest changes
// it can have. The GPUs are independent: each one's choice changes no
// other's feasibility.
#include <algorithm>
#include <limits>
#include <map>

#include "perseus/optimizer.h"

namespace perseus {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();
// What a second of added computation time costs where options may be slower:
// far above any energy difference, so that time comes first.
constexpr double kSlowdownJPerS = 1e9;

struct Allowed {
  int option = 0;
  int freq = 0;        // index into the GPU's clock list
  double delta_j = 0;  // energy added by choosing it
};

// The options of each computation no slower than its current one, or with
// `any_speed` all of them (a slower one costing kSlowdownJPerS per second).
std::vector<std::vector<Allowed>> AllowedOptions(const Problem& problem, const PlanChoice& choice,
                                                 const std::vector<int>& order, bool any_speed, int* num_freqs) {
  std::map<int, int> freq_index;
  for (int id : order) {
    for (const FreqPoint& o : problem.nodes[id].options) freq_index.emplace(o.freq_mhz, 0);
  }
  int next = 0;
  for (auto& [mhz, index] : freq_index) index = next++;
  *num_freqs = next;
  std::vector<std::vector<Allowed>> allowed(order.size());
  for (size_t i = 0; i < order.size(); ++i) {
    const ProblemNode& node = problem.nodes[order[i]];
    const FreqPoint& cur = node.options[choice[order[i]]];
    for (int o = 0; o < static_cast<int>(node.options.size()); ++o) {
      const FreqPoint& p = node.options[o];
      const bool slower = p.time_s > cur.time_s * (1 + 1e-12);
      if (slower && !any_speed) continue;
      allowed[i].push_back({o, freq_index.at(p.freq_mhz),
                            (p.energy_j - cur.energy_j) + problem.blocking_power_w * (cur.time_s - p.time_s) +
                                (slower ? kSlowdownJPerS * (p.time_s - cur.time_s) : 0)});
    }
  }
  return allowed;
}

// The least added energy with the first computation at clock `first` and at
// most `max_changes` changes around the cycle; fills `options` (per position)
// when it is not null. kInf when infeasible.
double SolveCycle(const std::vector<std::vector<Allowed>>& allowed, int num_freqs, int first, int max_changes,
                  std::vector<int>* options) {
  const size_t n = allowed.size();
  const int k1 = max_changes + 1;
  // cost[c * F + f]: least energy of a prefix ending at clock f after c changes.
  std::vector<double> cost(static_cast<size_t>(k1) * num_freqs, kInf), next(cost.size());
  // from[i][c * F + f] = option index (into allowed[i]) and the previous state.
  std::vector<std::vector<std::pair<int, int>>> from;
  if (options) from.assign(n, std::vector<std::pair<int, int>>(cost.size(), {-1, -1}));
  for (size_t a = 0; a < allowed[0].size(); ++a) {
    if (allowed[0][a].freq != first) continue;
    cost[first] = allowed[0][a].delta_j;
    if (options) from[0][first] = {static_cast<int>(a), -1};
  }
  for (size_t i = 1; i < n; ++i) {
    std::fill(next.begin(), next.end(), kInf);
    for (int c = 0; c < k1; ++c) {
      // The best and second-best clocks after c - 1 changes, for a change into clock g.
      int best = -1, second = -1;
      if (c > 0) {
        for (int f = 0; f < num_freqs; ++f) {
          const double v = cost[(c - 1) * num_freqs + f];
          if (v == kInf) continue;
          if (best < 0 || v < cost[(c - 1) * num_freqs + best]) {
            second = best;
            best = f;
          } else if (second < 0 || v < cost[(c - 1) * num_freqs + second]) {
            second = f;
          }
        }
      }
      for (size_t a = 0; a < allowed[i].size(); ++a) {
        const int g = allowed[i][a].freq;
        double v = cost[c * num_freqs + g];
        int prev = c * num_freqs + g;
        const int change_from = best == g ? second : best;
        if (change_from >= 0 && cost[(c - 1) * num_freqs + change_from] < v) {
          v = cost[(c - 1) * num_freqs + change_from];
          prev = (c - 1) * num_freqs + change_from;
        }
        if (v == kInf) continue;
        v += allowed[i][a].delta_j;
        double& slot = next[c * num_freqs + g];
        if (v < slot) {
          slot = v;
          if (options) from[i][c * num_freqs + g] = {static_cast<int>(a), prev};
        }
      }
    }
    cost.swap(next);
  }
  double best_v = kInf;
  int best_state = -1;
  for (int c = 0; c < k1; ++c) {
    for (int f = 0; f < num_freqs; ++f) {
      const double v = cost[c * num_freqs + f];
      if (v < best_v && c + (f != first ? 1 : 0) <= max_changes) {
        best_v = v;
        best_state = c * num_freqs + f;
      }
    }
  }
  if (options && best_state >= 0) {
    options->assign(n, 0);
    int state = best_state;
    for (size_t i = n; i-- > 0;) {
      const auto [a, prev] = from[i][state];
      (*options)[i] = allowed[i][a].option;
      state = prev;
    }
  }
  return best_v;
}

int ClockChangesPerGpuOrder(const Problem& problem, const std::vector<int>& order, const PlanChoice& choice) {
  int n = 0;
  for (size_t k = 0; k < order.size(); ++k) {
    const int previous = order[(k + order.size() - 1) % order.size()];
    n += problem.nodes[order[k]].options[choice[order[k]]].freq_mhz !=
         problem.nodes[previous].options[choice[previous]].freq_mhz;
  }
  return n;
}

// The GPU's options meeting `max_changes` with the least added cost, from
// options no slower or (`any_speed`) any; false if none meets it.
bool SolveGpu(const Problem& problem, const std::vector<int>& gpu_order, int max_changes, bool any_speed,
              PlanChoice* choice) {
  // The cycle may start anywhere: start it at the computation with the fewest
  // allowed options (often one at its highest clock, which has only that),
  // since the solve is repeated for each of them.
  std::vector<int> order = gpu_order;
  {
    int num_freqs = 0;
    const std::vector<std::vector<Allowed>> allowed = AllowedOptions(problem, *choice, order, any_speed, &num_freqs);
    size_t start = 0;
    for (size_t i = 1; i < allowed.size(); ++i) {
      if (allowed[i].size() < allowed[start].size()) start = i;
    }
    std::rotate(order.begin(), order.begin() + static_cast<std::ptrdiff_t>(start), order.end());
  }
  int num_freqs = 0;
  const std::vector<std::vector<Allowed>> allowed = AllowedOptions(problem, *choice, order, any_speed, &num_freqs);
  double best_v = kInf;
  int best_first = -1;
  for (const Allowed& a : allowed[0]) {
    const double v = SolveCycle(allowed, num_freqs, a.freq, max_changes, nullptr);
    if (v < best_v) {
      best_v = v;
      best_first = a.freq;
    }
  }
  if (best_first < 0) return false;
  std::vector<int> options;
  SolveCycle(allowed, num_freqs, best_first, max_changes, &options);
  for (size_t i = 0; i < order.size(); ++i) (*choice)[order[i]] = options[i];
  return true;
}

void LimitGpu(const Problem& problem, const std::vector<int>& gpu_order, int max_changes, PlanChoice* choice) {
  if (gpu_order.size() < 2) return;
  if (SolveGpu(problem, gpu_order, max_changes, /*any_speed=*/false, choice)) return;
  if (SolveGpu(problem, gpu_order, max_changes, /*any_speed=*/true, choice)) return;
  // The computations share too few clocks for the limit: the fewest
  // changes that can be had (found by raising the limit one at a time).
  if (max_changes + 1 <= ClockChangesPerGpuOrder(problem, gpu_order, *choice)) {
    LimitGpu(problem, gpu_order, max_changes + 1, choice);
  }
}

}  // namespace

PlanChoice LimitClockChanges(const Problem& problem, const PlanChoice& choice, int max_changes_per_gpu) {
  PlanChoice out = choice;
  const std::vector<int> changes = ClockChangesPerGpu(problem, choice);
  for (int g = 0; g < problem.num_stages(); ++g) {
    if (changes[g] > max_changes_per_gpu) LimitGpu(problem, problem.gpu_order[g], max_changes_per_gpu, &out);
  }
  return out;
}

}  // namespace perseus
