// The min-cut sweep over iteration times.
#include "optimizer/frontier_sweep.h"

#include <algorithm>
#include <cmath>

#include "optimizer/critical_path.h"

namespace perseus::optimizer {
namespace {
constexpr int kMaxPathRounds = 64;
}  // namespace

FrontierSweep::FrontierSweep(const Problem& problem, const std::vector<NodeCosts>& costs, MinCut::Engine engine)
    : problem_(problem), dag_(problem), costs_(costs), cut_(2 * problem.num_nodes() + 2, engine) {
  const int n = problem.num_nodes();
  duration_s_.resize(n);
  for (int i = 0; i < n; ++i) {
    duration_s_[i] = costs[i].max_time_s();
    relaxation_cost_j_ += costs[i].HullCost(duration_s_[i]);
  }
  direction_.assign(n, 0);
  shorten_rate_.resize(n);
  lengthen_rate_.resize(n);
  for (int i = 0; i < n; ++i) RefreshRates(i);
  time_s_ = ForwardPass(dag_, duration_s_, earliest_start_);
  step_times_s_.push_back(time_s_);
  step_first_change_.push_back(0);
  for (int i = 0; i < n; ++i) cut_.AddArc(Start(i), Start(i) + 1);
  for (int i = 0; i < n; ++i) {
    for (int j : problem.nodes[i].succs) dependency_arcs_.push_back({i, j, cut_.AddArc(Start(i) + 1, Start(j))});
    if (problem.nodes[i].preds.empty()) source_arcs_.emplace_back(i, cut_.AddArc(MinCut::kSource, Start(i)));
    if (problem.nodes[i].succs.empty()) sink_arcs_.emplace_back(i, cut_.AddArc(Start(i) + 1, MinCut::kSink));
  }
}

void FrontierSweep::RefreshRates(int i) {
  shorten_rate_[i] = costs_[i].ShortenRate(duration_s_[i]);
  lengthen_rate_[i] = costs_[i].LengthenRate(duration_s_[i]);
}

void FrontierSweep::BuildCutNetwork(double tol) {
  // Computations off the critical path and dependencies with slack get
  // bounds [0, 0]: they neither block nor cost a cut.
  const int n = problem_.num_nodes();
  BackwardPass(dag_, duration_s_, time_s_, latest_finish_);
  critical_flag_.assign(n, 0);
  critical_.clear();
  latest_start_.resize(n);
  for (int i = 0; i < n; ++i) {
    const double d = duration_s_[i];
    latest_start_[i] = latest_finish_[i] - d;
    if (latest_finish_[i] - earliest_start_[i] - d <= tol) {
      critical_flag_[i] = 1;
      critical_.push_back(i);
      SetComputationBounds(i);
    } else {
      cut_.SetBounds(i, 0, 0);
    }
  }
  dependency_kind_.resize(dependency_arcs_.size());
  for (size_t k = 0; k < dependency_arcs_.size(); ++k) {
    const DependencyArc& dep = dependency_arcs_[k];
    const bool both_critical = critical_flag_[dep.from] && critical_flag_[dep.to];
    const bool tight = both_critical && latest_finish_[dep.to] - duration_s_[dep.to] - earliest_start_[dep.from] -
                                                duration_s_[dep.from] <= tol;
    cut_.SetBounds(dep.arc, 0, tight ? kInfiniteCapacity : 0);
    dependency_kind_[k] = tight ? kTightDependency : both_critical ? kLooseDependency : kOffNetwork;
  }
  for (auto [i, arc] : source_arcs_) cut_.SetBounds(arc, 0, critical_flag_[i] ? kInfiniteCapacity : 0);
  loose_sinks_.clear();
  for (auto [i, arc] : sink_arcs_) {
    const bool tight = critical_flag_[i] && earliest_start_[i] + duration_s_[i] >= time_s_ - tol;
    cut_.SetBounds(arc, 0, tight ? kInfiniteCapacity : 0);
    if (critical_flag_[i] && !tight) loose_sinks_.push_back(i);
  }
  latest_start_drop_s_ = 0;
  network_tolerance_first_ = tol == time_s_ * kTimeEps;
}

void FrontierSweep::SetComputationBounds(int i) {
  const double upper = shorten_rate_[i], lower = lengthen_rate_[i];
  cut_.SetBounds(i, lower, std::isinf(upper) ? kInfiniteCapacity : std::max(upper, lower));
}

bool FrontierSweep::ReadCut() {
  for (int i : moved_) direction_[i] = 0;
  moved_.clear();
  bool shortens = false;
  for (int i : critical_) {
    const int s = Start(i);
    if (source_side_[s] && !source_side_[s + 1]) direction_[i] = -1, shortens = true;
    else if (!source_side_[s] && source_side_[s + 1]) direction_[i] = +1;
    else continue;
    moved_.push_back(i);
  }
  return shortens;
}

double FrontierSweep::BreakpointLimit() const {
  double step = time_s_;
  for (int i : moved_) {
    const double d = duration_s_[i];
    step = std::min(step, direction_[i] < 0 ? d - costs_[i].HullVertexBelow(d) : costs_[i].HullVertexAbove(d) - d);
  }
  return step;
}

double FrontierSweep::PathLimit(double step) {
  // Dinkelbach iteration on the longest path of d + step * direction: while
  // some path p ends after time_s_ - step, move to where it ends exactly then.
  const int n = problem_.num_nodes();
  for (int round = 0; round < kMaxPathRounds && step > 0; ++round) {
    trial_start_.assign(n, 0.0);
    int last = 0;
    double longest = -1;
    // What Step needs to know whether the network stays the critical
    // subgraph after this trial (see critical_set_current_).
    double least_slack_s = kInfiniteCapacity;
    bool crosses_back = false;
    for (int i = 0, k = 0; i < n; ++i) {
      // Summed as ForwardPass will sum the stepped durations, so Step can keep these.
      double finish = trial_start_[i] + (duration_s_[i] + step * direction_[i]);
      if (finish > longest) longest = finish, last = i;
      if (!critical_flag_[i]) least_slack_s = std::min(least_slack_s, latest_start_[i] - trial_start_[i]);
      const bool finish_on_sink_side = !source_side_[Start(i) + 1];
      for (int v : dag_.succs(i)) {
        trial_start_[v] = std::max(trial_start_[v], finish);
        const DependencyKind kind = dependency_kind_[k++];
        if (kind == kLooseDependency) {
          least_slack_s = std::min(least_slack_s, latest_start_[v] - finish);
        } else if (kind == kTightDependency) {
          crosses_back |= finish_on_sink_side && source_side_[Start(v)];
        }
      }
    }
    trial_least_slack_s_ = least_slack_s, trial_crosses_back_ = crosses_back;
    trial_step_s_ = step, trial_longest_s_ = longest;
    if (longest <= time_s_ - step + time_s_ * kTimeEps) return step;
    double base = 0, slope = 0;
    for (int i = last; i >= 0; i = TrialPred(i, step)) base += duration_s_[i], slope += direction_[i];
    if (slope + 1 <= 0) return 0;
    double next = (time_s_ - base) / (slope + 1);
    if (!(next < step)) return step;
    step = std::max(0.0, next);
  }
  return step;
}

int FrontierSweep::TrialPred(int v, double step) const {
  // The predecessor a pass in id order that kept each start's first
  // longest predecessor would keep: the least id ending exactly at v's
  // start (the finish summed as the pass sums it).
  int pred = -1;
  if (!(trial_start_[v] > 0)) return pred;
  for (int p : dag_.preds(v)) {
    if (trial_start_[p] + (duration_s_[p] + step * direction_[p]) == trial_start_[v] && (pred < 0 || p < pred)) pred = p;
  }
  return pred;
}

FrontierSweep::Outcome FrontierSweep::TryStep(double tol, bool rebuild) {
  if (rebuild) {
    BuildCutNetwork(tol);
  } else {
    for (int i : moved_) SetComputationBounds(i);  // their rates changed
  }
  if (!cut_.FindCut(source_side_)) return Outcome::kDone;
  if (!ReadCut()) return Outcome::kDone;
  const double breakpoint = BreakpointLimit();
  const double step = PathLimit(breakpoint);
  // A step too small to trust is taken only when it brings a computation
  // to a hull vertex, which changes the cut; one a path ends is rounding.
  if (step <= 0 || (step <= time_s_ * kTimeEps && step < breakpoint)) return Outcome::kRetry;
  bool clamped = false;
  int lengthened = 0;
  for (int i : moved_) {
    lengthened += direction_[i] > 0;
    changes_.push_back({i, duration_s_[i]});
    relaxation_cost_j_ -= costs_[i].HullCost(duration_s_[i]);
    const double stepped = duration_s_[i] + step * direction_[i];
    duration_s_[i] = std::clamp(stepped, costs_[i].min_time_s(), costs_[i].max_time_s());
    clamped |= duration_s_[i] != stepped;
    relaxation_cost_j_ += costs_[i].HullCost(duration_s_[i]);
    RefreshRates(i);
  }
  // PathLimit's last trial already ran the forward pass of these durations.
  const bool forward_pass_kept = step == trial_step_s_ && !clamped;
  if (forward_pass_kept) {
    earliest_start_.swap(trial_start_);
    time_s_ = trial_longest_s_;
  } else {
    time_s_ = ForwardPass(dag_, duration_s_, earliest_start_);
  }
  // Whether the network, with the moved computations' new rates, is still
  // the critical subgraph a network built afresh would be. A path of the
  // network crosses the cut forward once more than backward; unless it
  // crosses back by a dependency (then it crosses forward twice and leaves
  // the critical set), it shrank by `step` as the iteration did and stays
  // critical. Outside the network: the iteration shrank by `step` and a
  // tail (the longest path from a computation's start to the end) grew by
  // at most step x (computations lengthened), so every latest start fell
  // by at most step x (1 + lengthened) since the network was built; with
  // the exact earliest starts of the trial, every slack stays above
  // latest_start_ - drop - earliest start, which must exceed the tolerance
  // (a loose sink's slack is exact).
  latest_start_drop_s_ += step * (1 + lengthened);
  double least_slack_s = trial_least_slack_s_ - latest_start_drop_s_;
  for (int i : loose_sinks_) least_slack_s = std::min(least_slack_s, time_s_ - earliest_start_[i] - duration_s_[i]);
  critical_set_current_ = forward_pass_kept && step == breakpoint && network_tolerance_first_ &&
                          !trial_crosses_back_ && least_slack_s > time_s_ * kTimeEps;
  step_times_s_.push_back(time_s_);
  step_first_change_.push_back(changes_.size());
  return Outcome::kTaken;
}

bool FrontierSweep::Step() {
  // The last step's network with the moved computations' new rates, where
  // that is still the critical subgraph; should it not step after all, the
  // network is built afresh.
  if (critical_set_current_ && reuse_networks_) {
    critical_set_current_ = false;
    if (TryStep(0, /*rebuild=*/false) == Outcome::kTaken) return ++reused_networks_, true;
  }
  // The critical set is exact up to rounding; if rounding hid a path the cut
  // cannot shorten, widen the tolerance and cut again.
  for (double tol = time_s_ * kTimeEps; tol < time_s_ * 1e-4; tol *= 100) {
    const Outcome outcome = TryStep(tol, /*rebuild=*/true);
    if (outcome != Outcome::kRetry) return outcome == Outcome::kTaken;
  }
  return false;
}

}  // namespace perseus::optimizer
