// Shared forecaster helpers.
#include "carbon/forecaster.h"

namespace perseus::carbon {

double Forecaster::TimeOfDayMean(int index, int days) const {
  double sum = 0;
  int n = 0;
  for (int k = 1; k <= days; ++k) {
    const int j = index - 24 * k;
    if (j < 0) break;
    if (j >= size()) continue;
    sum += At(j);
    ++n;
  }
  return n > 0 ? sum / n : At(size() - 1);
}

}  // namespace perseus::carbon
