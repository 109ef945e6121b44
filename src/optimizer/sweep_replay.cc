// Reconstructing the sweep's optimum by undoing its steps.
#include "optimizer/sweep_replay.h"

#include <algorithm>

namespace perseus::optimizer {

SweepReplay::SweepReplay(const FrontierSweep& sweep)
    : sweep_(sweep), duration_s_(sweep.durations_s()), step_(sweep.steps() - 1) {}

void SweepReplay::DurationsAt(double time_s, std::vector<double>& out) {
  const auto& times = sweep_.step_times_s();
  const auto& first = sweep_.step_first_change();
  const auto& changes = sweep_.changes();
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
