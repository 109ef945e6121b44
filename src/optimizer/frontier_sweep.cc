// The min-cut sweep over iteration times.
#include "optimizer/frontier_sweep.h"

#include <algorithm>
#include <cmath>

#include "optimizer/critical_path.h"

namespace perseus::optimizer {
namespace {
constexpr int kSource = 0;
constexpr int kSink = 1;
constexpr int kMaxPathRounds = 64;
}  // namespace

FrontierSweep::FrontierSweep(const Problem& problem, const std::vector<NodeCosts>& costs, double unit_s)
    : problem_(problem), costs_(costs), unit_s_(unit_s) {
  duration_s_.resize(problem.num_nodes());
  for (int i = 0; i < problem.num_nodes(); ++i) duration_s_[i] = costs[i].max_time_s();
  direction_.assign(problem.num_nodes(), 0);
  time_s_ = ForwardPass(problem_, duration_s_, earliest_start_);
}

void FrontierSweep::BuildCutNetwork(double tol) {
  const int n = problem_.num_nodes();
  BackwardPass(problem_, duration_s_, time_s_, latest_finish_);
  event_of_.assign(n, -1);
  critical_.clear();
  int events = 2;
  for (int i = 0; i < n; ++i) {
    if (latest_finish_[i] - earliest_start_[i] - duration_s_[i] <= tol) {
      event_of_[i] = events;
      events += 2;
      critical_.push_back(i);
    }
  }
  cut_.Reset(events);
  for (int i : critical_) {
    const int s = event_of_[i];
    const double d = duration_s_[i];
    const double upper = costs_[i].ShortenRate(d);
    const double lower = costs_[i].LengthenRate(d);
    cut_.AddArc(s, s + 1, lower, std::isinf(upper) ? kInfiniteCapacity : std::max(upper, lower));
    const double finish = earliest_start_[i] + d;
    if (earliest_start_[i] <= tol) cut_.AddArc(kSource, s, 0, kInfiniteCapacity);
    if (finish >= time_s_ - tol) cut_.AddArc(s + 1, kSink, 0, kInfiniteCapacity);
    for (int j : problem_.nodes[i].succs) {
      if (event_of_[j] >= 0 && latest_finish_[j] - duration_s_[j] - finish <= tol) {
        cut_.AddArc(s + 1, event_of_[j], 0, kInfiniteCapacity);
      }
    }
  }
}

bool FrontierSweep::ReadCut() {
  for (int i : moved_) direction_[i] = 0;
  moved_.clear();
  bool shortens = false;
  for (int i : critical_) {
    const int s = event_of_[i];
    if (source_side_[s] && !source_side_[s + 1]) direction_[i] = -1, shortens = true;
    else if (!source_side_[s] && source_side_[s + 1]) direction_[i] = +1;
    else continue;
    moved_.push_back(i);
  }
  return shortens;
}

double FrontierSweep::BreakpointLimit() const {
  double step = unit_s_;
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
    best_pred_.assign(n, -1);
    int last = 0;
    double longest = -1;
    for (int i = 0; i < n; ++i) {
      double finish = trial_start_[i] + duration_s_[i] + step * direction_[i];
      if (finish > longest) longest = finish, last = i;
      for (int v : problem_.nodes[i].succs) {
        if (finish > trial_start_[v]) trial_start_[v] = finish, best_pred_[v] = i;
      }
    }
    if (longest <= time_s_ - step + time_s_ * kTimeEps) return step;
    double base = 0, slope = 0;
    for (int i = last; i >= 0; i = best_pred_[i]) base += duration_s_[i], slope += direction_[i];
    if (slope + 1 <= 0) return 0;
    double next = (time_s_ - base) / (slope + 1);
    if (!(next < step)) return step;
    step = std::max(0.0, next);
  }
  return step;
}

bool FrontierSweep::Step() {
  // The critical set is exact up to rounding; if rounding hid a path the cut
  // cannot shorten, widen the tolerance and cut again.
  for (double tol = time_s_ * kTimeEps; tol < unit_s_; tol *= 100) {
    BuildCutNetwork(tol);
    if (cut_.Solve(kSource, kSink, source_side_) >= kInfiniteCapacity / 2) return false;
    if (!ReadCut()) return false;
    double step = PathLimit(BreakpointLimit());
    if (step <= time_s_ * kTimeEps) continue;
    for (int i : moved_) {
      duration_s_[i] = std::clamp(duration_s_[i] + step * direction_[i], costs_[i].min_time_s(), costs_[i].max_time_s());
    }
    time_s_ = ForwardPass(problem_, duration_s_, earliest_start_);
    ++steps_;
    return true;
  }
  return false;
}

}  // namespace perseus::optimizer
