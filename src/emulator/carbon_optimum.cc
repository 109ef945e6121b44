// The optimum by GLPK and by the greedy.
#include "emulator/carbon_optimum.h"

#include <glpk.h>

#include <algorithm>
#include <cmath>
#include <memory>
#include <mutex>
#include <optional>
#include <queue>
#include <string>
#include <utility>
#include <vector>

#include "control/carbon_choice.h"

namespace perseus::carbon {
namespace {

// The hours the job is given: their intensities and the share of each that is available.
struct Horizon {
  std::vector<double> carbon_g_per_kwh;
  std::vector<double> share;
  double time_h = 0;
};

// The hours up to `time_h`.
Horizon HorizonOf(const IntensityTrace& trace, int start, double time_h) {
  Horizon h;
  h.time_h = time_h;
  const int n = static_cast<int>(std::ceil(h.time_h - 1e-9));
  for (int k = 0; k < n; ++k) {
    h.carbon_g_per_kwh.push_back(trace.carbon_g_per_kwh[std::min(start + k, trace.size() - 1)]);
    h.share.push_back(std::min(1.0, h.time_h - k));
  }
  return h;
}

// The horizons to try: the whole budgeted time; without pause at most what
// the slowest hull point needs. A pause that holds the GPUs draws power until
// the job ends, so the job may do better to end early: then also every
// whole-hour end from the fastest finish on (the best of them is exact to
// within an hour's idle power).
std::vector<Horizon> HorizonsFor(const IntensityTrace& trace, int start, const std::vector<control::RatePower>& hull,
                                 const KnobSet& knobs, const OptimumConfig& config) {
  const double budgeted_h = config.work_h * (1 + config.slowdown_budget);
  if (!config.allow_pause) return {HorizonOf(trace, start, std::min(budgeted_h, config.work_h / hull.front().rate))};
  std::vector<Horizon> horizons = {HorizonOf(trace, start, budgeted_h)};
  if (knobs.pause_power_w <= 0) return horizons;
  // The end that never pausing reaches (the slowest point throughout), then whole hours.
  const double never_pausing_h = config.work_h / control::RatePowerHull(knobs, false).front().rate;
  if (never_pausing_h < budgeted_h - 1e-9) horizons.push_back(HorizonOf(trace, start, never_pausing_h));
  for (int end_h = static_cast<int>(std::ceil(config.work_h / hull.back().rate)); end_h < budgeted_h - 1e-9;
       ++end_h) {
    horizons.push_back(HorizonOf(trace, start, end_h));
  }
  return horizons;
}

// The work the job must have made by the end of hour r: with the budget kept
// at every hour, (r + 1) / (1 + budget) for every full hour but the last
// (the LP's rows of AddHourlyBudgetRows); all of it by the end.
double WorkFloor(const OptimumConfig& config, int r, int hours) {
  if (r + 1 == hours) return config.work_h;
  return config.budget_at_every_hour ? std::min(config.work_h, (r + 1) / (1 + config.slowdown_budget)) : 0;
}

// Columns n * k + 1..: the work done by the end of each hour, w[h] =
// w[h - 1] + sum_i rate[i] * x[h][i] (rows n + 2..), at least
// (h + 1) / (1 + budget) for every full hour but the last: sparse, where
// the sums written out would make the LP dense.
void AddHourlyBudgetRows(glp_prob* lp, const Horizon& h, const std::vector<control::RatePower>& hull,
                         const OptimumConfig& config, std::vector<int>& ia, std::vector<int>& ja, std::vector<double>& ar) {
  const int n = static_cast<int>(h.share.size()), k = static_cast<int>(hull.size());
  const int first_row = glp_add_rows(lp, n), first_col = glp_add_cols(lp, n);
  for (int r = 0; r < n; ++r) {
    const int row = first_row + r, col = first_col + r;
    const double floor = r + 1 < n ? WorkFloor(config, r, n) : 0;  // the work row holds the last
    glp_set_col_bnds(lp, col, GLP_LO, floor, 0);
    glp_set_row_bnds(lp, row, GLP_FX, 0, 0);
    ia.push_back(row), ja.push_back(col), ar.push_back(1.0);
    if (r > 0) ia.push_back(row), ja.push_back(col - 1), ar.push_back(-1.0);
    for (int i = 0; i < k; ++i) ia.push_back(row), ja.push_back(r * k + i + 1), ar.push_back(-hull[i].rate);
  }
}

using GlpProb = std::unique_ptr<glp_prob, decltype(&glp_delete_prob)>;

// Rows 1..n: each hour's time; row n + 1: the work. Column (h, i): hour h at hull point i.
GlpProb BuildLp(const Horizon& h, const std::vector<control::RatePower>& hull, const OptimumConfig& config) {
  GlpProb lp(glp_create_prob(), &glp_delete_prob);
  const int n = static_cast<int>(h.share.size()), k = static_cast<int>(hull.size());
  glp_set_obj_dir(lp.get(), GLP_MIN);
  glp_add_rows(lp.get(), n + 1);
  // With a pause, the time no option runs is its column (rate 0, the pause's power).
  for (int r = 0; r < n; ++r) glp_set_row_bnds(lp.get(), r + 1, GLP_FX, h.share[r], h.share[r]);
  glp_set_row_bnds(lp.get(), n + 1, GLP_LO, config.work_h, 0);
  glp_add_cols(lp.get(), n * k);
  std::vector<int> ia{0}, ja{0};
  std::vector<double> ar{0};
  for (int r = 0; r < n; ++r) {
    for (int i = 0; i < k; ++i) {
      const int col = r * k + i + 1;
      glp_set_col_bnds(lp.get(), col, GLP_LO, 0, 0);
      glp_set_obj_coef(lp.get(), col, h.carbon_g_per_kwh[r] * hull[i].power_w * 3600 / control::kJoulesPerKwh);
      ia.insert(ia.end(), {r + 1, n + 1});
      ja.insert(ja.end(), {col, col});
      ar.insert(ar.end(), {1.0, hull[i].rate});
    }
  }
  if (config.budget_at_every_hour) AddHourlyBudgetRows(lp.get(), h, hull, config, ia, ja, ar);
  glp_load_matrix(lp.get(), static_cast<int>(ia.size()) - 1, ia.data(), ja.data(), ar.data());
  return lp;
}

// One horizon's LP by GLPK's simplex.
Result<OptimumResult> SolveLpOver(const Horizon& h, int start, const std::vector<control::RatePower>& points,
                                  const OptimumConfig& config) {
  GlpProb lp = BuildLp(h, points, config);
  glp_smcp parm;
  glp_init_smcp(&parm);
  parm.msg_lev = GLP_MSG_OFF;
  parm.tm_lim = 10000;  // ms; the primal simplex stalls on a few degenerate weeks (NYISO, 25% slack, pausing)
  int rc = glp_simplex(lp.get(), &parm);
  if (rc != 0 || glp_get_status(lp.get()) != GLP_OPT) {
    parm.meth = GLP_DUALP;  // slower (about 10x here) but solves those
    parm.tm_lim = 60000;
    rc = glp_simplex(lp.get(), &parm);
  }
  if (rc != 0 || glp_get_status(lp.get()) != GLP_OPT) {
    return Status::Internal("carbon optimum from window " + std::to_string(start) + ": GLPK simplex returned " +
                            std::to_string(rc) + ", status " + std::to_string(glp_get_status(lp.get())) +
                            " (infeasible: the fastest option cannot finish the work in time)");
  }
  return OptimumResult{glp_get_obj_val(lp.get()), h.time_h};
}

// The LP is given every option (not only the hull), so the hull is not assumed.
Result<OptimumResult> SolveLp(const IntensityTrace& trace, int start, const KnobSet& knobs,
                              const OptimumConfig& config) {
  std::vector<control::RatePower> points = control::RatePowerPoints(knobs);
  if (config.allow_pause) points.push_back({-1, 0, knobs.pause_power_w});
  std::sort(points.begin(), points.end(), [](const auto& a, const auto& b) { return a.rate < b.rate; });
  // The horizons are the greedy's (a slower option above the hull is never
  // worth its time). The first, the budgeted time, must solve; the early ends
  // that follow (held pauses only) are tight and may be infeasible: skipped.
  const std::vector<Horizon> horizons =
      HorizonsFor(trace, start, control::RatePowerHull(knobs, config.allow_pause), knobs, config);
  Result<OptimumResult> best = SolveLpOver(horizons.front(), start, points, config);
  if (!best.ok()) return best.status();
  for (size_t k = 1; k < horizons.size(); ++k) {
    Result<OptimumResult> solved = SolveLpOver(horizons[k], start, points, config);
    if (solved.ok() && solved->carbon_g < best->carbon_g) best = *solved;
  }
  return best;
}

}  // namespace

// One solve at a time in the process: GLPK keeps its environment in a global
// that is not safe to share between threads unless the library was built
// thread-local, which nothing here checks (EvaluateStarts runs starts on
// several threads). Where it is thread-local, each thread that solves gets
// its own, which nothing would free when the thread ends: it is freed after
// every solve (GLPK makes a new one at the next).
Result<OptimumResult> SolveOptimumLp(const IntensityTrace& trace, int start, const KnobSet& knobs,
                                     const OptimumConfig& config) {
  static std::mutex glpk_mu;
  std::lock_guard<std::mutex> lock(glpk_mu);
  Result<OptimumResult> solved = SolveLp(trace, start, knobs, config);
  glp_free_env();
  return solved;
}

namespace {

// The LP with a floor under the work done by the end of every hour
// (WorkFloor), by the forward greedy its nested constraints allow: every
// hour starts at the least power; hour by hour, units of work are bought
// cheapest first among the hours so far (an hour's steps in order, as their
// costs rise) until the work reaches that hour's floor. It is exact: a unit
// bought for hour r's floor counts for every later floor too, so an
// optimum that bought a dearer unit of the hours so far instead can swap it
// for the greedy's without breaking any floor (the earlier floors are met
// by the units bought before, which it holds as well).
control::WorkPlan PlanWorkWithFloors(const std::vector<control::RatePower>& hull, const Horizon& h,
                                     const OptimumConfig& config) {
  const int n = static_cast<int>(h.share.size()), last = static_cast<int>(hull.size()) - 1;
  control::WorkPlan plan;
  plan.windows.assign(n, control::WindowMix{});
  const std::vector<double> slope = control::StepSlopes(hull);
  // (cost, hour): the cheapest step each hour so far has not bought in full.
  using Step = std::pair<double, int>;
  std::priority_queue<Step, std::vector<Step>, std::greater<>> cheapest;
  for (int r = 0; r < n; ++r) {
    plan.work += h.share[r] * hull[0].rate;
    if (h.share[r] > 0 && last > 0) cheapest.emplace(h.carbon_g_per_kwh[r] * slope[0], r);
    const double floor = WorkFloor(config, r, n);
    while (plan.work < floor * (1 - 1e-12)) {
      if (cheapest.empty()) {
        plan.feasible = false;
        return plan;
      }
      const auto [cost, q] = cheapest.top();
      control::WindowMix& m = plan.windows[q];  // at hull[m.slow], m.fast_share of the next step bought
      const int k = m.slow;
      const double step = h.share[q] * (hull[k + 1].rate - hull[k].rate), left = step * (1 - m.fast_share);
      plan.mu_g_per_s = cost;
      if (left > floor - plan.work) {  // this hour's floor is met within the step
        m = control::WindowMix{k, k + 1, m.fast_share + (floor - plan.work) / step};
        plan.work = floor;
        break;
      }
      plan.work += left;
      m = control::WindowMix{k + 1, k + 1, 0};
      cheapest.pop();
      if (k + 1 < last) cheapest.emplace(h.carbon_g_per_kwh[q] * slope[k + 1], q);
    }
  }
  return plan;
}

}  // namespace

Result<OptimumResult> SolveOptimumGreedy(const IntensityTrace& trace, int start, const KnobSet& knobs,
                                         const OptimumConfig& config) {
  const std::vector<control::RatePower> hull = control::RatePowerHull(knobs, config.allow_pause);
  std::optional<OptimumResult> best;
  for (const Horizon& h : HorizonsFor(trace, start, hull, knobs, config)) {
    const control::WorkPlan plan = config.budget_at_every_hour
                                       ? PlanWorkWithFloors(hull, h, config)
                                       : control::PlanWork(hull, h.carbon_g_per_kwh, h.share, config.work_h);
    // An early end too short for the work is skipped; the budgeted time (the first) must do.
    if (best && !plan.feasible) continue;
    if (!plan.feasible) {
      return Status::Internal("carbon optimum from window " + std::to_string(start) +
                              ": infeasible: the fastest option cannot finish the work in time" +
                              (config.budget_at_every_hour ? " or keep the budget at every hour" : ""));
    }
    const OptimumResult r{control::PlanCarbonG(hull, plan, h.carbon_g_per_kwh, h.share, 3600), h.time_h};
    if (!best || r.carbon_g < best->carbon_g) best = r;
  }
  return *best;  // the budgeted horizon sets it
}

}  // namespace perseus::carbon
