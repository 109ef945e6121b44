// Trace replay.
#include "carbon/intensity_source.h"

namespace perseus::carbon {

IntensityReading ReadWithoutLookAhead(const IntensityTrace& trace, int64_t now_unix_s) {
  if (trace.size() == 0) return {0, now_unix_s, true, {}};
  int64_t i = (now_unix_s - trace.start_unix_s);
  i = i >= 0 ? i / kWindowS : -1;  // the hour containing now
  const int last = trace.size() - 1;
  if (i <= 0) return {trace.carbon_g_per_kwh.front(), trace.start_unix_s, true, EiaMixAt(trace, 0)};
  if (i > trace.size()) return {trace.carbon_g_per_kwh.back(), now_unix_s, true, EiaMixAt(trace, last)};
  const int w = static_cast<int>(i - 1);
  return {trace.carbon_g_per_kwh[w], trace.WindowStart(w), false, EiaMixAt(trace, w)};
}

IntensityReading TraceIntensitySource::Current(int64_t now_unix_s) { return ReadWithoutLookAhead(trace_, now_unix_s); }

}  // namespace perseus::carbon
