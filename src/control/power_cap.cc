#include "control/power_cap.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <set>
#include <utility>

#include "carbon/knob_options.h"

namespace perseus::control {

namespace {

// Pipeline p's plan for iteration time `time_s`: the slowest (least-energy)
// frontier plan whose stretched time meets it; plans are time ascending.
int PlanMeeting(const Frontier& frontier, double slowdown, double time_s) {
  auto after = std::upper_bound(frontier.plans.begin(), frontier.plans.end(), time_s * (1 + 1e-12),
                                [&](double t, const FrontierPlan& p) { return t < p.time_s * slowdown; });
  return std::max(0, static_cast<int>(after - frontier.plans.begin()) - 1);
}

// Pipelines grouped by slowdown: (slowdown, count), so a job of many alike
// pipelines costs one plan search per group.
std::vector<std::pair<double, int>> Groups(const std::vector<double>& slowdowns) {
  std::map<double, int> counts;
  for (double s : slowdowns) ++counts[s];
  return {counts.begin(), counts.end()};
}

JobSetting SettingFor(const Frontier& frontier, double pipeline_blocking_power_w,
                      const std::vector<std::pair<double, int>>& groups, const std::vector<double>& slowdowns,
                      double time_s) {
  std::map<double, int> plan_of;
  double energy_j = 0;
  for (const auto& [slowdown, count] : groups) {
    const int k = PlanMeeting(frontier, slowdown, time_s);
    plan_of[slowdown] = k;
    const FrontierPlan& plan = frontier.plans[k];
    energy_j += count * (plan.energy_j + pipeline_blocking_power_w * std::max(0.0, time_s - plan.time_s * slowdown));
  }
  JobSetting s;
  s.iteration_time_s = time_s;
  s.power_w = energy_j / time_s;
  for (double slowdown : slowdowns) s.plan_index.push_back(plan_of[slowdown]);
  return s;
}

// The settings on the hull, through the carbon policy's rate-power hull.
std::vector<RatePower> Hull(const std::vector<JobSetting>& settings) {
  carbon::KnobSet knobs;
  for (const JobSetting& s : settings) knobs.options.push_back({"", s.iteration_time_s, s.power_w * s.iteration_time_s, -1});
  knobs.reference = knobs.options.front();
  for (const carbon::KnobOption& o : knobs.options) {
    if (o.time_s < knobs.reference.time_s) knobs.reference = o;
  }
  return RatePowerHull(knobs);
}

}  // namespace

JobSetting UniformSetting(double time_s, double energy_j, double pipeline_blocking_power_w,
                          const std::vector<double>& slowdowns) {
  const double slowest = *std::max_element(slowdowns.begin(), slowdowns.end());
  JobSetting s;
  s.iteration_time_s = time_s * slowest;
  double total_j = 0;
  for (double slowdown : slowdowns) total_j += energy_j + pipeline_blocking_power_w * (s.iteration_time_s - time_s * slowdown);
  s.power_w = total_j / s.iteration_time_s;
  return s;
}

std::vector<CeilingPlan> CeilingPlans(const Problem& problem, const Frontier& frontier) {
  const PlanChoice& slowest = frontier.plans.back().choice;
  int top_mhz = 0;
  std::set<int> clocks;
  for (size_t i = 0; i < problem.nodes.size(); ++i) {
    top_mhz = std::max(top_mhz, problem.nodes[i].options[slowest[i]].freq_mhz);
    for (const FreqPoint& o : problem.nodes[i].options) clocks.insert(o.freq_mhz);
  }
  std::vector<CeilingPlan> out;
  for (auto it = clocks.rbegin(); it != clocks.rend(); ++it) {
    if (*it >= top_mhz) continue;
    const PlanCost cost = EvaluatePlan(problem, WithClockCeiling(problem, slowest, *it));
    out.push_back({*it, cost.time_s, cost.energy_j});
  }
  return out;
}

std::vector<JobSetting> CapSettings(const Frontier& frontier, double pipeline_blocking_power_w,
                                    const std::vector<double>& slowdowns, const std::vector<CeilingPlan>& ceilings) {
  const double slowest = *std::max_element(slowdowns.begin(), slowdowns.end());
  const std::vector<std::pair<double, int>> groups = Groups(slowdowns);
  std::set<double> times;  // every time some pipeline's plan finishes exactly, no faster than the slowest can
  const double floor_s = frontier.plans.front().time_s * slowest;
  for (const FrontierPlan& plan : frontier.plans) {
    for (const auto& [slowdown, count] : groups) times.insert(std::max(floor_s, plan.time_s * slowdown));
  }
  std::vector<JobSetting> all;
  for (double t : times) all.push_back(SettingFor(frontier, pipeline_blocking_power_w, groups, slowdowns, t));
  const int last = static_cast<int>(frontier.plans.size()) - 1;
  for (const CeilingPlan& c : ceilings) {  // every pipeline on the slowest plan, held at the ceiling
    JobSetting s = UniformSetting(c.time_s, c.energy_j, pipeline_blocking_power_w, slowdowns);
    s.plan_index.assign(slowdowns.size(), last);
    s.clock_ceiling_mhz = c.clock_ceiling_mhz;
    all.push_back(std::move(s));
  }
  std::vector<JobSetting> out;
  for (const RatePower& p : Hull(all)) out.push_back(all[p.option]);
  return out;
}

double CappedPlan::IterationTimeS() const {
  return settings[mix.fast].iteration_time_s * hull[mix.fast].rate / mix.Rate(hull);
}

double CappedPlan::PowerW() const { return mix.PowerW(hull) * correction; }

CappedPlan PlanUnderPowerCap(std::vector<JobSetting> settings, const PowerCap& cap, double correction) {
  CappedPlan out;
  out.correction = std::clamp(correction, 0.5, 2.0);
  if (cap.peak_w > 0) {
    std::vector<JobSetting> kept;
    for (const JobSetting& s : settings) {
      if (s.power_w * out.correction <= cap.peak_w) kept.push_back(s);
    }
    if (kept.empty()) {  // nothing fits under the peak: the least power there is
      out.feasible = false;
      kept.push_back(*std::min_element(settings.begin(), settings.end(), [](const JobSetting& a, const JobSetting& b) {
        return a.power_w < b.power_w;
      }));
    }
    settings = std::move(kept);
  }
  out.hull = Hull(settings);
  for (const RatePower& p : out.hull) out.settings.push_back(settings[p.option]);
  const int last = static_cast<int>(out.hull.size()) - 1;
  out.mix = {last, last, 0};
  if (cap.average_w <= 0) return out;
  const double budget_w = cap.average_w / out.correction;
  if (out.hull[0].power_w > budget_w) {
    out.mix = {0, 0, 0};
    out.feasible = false;
    return out;
  }
  for (int k = 0; k < last; ++k) {
    if (out.hull[k + 1].power_w <= budget_w) continue;
    const double share = (budget_w - out.hull[k].power_w) / (out.hull[k + 1].power_w - out.hull[k].power_w);
    out.mix = share > 0 ? WindowMix{k, k + 1, share} : WindowMix{k, k, 0};
    return out;
  }
  return out;
}

bool FastPartOfWindow(double fast_share, double window_s, double now_s) {
  return std::fmod(now_s, window_s) < fast_share * window_s;
}

CapShares ShareCap(const std::vector<SharedCapJob>& jobs, double cap_w) {
  CapShares out;
  struct Segment {
    double value_per_w;  // weighted rate per corrected watt
    double width_w;
    size_t job;
  };
  std::vector<Segment> segments;
  double floor_w = 0;
  for (size_t j = 0; j < jobs.size(); ++j) {
    const SharedCapJob& job = jobs[j];
    const double c = std::clamp(job.correction, 0.5, 2.0);
    const double top_w = job.own_cap_w > 0 ? job.own_cap_w : std::numeric_limits<double>::infinity();
    const double low_w = job.hull.empty() ? 0 : job.hull.front().power_w * c;
    out.power_w.push_back(low_w);
    floor_w += low_w;
    for (size_t k = 0; k + 1 < job.hull.size(); ++k) {
      const double from_w = job.hull[k].power_w * c, to_w = std::min(job.hull[k + 1].power_w * c, top_w);
      if (to_w <= from_w) break;
      const double slope = (job.hull[k + 1].rate - job.hull[k].rate) / (job.hull[k + 1].power_w * c - from_w);
      segments.push_back({job.weight * slope, to_w - from_w, j});
    }
  }
  if (floor_w > cap_w) {
    out.feasible = false;
    return out;
  }
  // Concave hulls: each job's segments already fall in value; a stable sort
  // keeps them in order and breaks ties by job.
  std::stable_sort(segments.begin(), segments.end(),
                   [](const Segment& a, const Segment& b) { return a.value_per_w > b.value_per_w; });
  double left_w = cap_w - floor_w;
  for (const Segment& s : segments) {
    if (left_w <= 0) break;
    const double take_w = std::min(s.width_w, left_w);
    out.power_w[s.job] += take_w;
    left_w -= take_w;
  }
  return out;
}

}  // namespace perseus::control
