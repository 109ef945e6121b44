// Property test: on random small problems, EstimateStage at a fixed smoothing
// agrees with a brute-force solve written independently from the definition in
// stage_estimator.h: the penalized least-squares objective written out term by
// term, its normal equations formed from the objective's coefficients and
// solved by Gauss-Jordan elimination with partial pivoting, the gauge by
// substituting pB[0] = pF[0], and the SEs from the same inverse.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <random>

#include "profiling/stage_estimator.h"

namespace perseus::profiling {
namespace {

using Vector = std::vector<double>;
using Matrix = std::vector<Vector>;

// Inverts a (small, dense) matrix by Gauss-Jordan elimination with partial pivoting.
Matrix Invert(Matrix a) {
  const size_t n = a.size();
  Matrix inv(n, Vector(n, 0));
  for (size_t i = 0; i < n; ++i) inv[i][i] = 1;
  for (size_t col = 0; col < n; ++col) {
    size_t pivot = col;
    for (size_t r = col + 1; r < n; ++r) {
      if (std::abs(a[r][col]) > std::abs(a[pivot][col])) pivot = r;
    }
    std::swap(a[col], a[pivot]);
    std::swap(inv[col], inv[pivot]);
    const double d = a[col][col];
    for (size_t k = 0; k < n; ++k) {
      a[col][k] /= d;
      inv[col][k] /= d;
    }
    for (size_t r = 0; r < n; ++r) {
      if (r == col || a[r][col] == 0) continue;
      const double f = a[r][col];
      for (size_t k = 0; k < n; ++k) {
        a[r][k] -= f * a[col][k];
        inv[r][k] -= f * inv[col][k];
      }
    }
  }
  return inv;
}

struct Problem {
  std::vector<int> clocks_mhz;
  std::vector<WindowObservation> windows;
};

Problem RandomProblem(std::mt19937_64& rng) {
  std::uniform_int_distribution<int> clocks(3, 6), step(1, 2), index(0, 5);
  std::uniform_real_distribution<double> unit(0, 1);
  Problem p;
  const int k = clocks(rng);
  p.clocks_mhz = {1410};
  while (static_cast<int>(p.clocks_mhz.size()) < k) p.clocks_mhz.push_back(p.clocks_mhz.back() - 15 * step(rng));
  const int m = 3 * k + 6;
  for (int w = 0; w < m; ++w) {
    WindowObservation o;
    // Every clock both ways first (so the data determine every power), then random pairs.
    o.forward_index = w < k ? w : (w < 2 * k ? 0 : index(rng) % k);
    o.backward_index = w < k ? w : (w < 2 * k ? w - k : index(rng) % k);
    o.mid_time_s = 10 + 15 * w + 5 * unit(rng);
    o.cycle_time_s = 8 + 4 * unit(rng);
    o.forward_count = o.backward_count = 40;
    o.forward_time_s = (0.15 + 0.2 * unit(rng)) * o.cycle_time_s;
    o.backward_time_s = (0.3 + 0.3 * unit(rng)) * o.cycle_time_s;
    o.forward_time_sq_s2 = o.forward_time_s * o.forward_time_s / 40 * 1.001;
    o.backward_time_sq_s2 = o.backward_time_s * o.backward_time_s / 40 * 1.001;
    o.energy_j = (200 + 200 * unit(rng)) * o.cycle_time_s;
    p.windows.push_back(o);
  }
  return p;
}

// Reduced parameters: pF[0..K-1], pB[1..K-1], Pblk, relative drift rate.
struct BruteForce {
  Vector theta;
  Vector se;  // per parameter
};

BruteForce Solve(const Problem& p, double smoothing, double difference_smoothing, double tau_s, double t0_s) {
  const int k = static_cast<int>(p.clocks_mhz.size());
  const int n = 2 * k + 1;
  auto pf = [&](int i) { return i; };
  auto pb = [&](int i) { return i == 0 ? 0 : k - 1 + i; };
  const int blk = 2 * k - 1, drift = 2 * k;
  // Design rows and weights straight from the model.
  double mean_c = 0;
  for (const auto& w : p.windows) mean_c += w.cycle_time_s / p.windows.size();
  Matrix rows;
  Vector y, wt;
  for (const auto& w : p.windows) {
    Vector a(n, 0);
    const double c = w.cycle_time_s, power = w.energy_j / c;
    a[pf(w.forward_index)] += w.forward_time_s / c;
    a[pb(w.backward_index)] += w.backward_time_s / c;
    a[blk] = 1 - (w.forward_time_s + w.backward_time_s) / c;
    const double dt = w.mid_time_s - t0_s;
    a[drift] = (tau_s > 0 ? tau_s * (1 - std::exp(-dt / tau_s)) : dt) * power;
    rows.push_back(a);
    y.push_back(power);
    wt.push_back(c / mean_c);
  }
  // Penalty functionals, each a linear form in theta.
  std::vector<int> steps;  // divided differences in units of the median clock step
  for (int i = 1; i < k; ++i) steps.push_back(p.clocks_mhz[i - 1] - p.clocks_mhz[i]);
  std::sort(steps.begin(), steps.end());
  const double unit_mhz = steps[steps.size() / 2];
  std::vector<std::function<double(const Vector&)>> smooth, difference;
  for (int i = 1; i + 1 < k; ++i) {
    const double x0 = p.clocks_mhz[i - 1] / unit_mhz, x1 = p.clocks_mhz[i] / unit_mhz,
                 x2 = p.clocks_mhz[i + 1] / unit_mhz;
    for (auto col : {std::function<int(int)>(pf), std::function<int(int)>(pb)}) {
      smooth.push_back([=](const Vector& t) {
        const double s1 = (t[col(i - 1)] - t[col(i)]) / (x0 - x1), s2 = (t[col(i)] - t[col(i + 1)]) / (x1 - x2);
        return (s1 - s2) / ((x0 - x2) / 2);
      });
    }
  }
  for (int i = 0; i + 1 < k; ++i) {
    difference.push_back([=](const Vector& t) { return (t[pb(i + 1)] - t[pf(i + 1)]) - (t[pb(i)] - t[pf(i)]); });
  }
  // Quadratic forms as matrices (by evaluating on unit vectors).
  auto gram_of = [&](const std::vector<std::function<double(const Vector&)>>& forms) {
    Matrix g(n, Vector(n, 0));
    for (const auto& f : forms) {
      Vector coef(n);
      for (int j = 0; j < n; ++j) {
        Vector e(n, 0);
        e[j] = 1;
        coef[j] = f(e);
      }
      for (int a = 0; a < n; ++a) {
        for (int b = 0; b < n; ++b) g[a][b] += coef[a] * coef[b];
      }
    }
    return g;
  };
  Matrix data(n, Vector(n, 0));
  Vector rhs(n, 0);
  for (size_t r = 0; r < rows.size(); ++r) {
    for (int a = 0; a < n; ++a) {
      rhs[a] += wt[r] * rows[r][a] * y[r];
      for (int b = 0; b < n; ++b) data[a][b] += wt[r] * rows[r][a] * rows[r][b];
    }
  }
  const Matrix ps = gram_of(smooth), pd = gram_of(difference);
  double power_trace = 0, ps_trace = 0, pd_trace = 0;
  for (int j = 0; j < 2 * k - 1; ++j) power_trace += data[j][j];
  for (int j = 0; j < n; ++j) {
    ps_trace += ps[j][j];
    pd_trace += pd[j][j];
  }
  Matrix system = data;
  for (int a = 0; a < n; ++a) {
    for (int b = 0; b < n; ++b) {
      system[a][b] +=
          smoothing * (ps[a][b] * power_trace / ps_trace + difference_smoothing * pd[a][b] * power_trace / pd_trace);
    }
  }
  const Matrix inv = Invert(system);
  BruteForce out;
  out.theta.assign(n, 0);
  for (int a = 0; a < n; ++a) {
    for (int b = 0; b < n; ++b) out.theta[a] += inv[a][b] * rhs[b];
  }
  double rss = 0, edf = 0;
  for (size_t r = 0; r < rows.size(); ++r) {
    double fit = 0;
    for (int a = 0; a < n; ++a) fit += rows[r][a] * out.theta[a];
    rss += wt[r] * (y[r] - fit) * (y[r] - fit);
  }
  for (int a = 0; a < n; ++a) {
    for (int b = 0; b < n; ++b) edf += inv[a][b] * data[b][a];
  }
  const double sigma2 = rss / (rows.size() - edf);
  for (int a = 0; a < n; ++a) out.se.push_back(std::sqrt(sigma2 * inv[a][a]));
  return out;
}

TEST(EstimateStageProperty, MatchesABruteForceSolveOnRandomProblems) {
  std::mt19937_64 rng(11);
  for (int trial = 0; trial < 60; ++trial) {
    const Problem p = RandomProblem(rng);
    const int k = static_cast<int>(p.clocks_mhz.size());
    const double smoothing = std::vector<double>{0, 0.01, 1, 100}[trial % 4];
    const double difference = trial % 3 == 0 ? 0 : 10;
    const double tau_s = trial % 2 == 0 ? 0 : 300;
    EstimatorOptions o;
    o.smoothing = smoothing;
    o.difference_smoothing = difference;
    o.drift_time_constant_s = tau_s;
    o.reference_time_s = 100;
    o.outlier_threshold = 0;
    o.prior_relative_sd = 1e-12;
    Result<StageEstimate> e = EstimateStage(p.clocks_mhz, p.windows, o);
    ASSERT_TRUE(e.ok()) << e.status().ToString();
    const BruteForce b = Solve(p, smoothing, difference, tau_s, 100);
    const std::string where = "trial " + std::to_string(trial);
    auto near = [&](double got, double want, const std::string& what) {
      // Relative to the powers' scale (hundreds of W): the estimator's tiny ridge.
      EXPECT_NEAR(got, want, 1e-6 * (std::abs(want) + 100)) << where << ": " << what;
    };
    for (int i = 0; i < k; ++i) {
      const int b_index = i == 0 ? 0 : k - 1 + i;
      near(e->clocks[i].forward_power_w, b.theta[i], "forward power " + std::to_string(i));
      near(e->clocks[i].backward_power_w, b.theta[b_index], "backward power " + std::to_string(i));
      near(e->clocks[i].forward_power_se_w, b.se[i], "forward power SE " + std::to_string(i));
      near(e->clocks[i].backward_power_se_w, b.se[b_index], "backward power SE " + std::to_string(i));
    }
    near(e->blocking_power_w, b.theta[2 * k - 1], "blocking power");
    near(e->blocking_power_se_w, b.se[2 * k - 1], "blocking power SE");
    EXPECT_NEAR(e->drift_per_s, b.theta[2 * k], 1e-9) << where;
    EXPECT_EQ(e->smoothing, smoothing);
    EXPECT_EQ(e->drift_time_constant_s, tau_s);
  }
}

}  // namespace
}  // namespace perseus::profiling
