// Trace replay.
#include "carbon/intensity_source.h"

namespace perseus::carbon {

IntensityReading TraceIntensitySource::Current(int64_t now_unix_s) {
  if (trace_.size() == 0) return {0, now_unix_s, true, {}};
  int64_t i = (now_unix_s - trace_.start_unix_s);
  i = i >= 0 ? i / kWindowS : -1;  // the hour containing now
  const int last = trace_.size() - 1;
  if (i <= 0) return {trace_.carbon_g_per_kwh.front(), trace_.start_unix_s, true, EiaMixAt(trace_, 0)};
  if (i > trace_.size()) return {trace_.carbon_g_per_kwh.back(), now_unix_s, true, EiaMixAt(trace_, last)};
  const int w = static_cast<int>(i - 1);
  return {trace_.carbon_g_per_kwh[w], trace_.WindowStart(w), false, EiaMixAt(trace_, w)};
}

}  // namespace perseus::carbon
