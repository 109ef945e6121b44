#include "runtime/server/job_history.h"

#include <algorithm>

namespace perseus::server {

namespace {

std::vector<int> PlanIndices(const ControlState& state) {
  std::vector<int> out;
  for (const PipelinePlan& p : state.pipelines) out.push_back(p.plan_index);
  return out;
}

bool SameStragglers(const std::vector<Straggler>& a, const std::vector<Straggler>& b) {
  return std::equal(a.begin(), a.end(), b.begin(), b.end(), [](const Straggler& x, const Straggler& y) {
    return x.pipeline == y.pipeline && x.slowdown == y.slowdown && x.detected == y.detected;
  });
}

bool NewCarbonDecision(const CarbonState& before, const CarbonState& after) {
  return after.evaluated && (!before.evaluated || after.last_eval_unix_s != before.last_eval_unix_s ||
                             after.explanation != before.explanation);
}

Json CarbonDecisionJson(const CarbonState& c) {
  return {{"decided_unix_s", c.last_eval_unix_s}, {"intensity_g_per_kwh", c.intensity_g_per_kwh},
          {"stale", c.stale}, {"forecast_g_per_kwh", c.forecast_g_per_kwh},
          {"lambda_g_per_s", c.lambda_g_per_s}, {"plan_index", c.plan_index},
          {"explanation", c.explanation}};
}

Json IterationJson(const IterationPoint& p) {
  return {{"pipeline", p.pipeline}, {"iteration", p.iteration}, {"unix_s", p.unix_s},
          {"plan_index", p.plan_index}, {"time_s", p.time_s},
          {"energy_j", p.energy_j ? Json(*p.energy_j) : Json(nullptr)},
          {"predicted_time_s", p.predicted_time_s}, {"predicted_energy_j", p.predicted_energy_j}};
}

}  // namespace

void JobHistory::RecordState(const ControlState& before, const ControlState& after, int64_t now_unix_s) {
  const bool decided = NewCarbonDecision(before.carbon, after.carbon);
  const bool changed = events_.empty() || before.phase != after.phase ||
                       PlanIndices(before) != PlanIndices(after) ||
                       !SameStragglers(before.stragglers, after.stragglers) || decided;
  if (!changed) return;
  CountPlanSwitches(before, after);
  Event e{now_unix_s, after.phase, PlanIndices(after), after.stragglers, std::nullopt};
  if (decided) {
    e.carbon = after.carbon;
    e.carbon->history.clear();
    e.carbon->history_mix_mw.clear();
  }
  events_.push_back(std::move(e));
  if (events_.size() > kMaxEvents) {
    events_.pop_front();
    ++dropped_events_;
  }
}

void JobHistory::CountPlanSwitches(const ControlState& before, const ControlState& after) {
  if (before.pipelines.size() != after.pipelines.size()) return;  // plans first handed out: no switch
  for (size_t p = 0; p < after.pipelines.size(); ++p) {
    if (before.pipelines[p].plan_index != after.pipelines[p].plan_index) ++totals_[static_cast<int>(p)].plan_switches;
  }
}

void JobHistory::RecordIteration(const IterationPoint& point) {
  PipelineTotals& t = totals_[point.pipeline];
  ++t.iterations;
  if (point.energy_j) {
    ++t.measured_iterations;
    t.energy_j += *point.energy_j;
    t.all_max_energy_j += point.all_max_energy_j;
    t.predicted_energy_j += point.predicted_energy_j;
  }
  iterations_.push_back(point);
  if (iterations_.size() > kMaxIterations) {
    iterations_.pop_front();
    ++dropped_iterations_;
  }
}

Json JobHistory::ToJson(const HistoryQuery& query) const {
  Json events = Json::array();
  const size_t first_event = events_.size() - std::min<size_t>(events_.size(), query.max_events);
  for (size_t i = first_event; i < events_.size(); ++i) {
    const Event& e = events_[i];
    Json j = {{"unix_s", e.unix_s}, {"phase", PhaseName(e.phase)}, {"plan_index", e.plan_indices},
              {"stragglers", StragglersJson(e.stragglers)}};
    if (e.carbon) j["carbon"] = CarbonDecisionJson(*e.carbon);
    events.push_back(std::move(j));
  }
  // The newest max_iterations of the chosen pipeline(s), oldest first.
  std::vector<const IterationPoint*> picked;
  for (auto it = iterations_.rbegin(); it != iterations_.rend(); ++it) {
    if (static_cast<int64_t>(picked.size()) >= query.max_iterations) break;
    if (!query.pipeline || it->pipeline == *query.pipeline) picked.push_back(&*it);
  }
  Json iterations = Json::array();
  for (auto it = picked.rbegin(); it != picked.rend(); ++it) iterations.push_back(IterationJson(**it));
  return {{"events", events}, {"iterations", iterations}, {"dropped_events", dropped_events_},
          {"dropped_iterations", dropped_iterations_}};
}

}  // namespace perseus::server
