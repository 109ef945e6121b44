// An hourly grid carbon-intensity series and the readers that produce it.
//
// Every source (a CSV trace, the EIA 2022 files, the ElectricityMaps history)
// becomes an IntensityTrace: one value per hour window starting at
// start_unix_s, in gCO2/kWh. Irregular samples are resampled to hours (each
// hour takes the last sample at or before its start); missing values are
// filled by linear interpolation and every fill is recorded in `notes`.
// Thread safety: plain values and pure functions.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "perseus/status.h"

namespace perseus::carbon {

inline constexpr int64_t kWindowS = 3600;  // one forecasting/policy window
// What a trace may hold (BuildHourlyTrace): no grid emits more than about
// 1,200 gCO2/kWh (lignite), so 10,000 only rejects mistakes; a mistyped date
// is a gap of months or a span of centuries.
inline constexpr double kMaxCarbonGPerKwh = 10'000;
inline constexpr int64_t kMaxGapHours = 31 * 24;
inline constexpr int64_t kMaxTraceHours = 10 * 8'766;

// One fuel's hourly generation, where the source publishes the fuel mix.
struct FuelGeneration {
  std::string fuel;                   // the source's column, e.g. "NG"
  double lifecycle_g_per_kwh = 0;     // its emission factor
  std::vector<double> mw;             // one value per hour window
};

// The EIA files' fuel columns and the lifecycle emission factors (gCO2/kWh,
// IPCC AR5 medians) from which their avg_CI is computed: avg_CI is
// sum(factor * generation) / sum(generation) to 1e-12 on both 2022 files.
struct EiaFuel {
  const char* column;
  double lifecycle_g_per_kwh;
};
inline constexpr EiaFuel kEiaFuels[] = {{"WND", 11},  {"SUN", 41},  {"WAT", 24}, {"OIL", 650},
                                        {"NG", 490},  {"COL", 820}, {"NUC", 12}, {"OTH", 230}};

inline constexpr size_t kEiaFuelCount = sizeof(kEiaFuels) / sizeof(kEiaFuels[0]);

// sum(factor_i * mw_i) / sum(mw_i): the intensity of a generation mix; NaN
// when the total is not positive. REQUIRES: equal sizes.
double MixIntensity(const std::vector<double>& mw, const std::vector<double>& g_per_kwh);

// The emission factors of kEiaFuels, in their order: the factors of every
// fuel mix the runtime carries (a reading's, a job's stored history).
std::vector<double> EiaLifecycleFactors();
// Whether `mw` is a fuel mix the runtime can carry: one generation per fuel
// of kEiaFuels, each finite and >= 0 (MW).
bool UsableMix(std::span<const double> mw);

struct IntensityTrace {
  std::string source;                      // file name or URL, for reports
  int64_t start_unix_s = 0;                // start of window 0 (UTC)
  std::vector<double> carbon_g_per_kwh;    // one value per hour window
  std::vector<FuelGeneration> generation;  // the fuel mix, where the source has it (else empty)
  std::vector<std::string> notes;          // e.g. "filled 3 empty avg_CI cells by interpolation"
  int filled_hours = 0;                    // hours BuildHourlyTrace interpolated
  int size() const { return static_cast<int>(carbon_g_per_kwh.size()); }
  int64_t WindowStart(int i) const { return start_unix_s + i * kWindowS; }
};

// Window w's fuel mix, generation in MW per fuel of kEiaFuels in their
// order; empty when the trace has no mix of exactly those fuels (only the
// EIA reader gives one). REQUIRES: 0 <= w < trace.size().
std::vector<double> EiaMixAt(const IntensityTrace& trace, int w);

// A timestamped sample; NaN marks a missing value.
struct IntensitySample {
  int64_t unix_s = 0;
  double carbon_g_per_kwh = 0;
};

// OK for an intensity a trace or a live reading may hold (0 to
// kMaxCarbonGPerKwh); else InvalidArgument "<where>carbon intensity ...",
// `where` ending in ": " ("file.csv:4: column 'gco2_per_kwh': ").
Status CheckCarbonIntensity(double g_per_kwh, const std::string& where);

// Resamples sorted samples to hour windows from the first sample's hour to the
// last's (an hour takes the mean of its values, noted when it has several)
// and fills NaNs by linear interpolation (edges take the nearest value).
// Errors when there are no finite samples, timestamps go backwards, rows are
// over kMaxGapHours apart or the span exceeds kMaxTraceHours (`where[i]`
// names sample i in messages). The values are not checked (the fuel mix's
// generation, in MW, is resampled here too): the readers check intensities.
Result<IntensityTrace> BuildHourlyTrace(const std::vector<IntensitySample>& samples,
                                        const std::vector<std::string>& where, const std::string& source);

// Reads a CSV trace `timestamp,gco2_per_kwh` (ISO-8601 UTC). Errors name file:line.
Result<IntensityTrace> LoadCsvTrace(const std::string& path);
// Reads an EIA 2022 hourly file: `timestamp`, `avg_CI` and, where present,
// the fuel columns of kEiaFuels (generation in MW) into `generation`. Empty
// cells are interpolated and noted. A fuel column that is missing or cannot
// be used (a negative or unreadable cell) leaves `generation` empty, with a
// note naming the cell: the intensity alone still loads.
Result<IntensityTrace> LoadEiaTrace(const std::string& path);
// Reads a trace file of either kind: an EIA file when its header has an
// avg_CI column (the fuel mix with it), else a CSV trace. What the server's
// trace source and `perseus carbon --trace` read.
Result<IntensityTrace> LoadTraceFile(const std::string& path);
// "<shared_data>/carbon/eia2022_<region>_hourly_ci.csv"; region CISO or NYIS.
Result<std::string> EiaTracePath(const std::string& shared_data_dir, const std::string& region);

}  // namespace perseus::carbon
