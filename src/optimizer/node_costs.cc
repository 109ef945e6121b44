// Pareto filtering and convex hulls of computation options.
#include "optimizer/node_costs.h"

#include <algorithm>
#include <limits>
#include <map>
#include <memory>

namespace perseus::optimizer {
namespace {

std::vector<CostPoint> ParetoFront(const std::vector<FreqPoint>& options, double blocking_power_w) {
  std::vector<CostPoint> pts;
  for (int i = 0; i < static_cast<int>(options.size()); ++i) {
    pts.push_back({options[i].time_s, options[i].energy_j - blocking_power_w * options[i].time_s, i});
  }
  // Time ascending; among equal times the cheapest first, then the lowest index
  // (highest frequency) so ties resolve deterministically.
  std::sort(pts.begin(), pts.end(), [](const CostPoint& a, const CostPoint& b) {
    if (a.time_s != b.time_s) return a.time_s < b.time_s;
    if (a.cost_j != b.cost_j) return a.cost_j < b.cost_j;
    return a.option < b.option;
  });
  std::vector<CostPoint> front;
  for (const CostPoint& p : pts) {
    if (front.empty() || p.cost_j < front.back().cost_j) front.push_back(p);
  }
  return front;
}

// The last index k in [0, n) with fits(k), or -1, where fits holds for a
// prefix of the indices: galloping away from `guess` until lo fits and hi
// does not (or is n), then bisecting. Fast when the answer is near the guess.
template <class Fits>
int LastFittingNear(int n, int guess, Fits fits_index) {
  auto fits = [&](int k) { return k < 0 || fits_index(k); };
  int lo = std::clamp(guess, -1, n - 1), hi;
  if (fits(lo)) {
    hi = lo + 1;
    for (int step = 1; hi < n && fits(hi); step *= 2) lo = hi, hi = std::min(n, lo + step);
  } else {
    hi = lo;
    lo = hi - 1;
    for (int step = 1; !fits(lo); step *= 2) hi = lo, lo = std::max(-1, hi - step);
  }
  while (hi - lo > 1) {
    const int mid = lo + (hi - lo) / 2;
    (fits(mid) ? lo : hi) = mid;
  }
  return lo;
}

// Cross product sign of (b-a) x (c-a); >= 0 means b is not below segment a-c.
double Cross(const CostPoint& a, const CostPoint& b, const CostPoint& c) {
  return (b.time_s - a.time_s) * (c.cost_j - a.cost_j) - (b.cost_j - a.cost_j) * (c.time_s - a.time_s);
}

std::vector<CostPoint> LowerHull(const std::vector<CostPoint>& front) {
  std::vector<CostPoint> hull;
  for (const CostPoint& p : front) {
    while (hull.size() >= 2 && Cross(hull[hull.size() - 2], hull.back(), p) <= 0) hull.pop_back();
    hull.push_back(p);
  }
  return hull;
}

}  // namespace

NodeCosts::NodeCosts(const std::vector<FreqPoint>& options, double blocking_power_w) {
  auto curves = std::make_shared<Curves>();
  curves->pareto = ParetoFront(options, blocking_power_w);
  curves->hull = LowerHull(curves->pareto);
  curves_ = std::move(curves);
}

int NodeCosts::SegmentAt(double d, bool left) const {
  // Segment k joins curves_->hull[k] and curves_->hull[k+1]. `left`: the segment just below d.
  auto it = left ? std::lower_bound(curves_->hull.begin(), curves_->hull.end(), d,
                                    [](const CostPoint& p, double v) { return p.time_s < v; })
                 : std::upper_bound(curves_->hull.begin(), curves_->hull.end(), d,
                                    [](double v, const CostPoint& p) { return v < p.time_s; });
  int k = static_cast<int>(it - curves_->hull.begin()) - 1;
  return k;
}

double NodeCosts::HullCost(double d) const {
  if (d >= curves_->hull.back().time_s) return curves_->hull.back().cost_j;
  int k = std::max(0, SegmentAt(d, false));
  const CostPoint& a = curves_->hull[k];
  const CostPoint& b = curves_->hull[k + 1];
  double w = (d - a.time_s) / (b.time_s - a.time_s);
  return a.cost_j + w * (b.cost_j - a.cost_j);
}

double NodeCosts::ShortenRate(double d) const {
  int k = SegmentAt(d - kTimeEps * d, true);
  if (k < 0) return std::numeric_limits<double>::infinity();
  if (k + 1 >= static_cast<int>(curves_->hull.size())) return 0;
  return (curves_->hull[k].cost_j - curves_->hull[k + 1].cost_j) / (curves_->hull[k + 1].time_s - curves_->hull[k].time_s);
}

double NodeCosts::LengthenRate(double d) const {
  int k = SegmentAt(d + kTimeEps * d, true);
  if (k + 1 >= static_cast<int>(curves_->hull.size()) || k < 0) return 0;
  return (curves_->hull[k].cost_j - curves_->hull[k + 1].cost_j) / (curves_->hull[k + 1].time_s - curves_->hull[k].time_s);
}

// Vertices within the same window ShortenRate/LengthenRate look past count
// as reached, so the rate a step uses and the vertex that ends it agree.
double NodeCosts::HullVertexBelow(double d) const {
  for (auto it = curves_->hull.rbegin(); it != curves_->hull.rend(); ++it) {
    if (it->time_s < d - kTimeEps * d) return it->time_s;
  }
  return d;
}

double NodeCosts::HullVertexAbove(double d) const {
  for (const CostPoint& p : curves_->hull) {
    if (p.time_s > d + kTimeEps * d) return p.time_s;
  }
  return d;
}

int NodeCosts::CheapestWithin(double d) const {
  // curves_->pareto is time ascending and cost descending: the last one that fits.
  auto it = std::upper_bound(curves_->pareto.begin(), curves_->pareto.end(), d * (1 + kTimeEps),
                             [](double v, const CostPoint& p) { return v < p.time_s; });
  return static_cast<int>(it - curves_->pareto.begin()) - 1;
}

int NodeCosts::CheapestWithinNear(double d, int guess) const {
  const double limit = d * (1 + kTimeEps);
  return LastFittingNear(static_cast<int>(curves_->pareto.size()), guess,
                         [&](int k) { return curves_->pareto[k].time_s <= limit; });
}

SeriesCosts::SeriesCosts(const NodeCosts& first, const NodeCosts& second) {
  std::vector<std::pair<double, double>> sums;  // (time, cost)
  sums.reserve(first.pareto().size() * second.pareto().size());
  for (const CostPoint& a : first.pareto()) {
    for (const CostPoint& b : second.pareto()) sums.emplace_back(a.time_s + b.time_s, a.cost_j + b.cost_j);
  }
  std::sort(sums.begin(), sums.end());
  for (auto [time_s, cost_j] : sums) {
    if (stairs_cost_j_.empty() || cost_j < stairs_cost_j_.back()) {
      stairs_time_s_.push_back(time_s);
      stairs_cost_j_.push_back(cost_j);
    }
  }
}

double SeriesCosts::CheapestWithin(double total_s) const {
  const auto fitting = std::upper_bound(stairs_time_s_.begin(), stairs_time_s_.end(), total_s);
  return fitting == stairs_time_s_.begin() ? std::numeric_limits<double>::infinity()
                                           : stairs_cost_j_[fitting - stairs_time_s_.begin() - 1];
}

double SeriesCosts::TimeToBeat(double cost_j) const {
  // Costs fall along the stairs: the first one below cost_j is the fastest.
  const auto cheaper = std::partition_point(stairs_cost_j_.begin(), stairs_cost_j_.end(),
                                            [cost_j](double c) { return c >= cost_j; });
  return cheaper == stairs_cost_j_.end() ? std::numeric_limits<double>::infinity()
                                         : stairs_time_s_[cheaper - stairs_cost_j_.begin()];
}

std::vector<NodeCosts> BuildNodeCosts(const Problem& problem) {
  std::vector<NodeCosts> out;
  out.reserve(problem.nodes.size());
  std::map<std::pair<int, int>, size_t> seen;  // (virtual stage, instruction) -> first node
  for (const ProblemNode& n : problem.nodes) {
    auto key = std::make_pair(n.virtual_stage, static_cast<int>(n.comp.instruction));
    auto it = seen.find(key);
    if (it != seen.end()) {
      out.push_back(out[it->second]);
    } else {
      seen[key] = out.size();
      out.emplace_back(n.options, problem.blocking_power_w);
    }
  }
  return out;
}

}  // namespace perseus::optimizer
