// Trace replay.
#include "carbon/intensity_source.h"

#include <algorithm>

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

std::vector<IntensityReading> HistoryWithoutLookAhead(const IntensityTrace& trace, int64_t now_unix_s, int max_hours) {
  std::vector<IntensityReading> out;
  if (trace.size() == 0 || now_unix_s < trace.start_unix_s) return out;
  const int64_t now_w = (now_unix_s - trace.start_unix_s) / kWindowS;  // the hour containing now
  const int64_t first = std::max<int64_t>(0, now_w - max_hours);
  const int64_t last = std::min<int64_t>(now_w - 1, trace.size() - 1);
  for (int64_t w = first; w <= last; ++w) {
    const int i = static_cast<int>(w);
    out.push_back({trace.carbon_g_per_kwh[i], trace.WindowStart(i), false, EiaMixAt(trace, i)});
  }
  return out;
}

IntensityReading TraceIntensitySource::Current(int64_t now_unix_s) { return ReadWithoutLookAhead(trace_, now_unix_s); }

std::vector<IntensityReading> TraceIntensitySource::History(int64_t now_unix_s, int max_hours) {
  return HistoryWithoutLookAhead(trace_, now_unix_s, max_hours);
}

}  // namespace perseus::carbon
