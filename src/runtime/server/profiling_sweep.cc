#include "runtime/server/profiling_sweep.h"

#include <algorithm>
#include <set>

namespace perseus::server {

std::vector<int> SweepClocks(const std::vector<const RankInfo*>& stage_ranks, const ProfilingOptions& options) {
  if (stage_ranks.empty()) return {};
  std::set<int> common(stage_ranks[0]->sm_clocks_mhz.begin(), stage_ranks[0]->sm_clocks_mhz.end());
  for (const RankInfo* r : stage_ranks) {
    std::set<int> mine(r->sm_clocks_mhz.begin(), r->sm_clocks_mhz.end());
    std::set<int> both;
    std::set_intersection(common.begin(), common.end(), mine.begin(), mine.end(), std::inserter(both, both.end()));
    common = std::move(both);
  }
  std::vector<int> all;
  for (auto it = common.rbegin(); it != common.rend(); ++it) {
    if (*it >= options.min_clock_mhz) all.push_back(*it);
  }
  std::vector<int> out;
  for (size_t i = 0; i < all.size(); i += options.clock_stride) out.push_back(all[i]);
  if (!all.empty() && out.back() != all.back()) out.push_back(all.back());
  return out;
}

std::optional<StagePoint> MeasuredStagePoint(const std::vector<const RankInfo*>& stage_ranks,
                                             const MeasurementMap& measurements, int freq_mhz, int min_reports) {
  StagePoint p;
  p.forward.freq_mhz = p.backward.freq_mhz = freq_mhz;
  for (const RankInfo* r : stage_ranks) {
    auto it = measurements.find({r->rank, freq_mhz});
    if (it == measurements.end() || it->second.reports < min_reports) return std::nullopt;
    const Measurement& m = it->second;
    if (m.forward.count == 0 || m.backward.count == 0) return std::nullopt;
    p.forward.time_s += m.forward.time_s / m.forward.count;
    p.forward.energy_j += m.forward.energy_j / m.forward.count;
    p.backward.time_s += m.backward.time_s / m.backward.count;
    p.backward.energy_j += m.backward.energy_j / m.backward.count;
  }
  double n = static_cast<double>(stage_ranks.size());
  for (FreqPoint* f : {&p.forward, &p.backward}) {
    f->time_s /= n;
    f->energy_j /= n;
  }
  return p;
}

void AdvanceSweep(StageSweep* sweep, double energy_j, const ProfilingOptions& options) {
  if (sweep->last_energy_j >= 0 && energy_j > sweep->last_energy_j) {
    ++sweep->rises;
  } else {
    sweep->rises = 0;
  }
  sweep->last_energy_j = energy_j;
  bool last = sweep->index + 1 >= static_cast<int>(sweep->clocks_mhz.size());
  if (last || sweep->rises >= options.max_energy_rises) {
    sweep->done = true;
  } else {
    ++sweep->index;
  }
}

Result<Profile> BuildMeasuredProfile(const std::vector<std::vector<const RankInfo*>>& ranks_by_stage,
                                     const MeasurementMap& measurements, const std::vector<StageSweep>& sweeps,
                                     int min_reports, int chunks) {
  Profile profile;
  for (size_t s = 0; s < sweeps.size(); ++s) {
    StageProfile stage;
    for (int i = 0; i <= sweeps[s].index && i < static_cast<int>(sweeps[s].clocks_mhz.size()); ++i) {
      std::optional<StagePoint> p =
          MeasuredStagePoint(ranks_by_stage[s], measurements, sweeps[s].clocks_mhz[i], min_reports);
      if (!p) continue;
      for (FreqPoint* f : {&p->forward, &p->backward}) {
        f->time_s *= chunks;
        f->energy_j *= chunks;
      }
      stage.at(Instruction::kForward).push_back(p->forward);
      stage.at(Instruction::kBackward).push_back(p->backward);
    }
    if (stage.at(Instruction::kForward).empty()) {
      return Status::Internal("stage " + std::to_string(s) + ": no clock was fully measured");
    }
    profile.stages.push_back(std::move(stage));
  }
  return profile;
}

std::optional<double> MeasuredBlockingPowerW(const MeasurementMap& measurements) {
  double time_s = 0, energy_j = 0;
  for (const auto& [key, m] : measurements) {
    time_s += m.blocking_time_s;
    energy_j += m.blocking_energy_j;
  }
  if (time_s <= 0) return std::nullopt;
  return energy_j / time_s;
}

}  // namespace perseus::server
