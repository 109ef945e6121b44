// Reconstructing the sweep's optimum by undoing its steps.
#include "optimizer/sweep_replay.h"

#include <algorithm>
#include <functional>

namespace perseus::optimizer {

SweepStretch::SweepStretch(const FrontierSweep& sweep, double max_time_s) : durations_s(sweep.durations_s()) {
  const std::vector<double>& times = sweep.step_times_s();
  const std::vector<std::size_t>& first = sweep.step_first_change();
  // A replay at max_time_s or below never undoes a step that began above
  // it; the last such step is the first one it may interpolate within.
  const auto at_or_below = std::lower_bound(times.begin(), times.end(), max_time_s, std::greater<double>());
  const std::size_t from = at_or_below == times.begin() ? 0 : static_cast<std::size_t>(at_or_below - times.begin()) - 1;
  step_times_s.assign(times.begin() + static_cast<std::ptrdiff_t>(from), times.end());
  for (std::size_t k = from; k < first.size(); ++k) step_first_change.push_back(first[k] - first[from]);
  changes.assign(sweep.changes().begin() + static_cast<std::ptrdiff_t>(first[from]), sweep.changes().end());
}

SweepReplay::SweepReplay(const FrontierSweep& sweep)
    : step_times_s_(sweep.step_times_s()),
      step_first_change_(sweep.step_first_change()),
      changes_(sweep.changes()),
      duration_s_(sweep.durations_s()),
      step_(sweep.steps() - 1) {}

SweepReplay::SweepReplay(const SweepStretch& stretch)
    : step_times_s_(stretch.step_times_s),
      step_first_change_(stretch.step_first_change),
      changes_(stretch.changes),
      duration_s_(stretch.durations_s),
      step_(static_cast<int>(stretch.step_times_s.size()) - 2) {}

void SweepReplay::DurationsAt(double time_s, std::vector<double>& out) {
  const auto& times = step_times_s_;
  const auto& first = step_first_change_;
  const auto& changes = changes_;
  time_s = std::max(time_s, times.back());  // a deadline rounded a hair below the fastest time
  // Undo every step that ended before time_s; duration_s_ is then the
  // optimum at the end of step_.
  while (step_ >= 0 && time_s >= times[step_]) {
    for (size_t c = first[step_]; c < first[step_ + 1]; ++c) duration_s_[changes[c].node] = changes[c].duration_before_s;
    --step_;
  }
  out = duration_s_;
  if (step_ < 0) return;
  const double fraction = (time_s - times[step_ + 1]) / (times[step_] - times[step_ + 1]);
  for (size_t c = first[step_]; c < first[step_ + 1]; ++c) {
    const double after = duration_s_[changes[c].node];
    out[changes[c].node] = after + (changes[c].duration_before_s - after) * fraction;
  }
}

}  // namespace perseus::optimizer
