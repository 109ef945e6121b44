// Recursive least squares with exponential forgetting (e.g. Haykin, Adaptive
// Filter Theory, ch. 10): the weights minimising sum_k lambda^(n-k) (y_k - w.x_k)^2
// plus a ridge prior towards w = 0, updated one example at a time.
// Every online linear model of the carbon forecasters is one of these.
// Thread safety: not thread-safe.
#pragma once

#include <vector>

namespace perseus::carbon {

class RlsRegression {
 public:
  // `forgetting` in (0, 1]: effective memory ~1/(1-forgetting) examples.
  // `prior_variance`: the initial inverse covariance's diagonal (small: a
  // strong prior towards w = 0).
  RlsRegression(int features, double forgetting, double prior_variance);
  double Predict(const std::vector<double>& x) const;
  void Update(const std::vector<double>& x, double target);
  const std::vector<double>& weights() const { return w_; }

 private:
  int n_;
  double forgetting_;
  std::vector<double> w_;
  std::vector<double> p_;  // inverse covariance, row-major n x n
};

}  // namespace perseus::carbon
