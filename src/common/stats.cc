#include "common/stats.h"

#include <algorithm>

namespace perseus {

double Median(std::vector<double> values) {
  if (values.empty()) return 0;
  const size_t mid = values.size() / 2;
  std::nth_element(values.begin(), values.begin() + static_cast<long>(mid), values.end());
  const double hi = values[mid];
  if (values.size() % 2 == 1) return hi;
  return (*std::max_element(values.begin(), values.begin() + static_cast<long>(mid)) + hi) / 2;
}

}  // namespace perseus
