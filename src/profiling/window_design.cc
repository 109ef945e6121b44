#include "profiling/window_design.h"

#include <algorithm>

namespace perseus::profiling {
namespace {

WindowPlan Uniform(int stages, WindowConfig config, WindowPurpose purpose) {
  return WindowPlan{std::vector<WindowConfig>(stages, config), purpose};
}

// Even stages run `even`, odd stages `odd`.
WindowPlan Alternating(int stages, WindowConfig even, WindowConfig odd) {
  WindowPlan plan{{}, WindowPurpose::kBlocking};
  for (int s = 0; s < stages; ++s) plan.stages.push_back(s % 2 == 0 ? even : odd);
  return plan;
}

// Clock i's cross window: forwards alone at odd clocks, backwards alone at even.
WindowConfig Cross(int i) { return i % 2 == 1 ? WindowConfig{i, 0} : WindowConfig{0, i}; }

// Puts a reference window first, before every (reference_every - 1) body
// windows, and last.
std::vector<WindowPlan> WithReferences(int stages, const std::vector<WindowPlan>& body, int reference_every) {
  const int every = std::max(reference_every, 2);
  const WindowPlan reference = Uniform(stages, {0, 0}, WindowPurpose::kReference);
  std::vector<WindowPlan> out;
  for (size_t k = 0; k < body.size(); ++k) {
    if (out.size() % every == 0) out.push_back(reference);
    out.push_back(body[k]);
  }
  out.push_back(reference);
  return out;
}

// Stage s runs body window (k + s * L / S) mod L in window k.
std::vector<WindowPlan> Staggered(int stages, const std::vector<WindowPlan>& body) {
  const size_t length = body.size();
  std::vector<WindowPlan> out;
  for (size_t k = 0; k < length; ++k) {
    WindowPlan plan{{}, WindowPurpose::kStaggered};
    for (int s = 0; s < stages; ++s) plan.stages.push_back(body[(k + s * length / stages) % length].stages[s]);
    out.push_back(std::move(plan));
  }
  return out;
}

}  // namespace

const char* WindowPurposeName(WindowPurpose purpose) {
  switch (purpose) {
    case WindowPurpose::kReference:
      return "reference";
    case WindowPurpose::kDiagonal:
      return "diagonal";
    case WindowPurpose::kCross:
      return "cross";
    case WindowPurpose::kBlocking:
      return "blocking";
    case WindowPurpose::kRepeat:
      return "repeat";
    case WindowPurpose::kStaggered:
      return "staggered";
  }
  return "unknown";
}

std::vector<int> InterleavedOrder(int n) {
  int bits = 0;
  while ((1 << bits) < n) ++bits;
  std::vector<int> order;
  for (int k = 0; k < (1 << bits); ++k) {
    int reversed = 0;
    for (int b = 0; b < bits; ++b) reversed |= ((k >> b) & 1) << (bits - 1 - b);
    if (reversed < n) order.push_back(reversed);
  }
  return order;
}

std::vector<WindowPlan> BaseDesign(int stages, int num_clocks, const DesignOptions& options) {
  if (stages < 1 || num_clocks < 1) return {};
  std::vector<int> clocks;  // 1..num_clocks-1, interleaved
  for (int k : InterleavedOrder(num_clocks - 1)) clocks.push_back(k + 1);
  std::vector<WindowPlan> body;
  for (int i : clocks) body.push_back(Uniform(stages, {i, i}, WindowPurpose::kDiagonal));
  if (options.cross_windows) {
    for (int i : clocks) body.push_back(Uniform(stages, Cross(i), WindowPurpose::kCross));
  } else {  // a second pass, in the reverse order (drift)
    for (auto it = clocks.rbegin(); it != clocks.rend(); ++it) {
      body.push_back(Uniform(stages, {*it, *it}, WindowPurpose::kDiagonal));
    }
  }
  if (options.blocking_windows && num_clocks >= 2) {
    const WindowConfig high{0, 0}, low{num_clocks - 1, num_clocks - 1};
    const size_t n = body.size();
    body.insert(body.begin() + static_cast<long>(3 * n / 4), Alternating(stages, low, high));
    body.insert(body.begin() + static_cast<long>(n / 4), Alternating(stages, high, low));
  }
  if (options.stagger_stages && stages > 1) body = Staggered(stages, body);
  return WithReferences(stages, body, options.reference_every);
}

std::vector<WindowPlan> RepeatDesign(int stages, const std::vector<std::vector<int>>& clock_indices,
                                     const DesignOptions& options) {
  size_t windows = 0;
  for (int s = 0; s < stages && s < static_cast<int>(clock_indices.size()); ++s) {
    windows = std::max(windows, clock_indices[s].size());
  }
  std::vector<WindowPlan> body;
  for (size_t k = 0; k < windows; ++k) {
    WindowPlan plan{std::vector<WindowConfig>(stages, WindowConfig{0, 0}), WindowPurpose::kRepeat};
    for (int s = 0; s < stages && s < static_cast<int>(clock_indices.size()); ++s) {
      if (k < clock_indices[s].size()) plan.stages[s] = {clock_indices[s][k], clock_indices[s][k]};
    }
    body.push_back(plan);
  }
  if (body.empty()) return {};
  return WithReferences(stages, body, options.reference_every);
}

}  // namespace perseus::profiling
