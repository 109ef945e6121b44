// Where the current grid carbon intensity comes from: a fixed value, a
// replayed trace, or a live API (electricitymaps_source.h). A source never
// fails at the caller: when it cannot get a fresh value it returns the last
// known one marked stale, and logs why.
// Thread safety: implementations are not thread-safe; use one per thread.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "carbon/intensity_trace.h"

namespace perseus::carbon {

// Receives one human-readable line per notable event (fallbacks, decisions).
using LogFn = std::function<void(const std::string&)>;

struct IntensityReading {
  double carbon_g_per_kwh = 0;
  int64_t unix_s = 0;      // when the value applies
  bool stale = false;      // true: a fallback to the last known value
  // The fuel mix of the same hour, generation in MW per fuel of kEiaFuels
  // in their order, where the source publishes it; else empty.
  std::vector<double> mix_mw = {};
};

class IntensitySource {
 public:
  virtual ~IntensitySource() = default;
  // The intensity at `now_unix_s`.
  virtual IntensityReading Current(int64_t now_unix_s) = 0;
  // What the source knew at `now_unix_s` of the hours already over, oldest
  // first, at most `max_hours` of them: the history a job whose first carbon
  // decision is now starts with (control::SeedCarbonHistory). Empty where
  // the source has none (a fixed value) or cannot get it (logged).
  virtual std::vector<IntensityReading> History(int64_t /*now_unix_s*/, int /*max_hours*/) { return {}; }
};

// Always the same value.
class FixedIntensitySource : public IntensitySource {
 public:
  explicit FixedIntensitySource(double carbon_g_per_kwh) : carbon_g_per_kwh_(carbon_g_per_kwh) {}
  IntensityReading Current(int64_t now_unix_s) override { return {carbon_g_per_kwh_, now_unix_s, false, {}}; }

 private:
  double carbon_g_per_kwh_;
};

// What a reader of `trace` knows at `now` without look-ahead: the value of
// the hour before the one containing `now` (an hour's average is known only
// once it is over), with that hour's start as its time and, where the trace
// has it (an EIA file), that hour's fuel mix. In the trace's first hour and
// before it, the first value; more than an hour after it, the last at `now`
// (both marked stale). The server's trace source and the carbon replay read
// a trace through this.
IntensityReading ReadWithoutLookAhead(const IntensityTrace& trace, int64_t now_unix_s);

// What a reader of `trace` polling every hour would have read by `now`: the
// values (and fuel mixes) of the trace's hours among the last `max_hours`
// before the hour containing `now`, oldest first, each with its hour's start
// and not stale. The last is the hour ReadWithoutLookAhead(now) reads while
// `now` is within the trace. The replay's history before a run and the
// server's trace source read this.
std::vector<IntensityReading> HistoryWithoutLookAhead(const IntensityTrace& trace, int64_t now_unix_s, int max_hours);

// Replays a trace without look-ahead (ReadWithoutLookAhead, HistoryWithoutLookAhead).
class TraceIntensitySource : public IntensitySource {
 public:
  explicit TraceIntensitySource(IntensityTrace trace) : trace_(std::move(trace)) {}
  IntensityReading Current(int64_t now_unix_s) override;
  std::vector<IntensityReading> History(int64_t now_unix_s, int max_hours) override;

 private:
  IntensityTrace trace_;
};

}  // namespace perseus::carbon
