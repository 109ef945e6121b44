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
  fit.edf = (fit.inverse * gram).trace();
  fit.rows = PositiveRows(p.weights);
  fit.gcv = GcvScore(fit.rows, fit.rss, fit.edf);
  return fit;
}

PenalizedFit FitByGcv(const PenalizedProblem& problem, const std::vector<double>& grid) {
  PenalizedFit best = SolvePenalized(problem, grid.front());
  for (size_t k = 1; k < grid.size(); ++k) {
    PenalizedFit fit = SolvePenalized(problem, grid[k]);
    const bool smoother = fit.lambda > best.lambda;
    if (fit.gcv < best.gcv || (fit.gcv == best.gcv && smoother)) best = std::move(fit);
  }
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
