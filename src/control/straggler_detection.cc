#include "control/straggler_detection.h"

#include <algorithm>
#include <cmath>

#include "common/stats.h"

namespace perseus::control {

std::vector<std::optional<double>> EstimateSlowdowns(const std::vector<PipelineSamples>& pipelines, int window) {
  std::vector<std::optional<double>> ratio(pipelines.size());
  for (size_t p = 0; p < pipelines.size(); ++p) {
    const PipelineSamples& s = pipelines[p];
    if (static_cast<int>(s.compute_times_s.size()) < window || s.predicted_time_s <= 0) continue;
    std::vector<double> last(s.compute_times_s.end() - window, s.compute_times_s.end());
    ratio[p] = Median(std::move(last)) / s.predicted_time_s;
  }
  std::vector<std::optional<double>> slowdown(pipelines.size());
  for (size_t p = 0; p < pipelines.size(); ++p) {
    if (!ratio[p]) continue;
    std::vector<double> others;
    for (size_t q = 0; q < pipelines.size(); ++q) {
      if (q != p && ratio[q]) others.push_back(*ratio[q]);
    }
    if (others.empty()) continue;
    double ref = Median(std::move(others));
    if (ref > 0) slowdown[p] = *ratio[p] / ref;
  }
  return slowdown;
}

std::vector<Straggler> UpdateDetectedStragglers(const std::vector<Straggler>& current,
                                                const std::vector<std::optional<double>>& slowdowns,
                                                const StragglerOptions& options, bool* changed) {
  *changed = false;
  const double recover_below = 1 + (options.threshold - 1) / 2;
  std::vector<Straggler> out;
  for (const Straggler& s : current) {
    std::optional<double> est =
        s.pipeline < static_cast<int>(slowdowns.size()) ? slowdowns[s.pipeline] : std::nullopt;
    if (!s.detected || !est) {
      out.push_back(s);
    } else if (*est < recover_below) {
      *changed = true;  // recovered
    } else if (std::fabs(*est - s.slowdown) > 0.02 * s.slowdown) {
      out.push_back({s.pipeline, *est, true});
      *changed = true;
    } else {
      out.push_back(s);
    }
  }
  for (size_t p = 0; p < slowdowns.size(); ++p) {
    bool known = std::any_of(current.begin(), current.end(),
                             [&](const Straggler& s) { return s.pipeline == static_cast<int>(p); });
    if (!known && slowdowns[p] && *slowdowns[p] > options.threshold) {
      out.push_back({static_cast<int>(p), *slowdowns[p], true});
      *changed = true;
    }
  }
  std::sort(out.begin(), out.end(), [](const Straggler& a, const Straggler& b) { return a.pipeline < b.pipeline; });
  return out;
}

}  // namespace perseus::control
