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
#include <atomic>
#include <limits>

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
  std::vector<int> mhz;  // the GPU's clocks, ascending: a clock's index is its place here
  for (int id : order) {
    for (const FreqPoint& o : problem.nodes[id].options) {
      auto it = std::lower_bound(mhz.begin(), mhz.end(), o.freq_mhz);
      if (it == mhz.end() || *it != o.freq_mhz) mhz.insert(it, o.freq_mhz);
    }
  }
  *num_freqs = static_cast<int>(mhz.size());
  auto index_of = [&](int f) { return static_cast<int>(std::lower_bound(mhz.begin(), mhz.end(), f) - mhz.begin()); };
  std::vector<std::vector<Allowed>> allowed(order.size());
  for (size_t i = 0; i < order.size(); ++i) {
    const ProblemNode& node = problem.nodes[order[i]];
    const FreqPoint& cur = node.options[choice[order[i]]];
    for (int o = 0; o < static_cast<int>(node.options.size()); ++o) {
      const FreqPoint& p = node.options[o];
      const bool slower = p.time_s > cur.time_s * (1 + 1e-12);
      if (slower && !any_speed) continue;
      allowed[i].push_back({o, index_of(p.freq_mhz),
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
  int num_freqs = 0;
  std::vector<std::vector<Allowed>> allowed = AllowedOptions(problem, *choice, order, any_speed, &num_freqs);
  size_t start = 0;
  for (size_t i = 1; i < allowed.size(); ++i) {
    if (allowed[i].size() < allowed[start].size()) start = i;
  }
  std::rotate(order.begin(), order.begin() + static_cast<std::ptrdiff_t>(start), order.end());
  std::rotate(allowed.begin(), allowed.begin() + static_cast<std::ptrdiff_t>(start), allowed.end());
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

// A GPU's clocks that each of its computations lists, highest first, with
// the option each computation (in execution order) takes at each.
struct SharedClocks {
  std::vector<int> mhz;
  std::vector<std::vector<int>> option;  // [clock][position in the GPU's order]
};

SharedClocks ClocksOfEveryComputation(const Problem& problem, const std::vector<int>& order) {
  SharedClocks out;
  if (order.empty()) return out;
  for (const FreqPoint& candidate : problem.nodes[order[0]].options) {
    std::vector<int> at;
    for (int id : order) {
      const std::vector<FreqPoint>& options = problem.nodes[id].options;
      auto it = std::find_if(options.begin(), options.end(),
                             [&](const FreqPoint& o) { return o.freq_mhz == candidate.freq_mhz; });
      if (it == options.end()) break;
      at.push_back(static_cast<int>(it - options.begin()));
    }
    if (at.size() < order.size()) continue;
    out.mhz.push_back(candidate.freq_mhz);
    out.option.push_back(std::move(at));
  }
  std::vector<size_t> by_clock(out.mhz.size());
  for (size_t i = 0; i < by_clock.size(); ++i) by_clock[i] = i;
  std::sort(by_clock.begin(), by_clock.end(), [&](size_t a, size_t b) { return out.mhz[a] > out.mhz[b]; });
  SharedClocks sorted;
  for (size_t i : by_clock) {
    sorted.mhz.push_back(out.mhz[i]);
    sorted.option.push_back(std::move(out.option[i]));
  }
  return sorted;
}

// Computations that run at one clock together: a GPU's (one clock per GPU),
// or a run of consecutive ones on a GPU between two clock changes.
struct Unit {
  std::vector<int> ids;
  SharedClocks clocks;
};

// Plans with each unit at one clock, searched by moving whole units: a state
// is each unit's clock (an index into its SharedClocks). A state's cost needs
// only the longest path: each unit's computation energy and busy time at each
// clock are summed once.
class UnitClockModel {
 public:
  UnitClockModel(const Problem& problem, std::vector<Unit> units) : problem_(problem), units_(std::move(units)) {
    const int n = problem.num_nodes();
    unit_of_.resize(n);
    for (const Unit& u : units_) stride_ = std::max(stride_, u.clocks.mhz.size());
    time_at_.resize(static_cast<size_t>(n) * stride_);
    succ_begin_.push_back(0);
    for (int i = 0; i < n; ++i) {
      for (int v : problem.nodes[i].succs) succs_.push_back(v);
      succ_begin_.push_back(static_cast<int>(succs_.size()));
    }
    energy_j_.resize(units_.size());
    busy_s_.resize(units_.size());
    for (size_t u = 0; u < units_.size(); ++u) {
      const Unit& unit = units_[u];
      energy_j_[u].assign(unit.clocks.mhz.size(), 0);
      busy_s_[u].assign(unit.clocks.mhz.size(), 0);
      for (size_t k = 0; k < unit.ids.size(); ++k) {
        unit_of_[unit.ids[k]] = static_cast<int>(u);
        for (size_t c = 0; c < unit.clocks.mhz.size(); ++c) {
          const FreqPoint& o = problem.nodes[unit.ids[k]].options[unit.clocks.option[c][k]];
          time_at_[unit.ids[k] * stride_ + c] = o.time_s;
          energy_j_[u][c] += o.energy_j;
          busy_s_[u][c] += o.time_s;
        }
      }
    }
  }
  int units() const { return static_cast<int>(units_.size()); }
  int clocks(int u) const { return static_cast<int>(units_[u].clocks.mhz.size()); }
  const std::vector<int>& mhz(int u) const { return units_[u].clocks.mhz; }

  // The state's time and energy (EvaluatePlan's model); the time is +inf
  // once a computation would finish after `deadline_s`.
  PlanCost Cost(const std::vector<int>& state, double deadline_s) const {
    std::vector<double>& start = start_s_;
    start.assign(unit_of_.size(), 0.0);
    PlanCost cost;
    for (size_t i = 0; i < unit_of_.size(); ++i) {  // nodes are topologically ordered
      const double finish_s = start[i] + time_at_[i * stride_ + state[unit_of_[i]]];
      if (finish_s > deadline_s) return PlanCost{std::numeric_limits<double>::infinity(), 0};
      for (int k = succ_begin_[i]; k < succ_begin_[i + 1]; ++k) start[succs_[k]] = std::max(start[succs_[k]], finish_s);
      cost.time_s = std::max(cost.time_s, finish_s);
    }
    double busy_s = 0;
    for (int u = 0; u < units(); ++u) {
      cost.energy_j += energy_j_[u][state[u]];
      busy_s += busy_s_[u][state[u]];
    }
    cost.energy_j += problem_.blocking_power_w * (problem_.num_stages() * cost.time_s - busy_s);
    return cost;
  }
  PlanChoice Choice(const std::vector<int>& state) const {
    PlanChoice choice(problem_.num_nodes(), 0);
    for (int u = 0; u < units(); ++u) {
      const Unit& unit = units_[u];
      for (size_t k = 0; k < unit.ids.size(); ++k) choice[unit.ids[k]] = unit.clocks.option[state[u]][k];
    }
    return choice;
  }
  // The state of a plan that runs each unit at one clock.
  std::vector<int> StateOf(const PlanChoice& plan) const {
    std::vector<int> state(units_.size());
    for (size_t u = 0; u < units_.size(); ++u) {
      const int first = units_[u].ids[0];
      const int mhz = problem_.nodes[first].options[plan[first]].freq_mhz;
      const std::vector<int>& list = units_[u].clocks.mhz;
      state[u] = static_cast<int>(std::find(list.begin(), list.end(), mhz) - list.begin());
    }
    return state;
  }

 private:
  const Problem& problem_;
  std::vector<Unit> units_;
  std::vector<int> unit_of_;
  size_t stride_ = 0;             // the most clocks a unit has
  std::vector<double> time_at_;  // [node * stride_ + clock of its unit]
  std::vector<int> succ_begin_, succs_;
  std::vector<std::vector<double>> energy_j_, busy_s_;  // [unit][clock]
  mutable std::vector<double> start_s_;
};

// A position in the search: a state and its cost.
class UnitClockSearch {
 public:
  // At `state` (every unit at its highest clock when empty).
  explicit UnitClockSearch(const UnitClockModel& model, std::vector<int> state = {})
      : model_(&model), at_(state.empty() ? std::vector<int>(model.units(), 0) : std::move(state)),
        cost_(model.Cost(at_, std::numeric_limits<double>::infinity())) {}
  int units() const { return model_->units(); }
  int clocks(int u) const { return model_->clocks(u); }
  const std::vector<int>& at() const { return at_; }
  PlanChoice choice() const { return model_->Choice(at_); }
  const PlanCost& cost() const { return cost_; }

  // The state after units first..last move `steps` clocks (positive:
  // lower); false if none would move.
  bool Moved(int first, int last, int steps, std::vector<int>* to) const {
    *to = at_;
    bool moves = false;
    for (int u = first; u <= last; ++u) {
      (*to)[u] = std::clamp(at_[u] + steps, 0, clocks(u) - 1);
      moves |= (*to)[u] != at_[u];
    }
    return moves;
  }
  // The cost of state `to` (time +inf past `deadline_s`).
  PlanCost Try(const std::vector<int>& to, double deadline_s = std::numeric_limits<double>::infinity()) const {
    return model_->Cost(to, deadline_s);
  }
  void Go(const std::vector<int>& to, const PlanCost& cost) {
    at_ = to;
    cost_ = cost;
  }

 private:
  const UnitClockModel* model_;
  std::vector<int> at_;
  PlanCost cost_;
};

// How many clocks down a GPU may step at once in the descent (a measured
// clock can be slower and costlier than the next: it looks past it), and up
// or down in a neighbour (+-4 came 0.01 points of energy closer to exhaustive
// search along random problems' frontiers and took 1.7 times as long at
// GPT-3 16 x 256).
constexpr int kLowerClocksTried = 4;
constexpr int kNeighbourClocks = 2;
// Passes of SavingMovesWithin (GPT-3 8 x 96, K = 8: the no-slowdown plan
// saves 12.75% after one, 12.83% after two, 12.89% after four, as after
// every pass that saves; at K = 64 the first pass, pricing every run, is most
// of the time).
constexpr int kRunPasses = 4;
// Frontier points the walk from the slow end finds at most: at least
// 1/kOneClockWalk of the time range apart.
constexpr int kOneClockWalk = 128;

bool Stop(const std::atomic<bool>* cancel) { return cancel != nullptr && cancel->load(std::memory_order_relaxed); }

// From the search's state, the ratio descent: each step the move (one GPU or
// all, 1 to kLowerClocksTried clocks lower) that saves energy without slowing
// the iteration (the most saved) or else saves the most per second added.
void Descend(UnitClockSearch& search, const std::atomic<bool>* cancel, std::vector<UnitClockSearch>* path) {
  std::vector<int> to, best_to;
  // Every step lowers at least one GPU's clock: at most the clocks' count.
  for (;;) {
    if (Stop(cancel)) return;
    bool any = false, best_free = false;
    double best_score = 0;
    PlanCost best_cost;
    for (int gpu = -1; gpu < search.units(); ++gpu) {
      const int first = gpu < 0 ? 0 : gpu, last = gpu < 0 ? search.units() - 1 : gpu;
      for (int steps = 1; steps <= kLowerClocksTried && search.Moved(first, last, steps, &to); ++steps) {
        const PlanCost cost = search.Try(to);
        const PlanCost& now = search.cost();
        if (!(cost.energy_j < now.energy_j * (1 - 1e-12))) continue;
        const bool free = cost.time_s <= now.time_s * (1 + Frontier::kSameTime);
        const double saved_j = now.energy_j - cost.energy_j;
        const double score = free ? saved_j : saved_j / (cost.time_s - now.time_s);
        if (!any || (free && !best_free) || (free == best_free && score > best_score)) {
          any = true;
          best_free = free;
          best_score = score;
          best_cost = cost;
          best_to = to;
        }
      }
    }
    if (!any) return;
    search.Go(best_to, best_cost);
    path->push_back(search);
  }
}

// Calls visit(state) for every state one move from the search's: one unit
// up to kNeighbourClocks clocks up or down, or every unit one or two.
template <typename Visit>
void ForEachNeighbour(const UnitClockSearch& search, Visit visit) {
  std::vector<int> to;
  for (int u = 0; u < search.units(); ++u) {
    const int at = search.at()[u];
    for (int clock = std::max(0, at - kNeighbourClocks); clock <= std::min(search.clocks(u) - 1, at + kNeighbourClocks);
         ++clock) {
      if (clock == at) continue;
      to = search.at();
      to[u] = clock;
      visit(to);
    }
  }
  for (int steps : {-2, -1, 1, 2}) {
    if (search.Moved(0, search.units() - 1, steps, &to)) visit(to);
  }
}

// The neighbour within `deadline_s` that uses the least energy, if it saves
// energy or (`must_save` false) at all; moves the search there.
bool BestNeighbourWithin(UnitClockSearch& search, double deadline_s, bool must_save) {
  std::vector<int> best_to;
  PlanCost best_cost = search.cost();
  ForEachNeighbour(search, [&](const std::vector<int>& state) {
    const PlanCost cost = search.Try(state, deadline_s);
    if (cost.time_s <= deadline_s &&
        ((best_to.empty() && !must_save) || cost.energy_j < best_cost.energy_j * (1 - 1e-12))) {
      best_cost = cost;
      best_to = state;
    }
  });
  if (best_to.empty()) return false;
  search.Go(best_to, best_cost);
  return true;
}

// From the search's state (within `deadline_s`), the neighbour that saves
// the most energy within the deadline, until none saves. Energy falls
// strictly, and the steps are capped at the clocks' count.
void LeastWithin(UnitClockSearch& search, double deadline_s, const std::atomic<bool>* cancel) {
  int total_clocks = 0;
  for (int u = 0; u < search.units(); ++u) total_clocks += search.clocks(u);
  for (int step = 0; step < total_clocks && !Stop(cancel); ++step) {
    if (!BestNeighbourWithin(search, deadline_s, /*must_save=*/true)) return;
  }
}

// From the search's state (within `deadline_s`), passes over the units: each
// pass prices every unit moved one or two clocks lower or one higher, then
// takes the moves that save within the deadline, the most saving first, each
// priced again from the state the earlier ones left (LeastWithin's order at a
// fraction of its cost where units are many). Until a pass saves nothing, at
// most kRunPasses passes.
void SavingMovesWithin(UnitClockSearch& search, double deadline_s, const std::atomic<bool>* cancel) {
  struct Candidate {
    double saved_j;
    int unit, steps;
  };
  std::vector<int> to;
  for (int pass = 0; pass < kRunPasses && !Stop(cancel); ++pass) {
    std::vector<Candidate> candidates;
    for (int u = 0; u < search.units(); ++u) {
      for (int steps : {1, 2, -1}) {
        if (!search.Moved(u, u, steps, &to)) continue;
        const PlanCost cost = search.Try(to, deadline_s);
        const double saved_j = search.cost().energy_j - cost.energy_j;
        if (cost.time_s <= deadline_s && saved_j > search.cost().energy_j * 1e-12) candidates.push_back({saved_j, u, steps});
      }
    }
    if (candidates.empty()) return;
    std::stable_sort(candidates.begin(), candidates.end(),
                     [](const Candidate& a, const Candidate& b) { return a.saved_j > b.saved_j; });
    std::vector<bool> moved(search.units(), false);
    for (const Candidate& c : candidates) {
      if (moved[c.unit] || !search.Moved(c.unit, c.unit, c.steps, &to)) continue;
      const PlanCost cost = search.Try(to, deadline_s);
      if (cost.time_s <= deadline_s && cost.energy_j < search.cost().energy_j * (1 - 1e-12)) {
        search.Go(to, cost);
        moved[c.unit] = true;
      }
    }
  }
}

}  // namespace

std::vector<PlanChoice> OneClockPerGpuPlans(const Problem& problem, const std::atomic<bool>* cancel) {
  std::vector<Unit> gpus;
  for (int g = 0; g < problem.num_stages(); ++g) {
    gpus.push_back({problem.gpu_order[g], ClocksOfEveryComputation(problem, problem.gpu_order[g])});
    if (gpus.back().clocks.mhz.empty()) return {};
  }
  const UnitClockModel model(problem, std::move(gpus));
  UnitClockSearch search(model);
  std::vector<UnitClockSearch> found{search};
  // 0. The same clock on every GPU (the pipeline slowed evenly): plans of
  // their own, and starts for the walk below where nothing else is fast
  // enough (where a lower clock is faster than the highest, some are faster
  // than every plan the descent passes; as starts everywhere they led the
  // walk past better points on Bloom: a review).
  std::vector<UnitClockSearch> even;
  for (int mhz : model.mhz(0)) {
    std::vector<int> state(model.units());
    bool shared = true;
    for (int g = 0; g < model.units() && shared; ++g) {
      const std::vector<int>& list = model.mhz(g);
      auto it = std::find(list.begin(), list.end(), mhz);
      shared = it != list.end();
      if (shared) state[g] = static_cast<int>(it - list.begin());
    }
    if (shared) even.emplace_back(model, std::move(state));
  }
  // 1. The ratio descent, a path down the frontier.
  Descend(search, cancel, &found);
  // 2. Its end improved to the least energy found (past the descent's window,
  // or back up where a GPU went too far).
  LeastWithin(search, std::numeric_limits<double>::infinity(), cancel);
  found.push_back(search);
  // 3. The frontier walked from its slow end: each time the least energy
  // found faster than the last plan (by at least 1/kOneClockWalk of the
  // range down to the fastest plan found), searched from the cheapest plan so
  // far within that time and from the last plan's cheapest neighbour within it.
  double fastest_s = search.cost().time_s;
  for (const std::vector<UnitClockSearch>* list : {&found, &even}) {
    for (const UnitClockSearch& f : *list) fastest_s = std::min(fastest_s, f.cost().time_s);
  }
  const double spacing_s = (search.cost().time_s - fastest_s) / kOneClockWalk;
  double deadline_s = search.cost().time_s;
  for (int point = 0; point < kOneClockWalk && !Stop(cancel); ++point) {
    deadline_s = std::min(deadline_s * (1 - 1e-9), deadline_s - spacing_s);
    const UnitClockSearch* known = nullptr;
    for (const std::vector<UnitClockSearch>* list : {&found, &even}) {
      for (const UnitClockSearch& f : *list) {
        if (f.cost().time_s <= deadline_s && (!known || f.cost().energy_j < known->cost().energy_j)) known = &f;
      }
      if (known) break;
    }
    if (!known) break;
    UnitClockSearch from_known = *known;
    LeastWithin(from_known, deadline_s, cancel);
    if (BestNeighbourWithin(search, deadline_s, /*must_save=*/false)) LeastWithin(search, deadline_s, cancel);
    if (search.cost().time_s > deadline_s || from_known.cost().energy_j < search.cost().energy_j) search = from_known;
    found.push_back(search);
    deadline_s = search.cost().time_s;
  }
  std::vector<PlanChoice> plans;
  for (const std::vector<UnitClockSearch>* list : {&found, &even}) {
    for (const UnitClockSearch& f : *list) plans.push_back(f.choice());
  }
  return plans;
}

PlanChoice MoveClockRuns(const Problem& problem, const PlanChoice& choice, double deadline_s,
                         const std::atomic<bool>* cancel) {
  // Each GPU's runs of one clock, around the cycle: a run that wraps from the
  // last computation to the first is one.
  std::vector<Unit> runs;
  for (const std::vector<int>& order : problem.gpu_order) {
    const size_t n = order.size();
    if (n == 0) continue;
    auto mhz = [&](size_t k) { return problem.nodes[order[k % n]].options[choice[order[k % n]]].freq_mhz; };
    size_t first_change = 0;
    while (first_change < n && mhz(first_change) == mhz(first_change + n - 1)) ++first_change;
    if (first_change == n) first_change = 0;  // one clock all iteration: one run
    std::vector<int> ids;
    for (size_t k = first_change; k < first_change + n; ++k) {
      if (k > first_change && mhz(k) != mhz(k - 1)) {
        runs.push_back({ids, ClocksOfEveryComputation(problem, ids)});
        ids.clear();
      }
      ids.push_back(order[k % n]);
    }
    runs.push_back({ids, ClocksOfEveryComputation(problem, ids)});
  }
  const UnitClockModel model(problem, std::move(runs));
  UnitClockSearch search(model, model.StateOf(choice));
  SavingMovesWithin(search, deadline_s, cancel);
  return search.choice();
}

PlanChoice MoveLimitedPlansRuns(const Problem& problem, const PlanChoice& choice, const PlanChoice& limited,
                                const std::atomic<bool>* cancel) {
  // One run per GPU is a plan on one clock per GPU, which OneClockPerGpuPlans
  // searches for the whole frontier at once (moving them here cost 30% more
  // time at K = 0, GPT-3 16 x 256).
  const std::vector<int> changes = ClockChangesPerGpu(problem, limited);
  if (std::all_of(changes.begin(), changes.end(), [](int c) { return c == 0; })) return limited;
  const double deadline_s = std::max(EvaluatePlan(problem, choice).time_s, EvaluatePlan(problem, limited).time_s);
  return MoveClockRuns(problem, limited, deadline_s, cancel);
}

PlanChoice LimitClockChanges(const Problem& problem, const PlanChoice& choice, int max_changes_per_gpu) {
  PlanChoice out = choice;
  const std::vector<int> changes = ClockChangesPerGpu(problem, choice);
  for (int g = 0; g < problem.num_stages(); ++g) {
    if (changes[g] > max_changes_per_gpu) LimitGpu(problem, problem.gpu_order[g], max_changes_per_gpu, &out);
  }
  return out;
}

}  // namespace perseus
