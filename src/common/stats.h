// Small statistics shared by the server, the profiling estimator, the CLI and
// the benchmarks. Thread safety: pure functions.
#pragma once

#include <vector>

namespace perseus {

// The median: the middle value, or the mean of the two middle values of an
// even count; 0 for no values.
double Median(std::vector<double> values);

}  // namespace perseus
