#include "runtime/server/power_cap_schedule.h"

#include "carbon/iso_time.h"
#include "common/csv_reader.h"

namespace perseus::server {

std::optional<protocol::PowerCapRequest> PowerCapSchedule::At(int64_t unix_s) const {
  std::optional<protocol::PowerCapRequest> cap;
  for (const Row& row : rows) {
    if (row.from_unix_s > unix_s) break;
    cap = row.cap;
  }
  return cap;
}

namespace {

Result<PowerCapSchedule::Row> ParseRow(const CsvTable& t, const CsvRow& row, int time_col, int average_col, int peak_col,
                                       double window_s) {
  PowerCapSchedule::Row out;
  Result<int64_t> from = carbon::ParseIsoUtc(row.fields[time_col]);
  if (!from.ok()) return Status::InvalidArgument(t.Where(row, "timestamp") + from.status().message());
  out.from_unix_s = *from;
  Result<double> average = t.Number(row, average_col);
  if (!average.ok()) return average.status();
  if (*average == 0) return out;
  if (*average < 1 || *average > 1e9) {
    return Status::InvalidArgument(t.Where(row, "average_w") + "expected 0 (no cap) or a power in [1, 1e9] W");
  }
  double peak_w = 0;
  if (peak_col >= 0 && static_cast<size_t>(peak_col) < row.fields.size() && !row.fields[peak_col].empty()) {
    Result<double> peak = t.Number(row, peak_col);
    if (!peak.ok()) return peak.status();
    if (*peak < *average || *peak > 1e9) {
      return Status::InvalidArgument(t.Where(row, "peak_w") + "expected empty or at least average_w, up to 1e9 W");
    }
    peak_w = *peak;
  }
  out.cap = protocol::PowerCapRequest{*average, peak_w, window_s};
  return out;
}

}  // namespace

Result<PowerCapSchedule> LoadPowerCapSchedule(const std::string& path, double window_s) {
  Result<CsvTable> table = ReadCsvFile(path);
  if (!table.ok()) return table.status();
  Result<int> time_col = table->RequireColumn("timestamp");
  if (!time_col.ok()) return time_col.status();
  Result<int> average_col = table->RequireColumn("average_w");
  if (!average_col.ok()) return average_col.status();
  const int peak_col = table->Column("peak_w");
  PowerCapSchedule schedule;
  for (const CsvRow& row : table->rows) {
    Result<PowerCapSchedule::Row> parsed = ParseRow(*table, row, *time_col, *average_col, peak_col, window_s);
    if (!parsed.ok()) return parsed.status();
    if (!schedule.rows.empty() && parsed->from_unix_s <= schedule.rows.back().from_unix_s) {
      return Status::InvalidArgument(table->Where(row, "timestamp") + "not after the row before it");
    }
    schedule.rows.push_back(*parsed);
  }
  if (schedule.rows.empty()) return Status::InvalidArgument(path + ": no rows");
  return schedule;
}

}  // namespace perseus::server
