// Hourly resampling and the CSV/EIA trace readers.
#include "carbon/intensity_trace.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "carbon/iso_time.h"
#include "common/csv_reader.h"
#include "common/strings.h"

namespace perseus::carbon {
namespace {

int64_t FloorHour(int64_t t) { return (t >= 0 ? t : t - kWindowS + 1) / kWindowS * kWindowS; }

// Fills NaN runs by linear interpolation; returns how many values were filled.
int FillGaps(std::vector<double>& v) {
  int filled = 0;
  const int n = static_cast<int>(v.size());
  int prev = -1;
  for (int i = 0; i <= n; ++i) {
    if (i < n && std::isnan(v[i])) continue;
    for (int j = prev + 1; j < i; ++j) {
      if (prev < 0) v[j] = v[i];
      else if (i == n) v[j] = v[prev];
      else v[j] = v[prev] + (v[i] - v[prev]) * (j - prev) / static_cast<double>(i - prev);
      ++filled;
    }
    prev = i;
  }
  return filled;
}

// Reads `value_column` against `timestamp`; empty cells become NaN. A
// column of generation (MW) must be >= 0; one of intensity also below
// kMaxCarbonGPerKwh.
enum class ColumnKind { kIntensity, kGeneration };
Result<IntensityTrace> TraceFromColumn(const Result<CsvTable>& table, const std::string& value_column,
                                       ColumnKind kind = ColumnKind::kIntensity) {
  if (!table.ok()) return table.status();
  Result<int> ts_col = table->RequireColumn("timestamp");
  if (!ts_col.ok()) return ts_col.status();
  Result<int> v_col = table->RequireColumn(value_column);
  if (!v_col.ok()) return v_col.status();
  std::vector<IntensitySample> samples;
  std::vector<std::string> where;
  for (const CsvRow& row : table->rows) {
    Result<int64_t> t = ParseIsoUtc(row.fields[*ts_col]);
    if (!t.ok()) return Status::InvalidArgument(table->Where(row, "timestamp") + t.status().message());
    IntensitySample s{*t, std::numeric_limits<double>::quiet_NaN()};
    if (!row.fields[*v_col].empty()) {
      Result<double> v = table->Number(row, *v_col);
      if (!v.ok()) return v.status();
      if (*v < 0) return Status::InvalidArgument(table->Where(row, value_column) + "must be >= 0, got " + row.fields[*v_col]);
      if (kind == ColumnKind::kIntensity) {
        PERSEUS_RETURN_IF_ERROR(CheckCarbonIntensity(*v, table->Where(row, value_column)));
      }
      s.carbon_g_per_kwh = *v;
    }
    samples.push_back(s);
    where.push_back(table->source + ":" + std::to_string(row.line));
  }
  if (samples.empty()) return Status::InvalidArgument(table->source + ": no data rows");
  return BuildHourlyTrace(samples, where, table->source);
}

}  // namespace

Status CheckCarbonIntensity(double g_per_kwh, const std::string& where) {
  if (g_per_kwh >= 0 && g_per_kwh <= kMaxCarbonGPerKwh) return Status::Ok();
  return Status::InvalidArgument(where + "carbon intensity " + Format("%g", g_per_kwh) +
                                 " gCO2/kWh: expected 0 to " + Format("%g", kMaxCarbonGPerKwh));
}

Result<IntensityTrace> BuildHourlyTrace(const std::vector<IntensitySample>& samples,
                                        const std::vector<std::string>& where, const std::string& source) {
  if (samples.empty()) return Status::InvalidArgument(source + ": no samples");
  // Every hour of the span is kept and gaps are interpolated: a mistyped
  // year must not make that a century of made-up hours (or all memory).
  const auto at = [&](size_t i) -> const std::string& { return i < where.size() ? where[i] : source; };
  for (size_t i = 1; i < samples.size(); ++i) {
    if (samples[i].unix_s <= samples[i - 1].unix_s) {
      return Status::InvalidArgument(at(i) + ": timestamp " + FormatIsoUtc(samples[i].unix_s) +
                                     " is not after the previous row's " + FormatIsoUtc(samples[i - 1].unix_s));
    }
    const int64_t gap_h = (samples[i].unix_s - samples[i - 1].unix_s) / kWindowS;
    if (gap_h > kMaxGapHours) {
      return Status::InvalidArgument(at(i) + ": timestamp " + FormatIsoUtc(samples[i].unix_s) + " is " +
                                     std::to_string(gap_h) + " hours after the previous row's " +
                                     FormatIsoUtc(samples[i - 1].unix_s) + "; a trace may skip at most " +
                                     std::to_string(kMaxGapHours) + " hours (a mistyped date?)");
    }
  }
  IntensityTrace trace;
  trace.source = source;
  trace.start_unix_s = FloorHour(samples.front().unix_s);
  const int64_t hours = (FloorHour(samples.back().unix_s) - trace.start_unix_s) / kWindowS + 1;
  if (hours > kMaxTraceHours) {
    return Status::InvalidArgument(source + ": spans " + std::to_string(hours) + " hours (" +
                                   FormatIsoUtc(samples.front().unix_s) + " to " + FormatIsoUtc(samples.back().unix_s) +
                                   "); a trace may span at most " + std::to_string(kMaxTraceHours) + " (10 years; a mistyped date?)");
  }
  trace.carbon_g_per_kwh.assign(hours, std::numeric_limits<double>::quiet_NaN());
  // An hour's value is the mean of its values: sub-hourly data (every 5 or
  // 15 minutes) keeps its hour's average, not its last sample.
  int missing_hours = 0, averaged_hours = 0, averaged_samples = 0;
  size_t k = 0;
  for (int64_t h = 0; h < hours; ++h) {
    const int64_t t = trace.start_unix_s + h * kWindowS;
    bool any = false;
    double sum = 0;
    int values = 0;
    while (k < samples.size() && samples[k].unix_s < t + kWindowS) {
      if (!std::isnan(samples[k].carbon_g_per_kwh)) {
        sum += samples[k].carbon_g_per_kwh;
        ++values;
      }
      any = true;
      ++k;
    }
    if (values > 0) trace.carbon_g_per_kwh[h] = sum / values;
    if (values > 1) ++averaged_hours, averaged_samples += values;
    if (!any) ++missing_hours;
  }
  int empty = 0;
  for (const IntensitySample& s : samples) empty += std::isnan(s.carbon_g_per_kwh);
  const int filled = FillGaps(trace.carbon_g_per_kwh);
  trace.filled_hours = filled;
  if (filled == static_cast<int>(trace.carbon_g_per_kwh.size())) {
    return Status::InvalidArgument(source + ": no carbon-intensity values");
  }
  if (averaged_hours > 0) {
    trace.notes.push_back(source + ": averaged " + std::to_string(averaged_samples) + " values into " +
                          std::to_string(averaged_hours) + " hour(s) with more than one");
  }
  if (filled > 0) {
    trace.notes.push_back(source + ": filled " + std::to_string(filled) + " hour(s) by linear interpolation (" +
                          std::to_string(empty) + " empty value cell(s), " + std::to_string(missing_hours) +
                          " hour(s) without a row)");
  }
  return trace;
}

Result<IntensityTrace> LoadCsvTrace(const std::string& path) { return TraceFromColumn(ReadCsvFile(path), "gco2_per_kwh"); }

namespace {

Result<IntensityTrace> EiaTraceFromTable(const Result<CsvTable>& table, const std::string& path) {
  Result<IntensityTrace> trace = TraceFromColumn(table, "avg_CI");
  if (!trace.ok()) return trace;
  // The mix is all or nothing. A file with none of the fuel columns has
  // intensity only; one with some of them is missing the others: say which.
  std::string missing;
  int present = 0;
  for (const EiaFuel& fuel : kEiaFuels) {
    if (table->Column(fuel.column) >= 0) ++present;
    else missing += std::string(missing.empty() ? "'" : ", '") + fuel.column + "'";
  }
  if (!missing.empty()) {
    if (present > 0) trace->notes.push_back("fuel mix not used: " + path + ": no column " + missing);
    return trace;
  }
  std::string filled_columns;
  for (const EiaFuel& fuel : kEiaFuels) {
    // A fuel column the forecasts cannot use (a negative or unreadable cell,
    // other hours than avg_CI) costs the mix, not the trace: say why.
    Result<IntensityTrace> mw = TraceFromColumn(table, fuel.column, ColumnKind::kGeneration);
    if (mw.ok() && (mw->start_unix_s != trace->start_unix_s || mw->size() != trace->size())) {
      mw = Status::InvalidArgument(path + ": column '" + fuel.column + "' covers other hours than avg_CI");
    }
    if (!mw.ok()) {
      trace->generation.clear();
      trace->notes.push_back("fuel mix not used: " + mw.status().message());
      return trace;
    }
    if (mw->filled_hours > 0) filled_columns += std::string(filled_columns.empty() ? "" : ", ") + fuel.column;
    trace->generation.push_back({fuel.column, fuel.lifecycle_g_per_kwh, std::move(mw->carbon_g_per_kwh)});
  }
  if (!trace->generation.empty() && !filled_columns.empty()) {
    trace->notes.push_back(path + ": fuel mix: filled empty cells by linear interpolation in column(s) " +
                           filled_columns);
  }
  return trace;
}

}  // namespace

Result<IntensityTrace> LoadEiaTrace(const std::string& path) { return EiaTraceFromTable(ReadCsvFile(path), path); }

Result<IntensityTrace> LoadTraceFile(const std::string& path) {
  const Result<CsvTable> table = ReadCsvFile(path);
  if (!table.ok()) return table.status();
  if (table->Column("avg_CI") >= 0) return EiaTraceFromTable(table, path);
  if (table->Column("gco2_per_kwh") < 0) {
    return Status::InvalidArgument(table->source + ":" + std::to_string(table->header_line) +
                                   ": missing column 'gco2_per_kwh' (a CSV trace) or 'avg_CI' (an EIA file)");
  }
  return TraceFromColumn(table, "gco2_per_kwh");
}

std::vector<double> EiaLifecycleFactors() {
  std::vector<double> factors;
  for (const EiaFuel& fuel : kEiaFuels) factors.push_back(fuel.lifecycle_g_per_kwh);
  return factors;
}

bool UsableMix(std::span<const double> mw) {
  return mw.size() == kEiaFuelCount && std::all_of(mw.begin(), mw.end(), [](double v) { return std::isfinite(v) && v >= 0; });
}

std::vector<double> EiaMixAt(const IntensityTrace& trace, int w) {
  if (trace.generation.size() != kEiaFuelCount) return {};
  std::vector<double> mw;
  for (size_t f = 0; f < kEiaFuelCount; ++f) {
    if (trace.generation[f].fuel != kEiaFuels[f].column) return {};
    mw.push_back(trace.generation[f].mw[w]);
  }
  return mw;
}

double MixIntensity(const std::vector<double>& mw, const std::vector<double>& g_per_kwh) {
  double total = 0, weighted = 0;
  for (size_t i = 0; i < mw.size(); ++i) {
    total += mw[i];
    weighted += mw[i] * g_per_kwh[i];
  }
  return total > 0 ? weighted / total : std::numeric_limits<double>::quiet_NaN();
}

Result<std::string> EiaTracePath(const std::string& shared_data_dir, const std::string& region) {
  if (region != "CISO" && region != "NYIS") {
    return Status::InvalidArgument("EIA region must be CISO or NYIS, got '" + region + "'");
  }
  return shared_data_dir + "/carbon/eia2022_" + region + "_hourly_ci.csv";
}

}  // namespace perseus::carbon
