#include "runtime/server/profiling_windows.h"

#include <algorithm>
#include <cmath>
#include <set>

namespace perseus::server {

namespace {

// Ranks report each span's midpoint on their own clock, which runs at the
// job's pace (in emulations it is virtual). A rank's reports are placed on
// the server's profiling clock by one offset: its first timed report's
// midpoint against the server's midpoint of that window.
std::map<int, double> RankTimeOffsets(const ProfilingState& state, const WindowReportMap& reports) {
  std::map<int, double> offsets;
  for (const auto& [key, r] : reports) {
    if (r.mid_s < 0 || offsets.count(key.second)) continue;
    const ProfilingWindowPlan& p = state.windows[key.first];
    offsets[key.second] = (p.opened_s + p.closed_s) / 2 - r.mid_s;
  }
  return offsets;
}

}  // namespace

std::vector<profiling::WindowObservation> StageObservations(const ProfilingState& state, int stage,
                                                            const std::vector<const RankInfo*>& stage_ranks,
                                                            const WindowReportMap& reports) {
  std::vector<profiling::WindowObservation> out;
  const std::map<int, double> offsets = RankTimeOffsets(state, reports);
  for (int w = 0; w < static_cast<int>(state.windows.size()); ++w) {
    const ProfilingWindowPlan& plan = state.windows[w];
    for (const RankInfo* r : stage_ranks) {
      auto it = reports.find({w, r->rank});
      if (it == reports.end() || it->second.energy_j < 0) continue;
      const WindowReport& rep = it->second;
      profiling::WindowObservation o;
      o.forward_index = plan.stages[stage].first;
      o.backward_index = plan.stages[stage].second;
      auto offset = offsets.find(r->rank);
      o.mid_time_s = rep.mid_s >= 0 && offset != offsets.end() ? rep.mid_s + offset->second
                                                               : (plan.opened_s + plan.closed_s) / 2;
      o.iterations = rep.iterations;
      o.cycle_time_s = rep.cycle_time_s;
      o.energy_j = rep.energy_j;
      o.forward_count = rep.forward.count;
      o.forward_time_s = rep.forward.time_s;
      o.forward_time_sq_s2 = rep.forward.time_sq_s2;
      o.backward_count = rep.backward.count;
      o.backward_time_s = rep.backward.time_s;
      o.backward_time_sq_s2 = rep.backward.time_sq_s2;
      out.push_back(o);
    }
  }
  return out;
}

Result<Profile> ProfileFromEstimates(const std::vector<profiling::StageEstimate>& stages, int chunks,
                                     const std::vector<double>& max_power_w) {
  if (max_power_w.size() != stages.size()) {
    return Status::Internal("power limits for " + std::to_string(max_power_w.size()) + " stages, estimates for " +
                            std::to_string(stages.size()));
  }
  Profile profile;
  for (size_t s = 0; s < stages.size(); ++s) {
    const StageProfile fitted = profiling::ToStageProfile(stages[s]);
    // A computation draws at least what the GPU draws waiting and at most
    // its power limit.
    const double floor_w = std::max(stages[s].blocking_power_w, 1.0);
    const double ceiling_w = std::max(max_power_w[s], floor_w);
    StageProfile stage;
    for (Instruction ins : {Instruction::kForward, Instruction::kBackward}) {
      for (size_t i = 0; i < fitted.at(ins).size(); ++i) {
        if (!stages[s].clocks[i].measured) continue;  // only filled in by smoothness
        FreqPoint p = fitted.at(ins)[i];
        p.energy_j = std::clamp(p.energy_j, floor_w * p.time_s, ceiling_w * p.time_s);
        p.time_s *= chunks;
        p.energy_j *= chunks;
        stage.at(ins).push_back(p);
      }
    }
    if (stage.at(Instruction::kForward).empty()) {
      return Status::Internal("stage " + std::to_string(s) + ": no clock was measured");
    }
    profile.stages.push_back(std::move(stage));
  }
  return profile;
}

double MedianBlockingPowerW(const std::vector<profiling::StageEstimate>& stages) {
  std::vector<double> p;
  for (const auto& s : stages) p.push_back(s.blocking_power_w);
  if (p.empty()) return 0;
  std::sort(p.begin(), p.end());
  return p[p.size() / 2];
}

double ProfilingJobTimeS(const ProfilingState& state, const WindowReportMap& reports, const ProfilingOptions& options) {
  double total_s = 0;
  for (int w = 0; w < state.current && w < static_cast<int>(state.windows.size()); ++w) {
    double per_iteration_s = 0;
    for (auto it = reports.lower_bound({w, -1}); it != reports.end() && it->first.first == w; ++it) {
      per_iteration_s = std::max(per_iteration_s, it->second.cycle_time_s / it->second.iterations);
    }
    total_s += per_iteration_s * (options.warmup_iterations + options.window_iterations + 1);
  }
  return total_s;
}

}  // namespace perseus::server
