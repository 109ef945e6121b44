// Recursive least squares.
#include "carbon/rls_regression.h"

#include <cassert>
#include <cstddef>

namespace perseus::carbon {

RlsRegression::RlsRegression(int features, double forgetting, double prior_variance)
    : n_(features), forgetting_(forgetting), w_(features, 0.0), p_(static_cast<std::size_t>(features) * features, 0.0) {
  for (int i = 0; i < n_; ++i) p_[static_cast<std::size_t>(i) * n_ + i] = prior_variance;
}

double RlsRegression::Predict(const std::vector<double>& x) const {
  assert(static_cast<int>(x.size()) == n_);
  double y = 0;
  for (int i = 0; i < n_; ++i) y += w_[i] * x[i];
  return y;
}

void RlsRegression::Update(const std::vector<double>& x, double target) {
  assert(static_cast<int>(x.size()) == n_);
  std::vector<double> px(n_, 0.0);
  for (int i = 0; i < n_; ++i)
    for (int j = 0; j < n_; ++j) px[i] += p_[static_cast<std::size_t>(i) * n_ + j] * x[j];
  double denom = forgetting_;
  for (int i = 0; i < n_; ++i) denom += x[i] * px[i];
  const double err = target - Predict(x);
  for (int i = 0; i < n_; ++i) w_[i] += px[i] / denom * err;
  for (int i = 0; i < n_; ++i)
    for (int j = 0; j < n_; ++j) {
      double& p = p_[static_cast<std::size_t>(i) * n_ + j];
      p = (p - px[i] * px[j] / denom) / forgetting_;
    }
}

}  // namespace perseus::carbon
