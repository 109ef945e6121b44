// The profiling sweep's decisions.
#include "control/profiling_sweep.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <set>

#include "profiling/window_design.h"

namespace perseus::control {
namespace {

void AppendWindows(const std::vector<profiling::WindowPlan>& plans, ProfilingState* p) {
  for (const profiling::WindowPlan& w : plans) {
    ProfilingWindowPlan plan;
    for (const profiling::WindowConfig& c : w.stages) plan.stages.emplace_back(c.forward_index, c.backward_index);
    plan.purpose = profiling::WindowPurposeName(w.purpose);
    p->windows.push_back(std::move(plan));
  }
}

}  // namespace

std::vector<int> SweepClocks(const std::vector<std::vector<int>>& rank_clocks_mhz, const ProfilingOptions& options) {
  if (rank_clocks_mhz.empty()) return {};
  std::set<int> common(rank_clocks_mhz[0].begin(), rank_clocks_mhz[0].end());
  for (const std::vector<int>& clocks : rank_clocks_mhz) {
    std::set<int> mine(clocks.begin(), clocks.end());
    std::set<int> both;
    std::set_intersection(common.begin(), common.end(), mine.begin(), mine.end(), std::inserter(both, both.end()));
    common = std::move(both);
  }
  std::vector<int> all;
  for (auto it = common.rbegin(); it != common.rend(); ++it) {
    if (*it >= options.min_clock_mhz) all.push_back(*it);
  }
  size_t stride = static_cast<size_t>(options.clock_stride);
  if (stride == 0) {
    const size_t keep = static_cast<size_t>(std::max(options.max_clocks, 2));
    stride = all.size() <= keep ? 1 : (all.size() - 1 + keep - 2) / (keep - 1);
  }
  std::vector<int> out;
  for (size_t i = 0; i < all.size(); i += stride) out.push_back(all[i]);
  if (!all.empty() && out.back() != all.back()) out.push_back(all.back());
  return out;
}

std::vector<std::vector<int>> CommonLengthClocks(std::vector<std::vector<int>> clocks_per_stage) {
  size_t n = SIZE_MAX;
  for (const auto& c : clocks_per_stage) n = std::min(n, c.size());
  if (n == SIZE_MAX || n == 0) return clocks_per_stage;
  for (auto& c : clocks_per_stage) {
    if (c.size() == n) continue;
    std::vector<int> cut;
    for (size_t i = 0; i < n; ++i) {
      const double at = n == 1 ? 0.0 : static_cast<double>(i) * static_cast<double>(c.size() - 1) / static_cast<double>(n - 1);
      cut.push_back(c[static_cast<size_t>(std::lround(at))]);
    }
    c = std::move(cut);
  }
  return clocks_per_stage;
}

ProfilingState StartSweep(std::vector<std::vector<int>> clocks_per_stage, const ProfilingOptions& options) {
  ProfilingState p;
  const int stages = static_cast<int>(clocks_per_stage.size());
  p.clocks_mhz = CommonLengthClocks(std::move(clocks_per_stage));
  profiling::DesignOptions design;
  design.reference_every = options.reference_every;
  design.cross_windows = !options.single_clock_windows;
  AppendWindows(profiling::BaseDesign(stages, static_cast<int>(p.clocks_mhz[0].size()), design), &p);
  return p;
}

bool CloseWindow(ProfilingState* state, double now_s) {
  state->windows[state->current].closed_s = now_s;
  ++state->current;
  return !state->active();
}

void OpenWindow(ProfilingState* state, double now_s) { state->windows[state->current].opened_s = now_s; }

int AddRepeatRound(ProfilingState* state, const std::vector<std::vector<int>>& repeat, const ProfilingOptions& options,
                   double spent_s) {
  const bool any = std::any_of(repeat.begin(), repeat.end(), [](const std::vector<int>& r) { return !r.empty(); });
  if (!any || state->rounds >= options.max_repeat_rounds) return 0;
  std::vector<profiling::WindowPlan> more = profiling::RepeatDesign(static_cast<int>(repeat.size()), repeat);
  const int done = state->current;
  const double per_window_s = done > 0 ? spent_s / done : 0;
  if (options.time_budget_s > 0 && per_window_s > 0) {
    const double affordable = std::floor((options.time_budget_s - spent_s) / per_window_s);
    more.resize(static_cast<size_t>(std::clamp<double>(affordable, 0, static_cast<double>(more.size()))));
  }
  if (more.empty()) return 0;
  ++state->rounds;
  AppendWindows(more, state);
  return static_cast<int>(more.size());
}

}  // namespace perseus::control
