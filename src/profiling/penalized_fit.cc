#include "profiling/penalized_fit.h"

#include <cmath>
#include <limits>

namespace perseus::profiling {
namespace {

double PositiveRows(const Eigen::VectorXd& weights) { return static_cast<double>((weights.array() > 0).count()); }

double GcvScore(double rows, double rss, double edf) {
  if (edf >= rows - 0.5) return std::numeric_limits<double>::infinity();
  return rows * rss / ((rows - edf) * (rows - edf));
}

}  // namespace

Eigen::MatrixXd WeightedGram(const PenalizedProblem& p) {
  return p.design.transpose() * p.weights.asDiagonal() * p.design;
}

PenalizedFit SolvePenalized(const PenalizedProblem& p, double lambda) {
  const Eigen::Index n = p.design.cols();
  const Eigen::MatrixXd gram = WeightedGram(p);
  Eigen::MatrixXd system = gram + lambda * p.penalty;
  system.diagonal() += p.prior_weight;
  const Eigen::VectorXd rhs =
      p.design.transpose() * (p.weights.asDiagonal() * p.target) + p.prior_weight.cwiseProduct(p.prior);
  Eigen::LDLT<Eigen::MatrixXd> ldlt(system);
  PenalizedFit fit;
  fit.lambda = lambda;
  fit.coef = ldlt.solve(rhs);
  fit.inverse = ldlt.solve(Eigen::MatrixXd::Identity(n, n));
  fit.inverse = 0.5 * (fit.inverse + fit.inverse.transpose());
  fit.residual = p.target - p.design * fit.coef;
  fit.leverage = (p.design * fit.inverse).cwiseProduct(p.design).rowwise().sum().cwiseProduct(p.weights);
  fit.rss = p.weights.dot(fit.residual.cwiseAbs2());
  fit.edf = fit.inverse.cwiseProduct(gram).sum();  // trace(inverse x gram), both symmetric
  fit.rows = PositiveRows(p.weights);
  fit.gcv = GcvScore(fit.rows, fit.rss, fit.edf);
  return fit;
}

namespace {

bool Better(const PenalizedFit& a, const PenalizedFit& b) {
  return a.gcv < b.gcv || (a.gcv == b.gcv && a.lambda > b.lambda);
}

}  // namespace

PenalizedFit FitByGcv(const PenalizedProblem& problem, const std::vector<double>& grid) {
  // Every other grid point first, then the neighbours of the best one.
  const int n = static_cast<int>(grid.size());
  std::vector<bool> done(n, false);
  int best_index = 0;
  PenalizedFit best = SolvePenalized(problem, grid[0]);
  done[0] = true;
  auto visit = [&](int k) {
    if (k < 0 || k >= n || done[k]) return;
    done[k] = true;
    PenalizedFit fit = SolvePenalized(problem, grid[k]);
    if (Better(fit, best)) {
      best = std::move(fit);
      best_index = k;
    }
  };
  for (int k = 2; k < n; k += 2) visit(k);
  if (n > 1 && n % 2 == 0) visit(n - 1);
  const int coarse_best = best_index;
  visit(coarse_best - 1);
  visit(coarse_best + 1);
  return best;
}

bool DeterminesAll(const Eigen::MatrixXd& gram_in) {
  if (gram_in.size() == 0) return true;
  Eigen::MatrixXd gram = gram_in;
  const Eigen::VectorXd diag = gram.diagonal();
  if ((diag.array() <= 0).any()) return false;
  const Eigen::VectorXd scale = diag.cwiseSqrt().cwiseInverse();
  gram = scale.asDiagonal() * gram * scale.asDiagonal();
  Eigen::SelfAdjointEigenSolver<Eigen::MatrixXd> eigen(gram, Eigen::EigenvaluesOnly);
  return eigen.eigenvalues().minCoeff() > 1e-10 * eigen.eigenvalues().maxCoeff();
}

}  // namespace perseus::profiling
