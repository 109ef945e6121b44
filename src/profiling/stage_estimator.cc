#include "profiling/stage_estimator.h"

#include <algorithm>
#include <cmath>
#include <sstream>
#include <string>

#include "profiling/penalized_fit.h"

namespace perseus::profiling {
namespace {

constexpr double kRelativeRidge = 1e-9;
constexpr int kPenaltyOrder = 2;
// Candidate drift time constants (0: linear) when the options name none.
constexpr double kDriftTimeConstantsS[] = {0, 100, 300, 1000};
constexpr double kMaxLeverageForOutliers = 0.9;
constexpr double kScreeningSmoothing = 100;
// Outliers deviate by at least outlier_threshold x this share of the mean power
// (so that a rough but noise-free profile flags none).
constexpr double kMinOutlierScale = 0.01;
constexpr double kMinResidualDofForOutliers = 5;
constexpr double kUnmeasuredTimeSePerStep = 0.01;

std::string Num(double v) {
  std::ostringstream out;
  out << v;
  return out.str();
}

// Coefficient positions: pF[0..K-1], pB[1..K-1] (pB[0] is pF[0]: the gauge),
// Pblk, drift.
struct Layout {
  int clocks = 0;
  int Forward(int i) const { return i; }
  int Backward(int i) const { return i == 0 ? 0 : clocks - 1 + i; }
  int Blocking() const { return 2 * clocks - 1; }
  int Drift() const { return 2 * clocks; }
  int Powers() const { return 2 * clocks - 1; }  // pF and pB columns come first
  int Size() const { return 2 * clocks + 1; }
};

Status ValidateClocks(const std::vector<int>& clocks_mhz) {
  if (clocks_mhz.empty()) return Status::InvalidArgument("no clocks");
  for (size_t i = 0; i < clocks_mhz.size(); ++i) {
    if (clocks_mhz[i] <= 0) {
      return Status::InvalidArgument("clocks_mhz[" + std::to_string(i) + "] must be positive, got " +
                                     std::to_string(clocks_mhz[i]));
    }
    if (i > 0 && clocks_mhz[i] >= clocks_mhz[i - 1]) {
      return Status::InvalidArgument("clocks_mhz must be strictly descending: " + std::to_string(clocks_mhz[i]) +
                                     " MHz follows " + std::to_string(clocks_mhz[i - 1]) + " MHz");
    }
  }
  return Status::Ok();
}

Status ValidateIndex(const char* field, int index, int clocks) {
  if (index >= 0 && index < clocks) return Status::Ok();
  return Status::InvalidArgument(std::string(field) + " " + std::to_string(index) + " is outside the " +
                                 std::to_string(clocks) + " clocks");
}

Status ValidateInstruction(const char* name, int64_t count, double time_s, double time_sq_s2) {
  const std::string n(name);
  if (count < 0) return Status::InvalidArgument(n + "_count must be >= 0, got " + std::to_string(count));
  if (!std::isfinite(time_s) || time_s < 0) {
    return Status::InvalidArgument(n + "_time_s must be a non-negative number, got " + Num(time_s));
  }
  if (!std::isfinite(time_sq_s2) || time_sq_s2 < 0) {
    return Status::InvalidArgument(n + "_time_sq_s2 must be a non-negative number, got " + Num(time_sq_s2));
  }
  if (count == 0 && time_s > 0) {
    return Status::InvalidArgument(n + "_time_s is " + Num(time_s) + " but " + n + "_count is 0");
  }
  return Status::Ok();
}

Status ValidateTotals(const WindowObservation& w) {
  if (!std::isfinite(w.cycle_time_s) || w.cycle_time_s <= 0) {
    return Status::InvalidArgument("cycle_time_s must be positive, got " + Num(w.cycle_time_s));
  }
  if (!std::isfinite(w.energy_j) || w.energy_j < 0) {
    return Status::InvalidArgument("energy_j must be a non-negative number, got " + Num(w.energy_j));
  }
  if (!std::isfinite(w.mid_time_s)) return Status::InvalidArgument("mid_time_s must be finite");
  const double busy_s = w.forward_time_s + w.backward_time_s;
  if (busy_s > w.cycle_time_s * (1 + 1e-6)) {
    return Status::InvalidArgument("forward and backward computations take " + Num(busy_s) +
                                   " s, more than the cycle time " + Num(w.cycle_time_s) + " s");
  }
  return Status::Ok();
}

Status ValidateWindow(const WindowObservation& w, int clocks) {
  PERSEUS_RETURN_IF_ERROR(ValidateIndex("forward_index", w.forward_index, clocks));
  PERSEUS_RETURN_IF_ERROR(ValidateIndex("backward_index", w.backward_index, clocks));
  PERSEUS_RETURN_IF_ERROR(ValidateInstruction("forward", w.forward_count, w.forward_time_s, w.forward_time_sq_s2));
  PERSEUS_RETURN_IF_ERROR(ValidateInstruction("backward", w.backward_count, w.backward_time_s, w.backward_time_sq_s2));
  return ValidateTotals(w);
}

Status ValidateWindows(const std::vector<WindowObservation>& windows, int clocks) {
  if (windows.empty()) return Status::InvalidArgument("no windows");
  bool forward = false, backward = false;
  for (size_t k = 0; k < windows.size(); ++k) {
    Status st = ValidateWindow(windows[k], clocks);
    if (!st.ok()) return st.WithContext("window " + std::to_string(k));
    forward = forward || windows[k].forward_count > 0;
    backward = backward || windows[k].backward_count > 0;
  }
  if (!forward) return Status::InvalidArgument("no window measured a forward computation");
  if (!backward) return Status::InvalidArgument("no window measured a backward computation");
  return Status::Ok();
}

// The drift's time shape in seconds; the drift power is rate x DriftShape.
double DriftShape(double t_s, double reference_s, double tau_s) {
  const double dt = t_s - reference_s;
  return tau_s > 0 ? tau_s * -std::expm1(-dt / tau_s) : dt;
}

// Default: the windows' midpoints averaged with their lengths as weights.
double ReferenceTime(const std::vector<WindowObservation>& windows, const EstimatorOptions& options) {
  if (options.reference_time_s) return *options.reference_time_s;
  double sum_s = 0, weight_s = 0;
  for (const WindowObservation& w : windows) {
    sum_s += w.mid_time_s * w.cycle_time_s;
    weight_s += w.cycle_time_s;
  }
  return sum_s / weight_s;
}

// The drift column is DriftShape / scale, so that all columns are O(1).
double DriftScale(const std::vector<WindowObservation>& windows, double reference_s, double tau_s) {
  double scale = 0;
  for (const WindowObservation& w : windows) {
    scale = std::max(scale, std::abs(DriftShape(w.mid_time_s, reference_s, tau_s)));
  }
  return scale > 0 ? scale : 1;
}

double WeightedMeanTarget(const PenalizedProblem& p) {
  const double total = p.weights.sum();
  return total > 0 ? p.weights.dot(p.target) / total : p.target.mean();
}

// One row per window: E/C against the model, weight C / mean C. The drift
// column is left 0 (SetDriftColumn).
void FillRows(const std::vector<WindowObservation>& windows, const Layout& layout, PenalizedProblem& p) {
  const Eigen::Index m = static_cast<Eigen::Index>(windows.size());
  p.design = Eigen::MatrixXd::Zero(m, layout.Size());
  p.target.resize(m);
  p.weights.resize(m);
  double mean_cycle_s = 0;
  for (const WindowObservation& w : windows) mean_cycle_s += w.cycle_time_s / static_cast<double>(m);
  for (Eigen::Index r = 0; r < m; ++r) {
    const WindowObservation& w = windows[r];
    const double c = w.cycle_time_s;
    p.design(r, layout.Forward(w.forward_index)) += w.forward_time_s / c;
    p.design(r, layout.Backward(w.backward_index)) += w.backward_time_s / c;
    p.design(r, layout.Blocking()) = (c - w.forward_time_s - w.backward_time_s) / c;
    p.target(r) = w.energy_j / c;
    p.weights(r) = c / mean_cycle_s;
  }
}

// Sets the drift column: the drift's time shape times the window's own
// average power (thermal drift scales all power alike), both scaled to O(1).
// Returns the factor that turns the column's coefficient into the relative
// drift rate (1/s).
double SetDriftColumn(const std::vector<WindowObservation>& windows, const Layout& layout, double reference_s,
                      double tau_s, PenalizedProblem& p) {
  const double shape_scale_s = DriftScale(windows, reference_s, tau_s);
  const double mean_power_w = WeightedMeanTarget(p);
  for (Eigen::Index r = 0; r < p.target.size(); ++r) {
    const double shape = DriftShape(windows[r].mid_time_s, reference_s, tau_s) / shape_scale_s;
    p.design(r, layout.Drift()) = mean_power_w > 0 ? shape * p.target(r) / mean_power_w : 0;
  }
  return mean_power_w > 0 ? 1 / (shape_scale_s * mean_power_w) : 0;
}

// Coefficients of the order-th divided difference over the points x (order + 1
// of them), times order!: for unit spacing, the usual finite difference
// (1, -2, 1 for order 2).
std::vector<double> DividedDifference(const std::vector<double>& x) {
  std::vector<double> d(x.size());
  double factorial = 1;
  for (size_t k = 2; k < x.size(); ++k) factorial *= static_cast<double>(k);
  for (size_t j = 0; j < x.size(); ++j) {
    double product = 1;
    for (size_t l = 0; l < x.size(); ++l) {
      if (l != j) product *= x[j] - x[l];
    }
    d[j] = factorial / product;
  }
  return d;
}

double MedianStepMhz(const std::vector<int>& clocks_mhz) {
  std::vector<double> steps;
  for (size_t i = 1; i < clocks_mhz.size(); ++i) steps.push_back(clocks_mhz[i - 1] - clocks_mhz[i]);
  std::nth_element(steps.begin(), steps.begin() + steps.size() / 2, steps.end());
  return steps[steps.size() / 2];
}

// Adds the squared divided differences of order kPenaltyOrder of the
// coefficients at `columns` (one per clock) over the clock, in units of the
// median clock step.
void AddSmoothnessPenalty(const std::vector<int>& clocks_mhz, const std::vector<int>& columns,
                          Eigen::MatrixXd& penalty) {
  const int k = static_cast<int>(clocks_mhz.size());
  const int order = kPenaltyOrder;
  if (k <= order) return;
  const double unit_mhz = MedianStepMhz(clocks_mhz);
  for (int i = 0; i + order < k; ++i) {
    std::vector<double> x;
    for (int j = i; j <= i + order; ++j) x.push_back(clocks_mhz[j] / unit_mhz);
    const std::vector<double> d = DividedDifference(x);
    for (int a = 0; a <= order; ++a) {
      for (int b = 0; b <= order; ++b) penalty(columns[i + a], columns[i + b]) += d[a] * d[b];
    }
  }
}

Eigen::MatrixXd SmoothnessPenalty(const std::vector<int>& clocks_mhz, const Layout& layout) {
  Eigen::MatrixXd penalty = Eigen::MatrixXd::Zero(layout.Size(), layout.Size());
  std::vector<int> forward, backward;
  for (int i = 0; i < layout.clocks; ++i) {
    forward.push_back(layout.Forward(i));
    backward.push_back(layout.Backward(i));
  }
  AddSmoothnessPenalty(clocks_mhz, forward, penalty);
  AddSmoothnessPenalty(clocks_mhz, backward, penalty);
  return penalty;
}

// First differences over the clock of the backward-minus-forward power.
Eigen::MatrixXd DifferencePenalty(const Layout& layout) {
  Eigen::MatrixXd penalty = Eigen::MatrixXd::Zero(layout.Size(), layout.Size());
  for (int i = 0; i + 1 < layout.clocks; ++i) {
    Eigen::VectorXd v = Eigen::VectorXd::Zero(layout.Size());
    v(layout.Backward(i + 1)) += 1;
    v(layout.Forward(i + 1)) -= 1;
    v(layout.Backward(i)) -= 1;
    v(layout.Forward(i)) += 1;
    penalty += v * v.transpose();
  }
  return penalty;
}

void Normalize(Eigen::MatrixXd& penalty, double target_trace) {
  const double trace = penalty.trace();
  if (trace > 0) penalty *= target_trace / trace;
}

// The estimation problem. Its penalty is the smoothness penalty plus
// difference_smoothing x the difference penalty, each scaled so that weight 1
// has the trace of A'WA over the power columns.
PenalizedProblem BuildProblem(const std::vector<int>& clocks_mhz, const std::vector<WindowObservation>& windows,
                              const Layout& layout, double difference_smoothing) {
  PenalizedProblem p;
  FillRows(windows, layout, p);
  const Eigen::MatrixXd gram = WeightedGram(p);
  const double power_trace = gram.topLeftCorner(layout.Powers(), layout.Powers()).trace();
  Eigen::MatrixXd smooth = SmoothnessPenalty(clocks_mhz, layout);
  Eigen::MatrixXd difference = DifferencePenalty(layout);
  Normalize(smooth, power_trace);
  Normalize(difference, power_trace);
  p.penalty = smooth + difference_smoothing * difference;
  p.prior = Eigen::VectorXd::Constant(layout.Size(), WeightedMeanTarget(p));
  p.prior(layout.Drift()) = 0;
  const double scale = gram.trace() / layout.Size();
  p.prior_weight = Eigen::VectorXd::Constant(layout.Size(), kRelativeRidge * (scale > 0 ? scale : 1));
  return p;
}

// Half-decades from 1e-6 to 1e6, and 0 when the data alone determine every power.
std::vector<double> SmoothingGrid(const PenalizedProblem& p, const Layout& layout) {
  std::vector<double> grid;
  const Eigen::MatrixXd gram = WeightedGram(p);
  if (DeterminesAll(gram.topLeftCorner(layout.Powers(), layout.Powers()))) grid.push_back(0);
  for (int k = -12; k <= 12; ++k) grid.push_back(std::pow(10.0, k / 2.0));
  return grid;
}

// The fit with the smallest GCV score (or at the fixed smoothing).
PenalizedFit Fit(const PenalizedProblem& p, const Layout& layout, const EstimatorOptions& options) {
  if (options.smoothing) return SolvePenalized(p, *options.smoothing);
  return FitByGcv(p, SmoothingGrid(p, layout));
}

struct DriftFit {
  PenalizedFit fit;
  double tau_s = 0;
  double rate_per_coef = 0;  // relative drift rate (1/s) per unit of the drift coefficient
};

// Fits with each candidate drift time constant and keeps the best GCV score
// (ties to the first: linear); leaves p's drift column set for it.
DriftFit FitDrift(const std::vector<WindowObservation>& windows, const Layout& layout, double reference_s,
                  const EstimatorOptions& options, PenalizedProblem& p) {
  std::vector<double> candidates(std::begin(kDriftTimeConstantsS), std::end(kDriftTimeConstantsS));
  if (options.drift_time_constant_s) candidates = {std::max(*options.drift_time_constant_s, 0.0)};
  DriftFit best;
  for (double tau_s : candidates) {
    const double rate = SetDriftColumn(windows, layout, reference_s, tau_s, p);
    PenalizedFit fit = Fit(p, layout, options);
    if (best.fit.coef.size() == 0 || fit.gcv < best.fit.gcv) best = DriftFit{std::move(fit), tau_s, rate};
  }
  SetDriftColumn(windows, layout, reference_s, best.tau_s, p);
  return best;
}

// The upper median (the middle value, the higher of two for an even count),
// as the robust scale of the outlier screen was tuned with.
double UpperMedian(std::vector<double> v) {
  std::nth_element(v.begin(), v.begin() + v.size() / 2, v.end());
  return v[v.size() / 2];
}

// Rows whose residual, standardized by its leverage and a robust scale (at
// least floor_sd), exceeds the threshold. Judged on a fit at least as smooth
// as kScreeningSmoothing, so that a flexible fit cannot mask an outlier by
// bending towards it. Rows fitted almost exactly by their own coefficients
// (leverage near 1) cannot be judged and are kept.
std::vector<int> FindOutliers(const PenalizedProblem& p, double lambda, double threshold, double floor_sd) {
  if (threshold <= 0) return {};
  const PenalizedFit fit = SolvePenalized(p, std::max(lambda, kScreeningSmoothing));
  if (fit.rows - fit.edf < kMinResidualDofForOutliers) return {};
  std::vector<int> rows;
  std::vector<double> standardized;
  for (Eigen::Index r = 0; r < p.target.size(); ++r) {
    if (p.weights(r) <= 0 || fit.leverage(r) > kMaxLeverageForOutliers) continue;
    rows.push_back(static_cast<int>(r));
    standardized.push_back(std::abs(std::sqrt(p.weights(r)) * fit.residual(r) / std::sqrt(1 - fit.leverage(r))));
  }
  if (rows.empty()) return {};
  const double scale = std::max(1.4826 * UpperMedian(standardized), floor_sd);
  std::vector<int> outliers;
  for (size_t k = 0; k < rows.size(); ++k) {
    if (standardized[k] > threshold * scale) outliers.push_back(rows[k]);
  }
  return outliers;
}

double NoiseSd(const PenalizedFit& fit, double floor_sd) {
  const double dof = fit.rows - fit.edf;
  const double sd = dof >= 1 ? std::sqrt(fit.rss / dof) : 0;
  return std::max(sd, floor_sd);
}

// Pooled durations of one instruction at one clock.
struct TimeStat {
  double sum_s = 0, sum_sq_s2 = 0;
  int64_t count = 0;
  bool spread_known = true;
  double time_s = 0, se_s = 0;
  bool measured() const { return count > 0; }
};

void AddWindow(TimeStat& stat, int64_t count, double time_s, double time_sq_s2) {
  if (count <= 0) return;
  stat.sum_s += time_s;
  stat.sum_sq_s2 += time_sq_s2;
  stat.count += count;
  if (time_sq_s2 <= 0) stat.spread_known = false;
}

void Summarize(TimeStat& stat, double prior_relative_sd) {
  const double n = static_cast<double>(stat.count);
  stat.time_s = stat.sum_s / n;
  if (!stat.spread_known || stat.count < 2) {
    stat.se_s = prior_relative_sd * stat.time_s;
    return;
  }
  const double variance = std::max(0.0, (stat.sum_sq_s2 - stat.sum_s * stat.sum_s / n) / (n - 1));
  stat.se_s = std::sqrt(variance / n);
}

// The nearest measured clocks to i: one on each side when both exist, else
// the two nearest on the one side (or the only one).
std::vector<int> NearestMeasured(const std::vector<TimeStat>& stats, int i) {
  std::vector<int> higher, lower;  // by distance from i
  for (int j = i - 1; j >= 0; --j) {
    if (stats[j].measured()) higher.push_back(j);
  }
  for (int j = i + 1; j < static_cast<int>(stats.size()); ++j) {
    if (stats[j].measured()) lower.push_back(j);
  }
  if (!higher.empty() && !lower.empty()) return {higher[0], lower[0]};
  std::vector<int>& side = higher.empty() ? lower : higher;
  side.resize(std::min<size_t>(side.size(), 2));
  return side;
}

// Interpolates an unmeasured clock's time linearly in 1/f (t ~ 1/f from a
// single measured clock). REQUIRES: some clock measured.
void FillUnmeasuredTime(const std::vector<int>& clocks_mhz, int i, std::vector<TimeStat>& stats) {
  const std::vector<int> near = NearestMeasured(stats, i);
  const TimeStat& a = stats[near[0]];
  const double x = 1.0 / clocks_mhz[i], xa = 1.0 / clocks_mhz[near[0]];
  int steps = std::abs(near[0] - i);
  if (near.size() == 1) {
    stats[i].time_s = a.time_s * x / xa;
    stats[i].se_s = a.se_s * x / xa;
  } else {
    const TimeStat& b = stats[near[1]];
    const double u = (x - xa) / (1.0 / clocks_mhz[near[1]] - xa);
    stats[i].time_s = a.time_s + u * (b.time_s - a.time_s);
    stats[i].se_s = std::abs(1 - u) * a.se_s + std::abs(u) * b.se_s;
    steps = std::min(steps, std::abs(near[1] - i));
  }
  stats[i].se_s += kUnmeasuredTimeSePerStep * steps * stats[i].time_s;
}

std::vector<TimeStat> PooledTimes(const std::vector<int>& clocks_mhz, const std::vector<WindowObservation>& windows,
                                  Instruction ins, double prior_relative_sd) {
  // Durations from windows that run both instructions at one clock carry no
  // clock-switch latency (on hardware a computation that follows one at
  // another clock starts at that clock); windows that switch count only for
  // clocks no switch-free window measured.
  std::vector<TimeStat> stats(clocks_mhz.size());
  std::vector<bool> switch_free_seen(clocks_mhz.size(), false);
  for (bool switch_free : {true, false}) {
    for (const WindowObservation& w : windows) {
      if ((w.forward_index == w.backward_index) != switch_free) continue;
      const int index = ins == Instruction::kForward ? w.forward_index : w.backward_index;
      if (!switch_free && switch_free_seen[index]) continue;
      if (switch_free) switch_free_seen[index] = true;
      if (ins == Instruction::kForward) {
        AddWindow(stats[index], w.forward_count, w.forward_time_s, w.forward_time_sq_s2);
      } else {
        AddWindow(stats[index], w.backward_count, w.backward_time_s, w.backward_time_sq_s2);
      }
    }
  }
  for (TimeStat& s : stats) {
    if (s.measured()) Summarize(s, prior_relative_sd);
  }
  for (size_t i = 0; i < stats.size(); ++i) {
    if (!stats[i].measured()) FillUnmeasuredTime(clocks_mhz, static_cast<int>(i), stats);
  }
  return stats;
}

// Energy e = p t and its delta-method SE.
void SetEnergy(double power_w, double power_var, const TimeStat& t, double& energy_j, double& se_j) {
  energy_j = power_w * t.time_s;
  se_j = std::sqrt(t.time_s * t.time_s * power_var + power_w * power_w * t.se_s * t.se_s);
}

ClockEstimate EstimateClock(int i, const std::vector<int>& clocks_mhz, const Layout& layout,
                            const Eigen::VectorXd& coef, const Eigen::MatrixXd& cov, const TimeStat& tf,
                            const TimeStat& tb) {
  const int f = layout.Forward(i), b = layout.Backward(i);
  ClockEstimate c;
  c.clock_mhz = clocks_mhz[i];
  c.forward_measured = tf.measured();
  c.backward_measured = tb.measured();
  c.measured = c.forward_measured && c.backward_measured;
  c.forward_time_s = tf.time_s;
  c.forward_time_se_s = tf.se_s;
  c.backward_time_s = tb.time_s;
  c.backward_time_se_s = tb.se_s;
  c.forward_power_w = coef(f);
  c.forward_power_se_w = std::sqrt(cov(f, f));
  c.backward_power_w = coef(b);
  c.backward_power_se_w = std::sqrt(cov(b, b));
  SetEnergy(coef(f), cov(f, f), tf, c.forward_energy_j, c.forward_energy_se_j);
  SetEnergy(coef(b), cov(b, b), tb, c.backward_energy_j, c.backward_energy_se_j);
  const double var = tf.time_s * tf.time_s * cov(f, f) + tb.time_s * tb.time_s * cov(b, b) +
                     2 * tf.time_s * tb.time_s * cov(f, b) + coef(f) * coef(f) * tf.se_s * tf.se_s +
                     coef(b) * coef(b) * tb.se_s * tb.se_s;
  c.total_energy_se_j = std::sqrt(std::max(var, 0.0));
  return c;
}

// EstimatorOptions::equal_power_split: the clock's forward+backward energy
// and its SE kept, shared by time at one power.
void SplitByTime(ClockEstimate* c) {
  const double busy_s = c->forward_time_s + c->backward_time_s;
  if (!(busy_s > 0)) return;
  const double total_j = c->forward_energy_j + c->backward_energy_j;
  const double power_w = total_j / busy_s, power_se_w = c->total_energy_se_j / busy_s;
  c->forward_power_w = c->backward_power_w = power_w;
  c->forward_power_se_w = c->backward_power_se_w = power_se_w;
  c->forward_energy_j = power_w * c->forward_time_s;
  c->backward_energy_j = power_w * c->backward_time_s;
  c->forward_energy_se_j = power_se_w * c->forward_time_s;
  c->backward_energy_se_j = power_se_w * c->backward_time_s;
}

}  // namespace

Result<StageEstimate> EstimateStage(const std::vector<int>& clocks_mhz,
                                    const std::vector<WindowObservation>& observations,
                                    const EstimatorOptions& options) {
  PERSEUS_RETURN_IF_ERROR(ValidateClocks(clocks_mhz));
  PERSEUS_RETURN_IF_ERROR(ValidateWindows(observations, static_cast<int>(clocks_mhz.size())));
  const Layout layout{static_cast<int>(clocks_mhz.size())};
  const double reference_s = ReferenceTime(observations, options);
  PenalizedProblem problem =
      BuildProblem(clocks_mhz, observations, layout, std::max(options.difference_smoothing, 0.0));
  const double floor_sd = options.prior_relative_sd * std::abs(WeightedMeanTarget(problem));

  DriftFit drift = FitDrift(observations, layout, reference_s, options, problem);
  const std::vector<int> outliers =
      FindOutliers(problem, drift.fit.lambda, options.outlier_threshold,
                   std::max(floor_sd, kMinOutlierScale * std::abs(WeightedMeanTarget(problem))));
  if (!outliers.empty()) {
    for (int r : outliers) problem.weights(r) = 0;
    drift = FitDrift(observations, layout, reference_s, options, problem);
  }
  double sigma = NoiseSd(drift.fit, floor_sd);
  if (options.blocking_power_prior_w) {
    const double sd_w = options.blocking_power_prior_sd_w;
    problem.prior(layout.Blocking()) = *options.blocking_power_prior_w;
    problem.prior_weight(layout.Blocking()) += sigma * sigma / (sd_w * sd_w);
    drift.fit = Fit(problem, layout, options);
    sigma = NoiseSd(drift.fit, floor_sd);
  }
  const PenalizedFit& fit = drift.fit;
  const Eigen::MatrixXd cov = sigma * sigma * fit.inverse;

  StageEstimate e;
  const std::vector<TimeStat> forward =
      PooledTimes(clocks_mhz, observations, Instruction::kForward, options.prior_relative_sd);
  const std::vector<TimeStat> backward =
      PooledTimes(clocks_mhz, observations, Instruction::kBackward, options.prior_relative_sd);
  for (int i = 0; i < layout.clocks; ++i) {
    e.clocks.push_back(EstimateClock(i, clocks_mhz, layout, fit.coef, cov, forward[i], backward[i]));
  }
  if (options.equal_power_split) {
    for (ClockEstimate& c : e.clocks) SplitByTime(&c);
  }
  e.blocking_power_w = fit.coef(layout.Blocking());
  e.blocking_power_se_w = std::sqrt(cov(layout.Blocking(), layout.Blocking()));
  e.drift_per_s = fit.coef(layout.Drift()) * drift.rate_per_coef;
  e.drift_time_constant_s = drift.tau_s;
  e.reference_time_s = reference_s;
  e.residual_relative_sd = sigma / std::abs(WeightedMeanTarget(problem));
  e.smoothing = fit.lambda;
  e.difference_smoothing = std::max(options.difference_smoothing, 0.0);
  e.effective_parameters = fit.edf;
  e.windows = static_cast<int>(observations.size());
  e.outlier_windows = outliers;
  return e;
}

double PredictWindowEnergyJ(const StageEstimate& e, const WindowObservation& w) {
  const double busy_s = w.forward_time_s + w.backward_time_s;
  const double drift = e.drift_per_s * DriftShape(w.mid_time_s, e.reference_time_s, e.drift_time_constant_s);
  return (e.clocks[w.forward_index].forward_power_w * w.forward_time_s +
          e.clocks[w.backward_index].backward_power_w * w.backward_time_s +
          e.blocking_power_w * (w.cycle_time_s - busy_s)) *
         (1 + drift);
}

std::vector<int> ClockIndicesAboveTarget(const StageEstimate& e, double target_relative_se) {
  std::vector<int> above;
  for (size_t i = 0; i < e.clocks.size(); ++i) {
    const ClockEstimate& c = e.clocks[i];
    const double total_j = c.forward_energy_j + c.backward_energy_j;
    if (!(c.total_energy_se_j <= target_relative_se * std::abs(total_j))) above.push_back(static_cast<int>(i));
  }
  return above;
}

StageProfile ToStageProfile(const StageEstimate& e) {
  StageProfile profile;
  for (const ClockEstimate& c : e.clocks) {
    profile.at(Instruction::kForward).push_back({c.clock_mhz, c.forward_time_s, c.forward_energy_j});
    profile.at(Instruction::kBackward).push_back({c.clock_mhz, c.backward_time_s, c.backward_energy_j});
  }
  return profile;
}

}  // namespace perseus::profiling
