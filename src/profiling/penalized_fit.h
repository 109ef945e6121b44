// Penalized weighted least squares with the penalty weight chosen by
// generalized cross-validation: the numerical core of the stage estimator,
// kept apart so that it can be checked against a brute-force solve.
//
// Minimises  sum_i w_i (y_i - a_i . x)^2 + lambda x'Px + sum_j r_j (x_j - prior_j)^2
// for a dense design A (m x n, n up to a few hundred). The prior weights r are
// either tiny (a ridge that only makes directions that neither the data nor
// the penalty determine well-defined: they stay at the prior, with a huge
// variance, so a fit never fails for lack of data) or a real prior: with row
// noise variance sigma^2 / w_i, a prior sd s is the weight sigma^2 / s^2. Internal to perseus_profiling (Eigen in the
// interface). Thread safety: pure functions.
#pragma once

#include <Eigen/Dense>
#include <vector>

namespace perseus::profiling {

struct PenalizedProblem {
  Eigen::MatrixXd design;        // A, m x n
  Eigen::VectorXd target;        // y, m
  Eigen::VectorXd weights;       // w, m, >= 0 (0 drops a row)
  Eigen::MatrixXd penalty;       // P, n x n, symmetric positive semi-definite
  Eigen::VectorXd prior;         // n, prior means
  Eigen::VectorXd prior_weight;  // n, >= 0
};

struct PenalizedFit {
  double lambda = 0;
  Eigen::VectorXd coef;      // x
  Eigen::MatrixXd inverse;   // (A'WA + lambda P + diag(r))^-1; times sigma^2 it is x's covariance
  Eigen::VectorXd residual;  // y - A x
  Eigen::VectorXd leverage;  // diagonal of the hat matrix, w_i a_i' inverse a_i
  double rss = 0;            // sum_i w_i residual_i^2
  double edf = 0;            // effective number of parameters, trace of the hat matrix
  double rows = 0;           // rows with positive weight
  double gcv = 0;            // rows * rss / (rows - edf)^2; +inf when edf >= rows - 0.5
};

// REQUIRES: dimensions agree; A'WA + lambda P + diag(r) positive definite.
PenalizedFit SolvePenalized(const PenalizedProblem& problem, double lambda);

// Returns the fit with the smallest GCV score over `grid` (ascending), found
// coarse to fine: every other grid point (and the last), then the two
// neighbours of the best of those. Ties, and a grid on which every score is
// infinite, go to the larger lambda (the smoother fit). REQUIRES: grid not empty.
PenalizedFit FitByGcv(const PenalizedProblem& problem, const std::vector<double>& grid);

// A'WA (no penalty, no ridge).
Eigen::MatrixXd WeightedGram(const PenalizedProblem& problem);

// Whether a Gram matrix determines every coefficient: its smallest
// eigenvalue, after scaling to unit diagonal, exceeds 1e-10 of the largest.
bool DeterminesAll(const Eigen::MatrixXd& gram);

}  // namespace perseus::profiling
