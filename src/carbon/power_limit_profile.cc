// Zeus power-limit profile reader.
#include "carbon/power_limit_profile.h"

#include <algorithm>
#include <map>

#include "common/csv_reader.h"

namespace perseus::carbon {
namespace {

constexpr const char kPrefix[] = "__GlobalPowerLimitOptimizer_";
constexpr int kMaxPowerLimitW = 10'000;

}  // namespace

Result<PowerLimitProfile> LoadPowerLimitProfile(const std::string& path) {
  Result<CsvTable> table = ReadCsvFile(path);
  if (!table.ok()) return table.status();
  Result<int> name_col = table->RequireColumn("window_name");
  if (!name_col.ok()) return name_col.status();
  Result<int> time_col = table->RequireColumn("elapsed_time");
  if (!time_col.ok()) return time_col.status();
  std::vector<int> energy_cols;
  for (int i = 0; i < static_cast<int>(table->header.size()); ++i) {
    const std::string& h = table->header[i];
    if (h.size() > 10 && h.rfind("gpu", 0) == 0 && h.substr(h.size() - 7) == "_energy") energy_cols.push_back(i);
  }
  if (energy_cols.empty()) return Status::InvalidArgument(table->source + ": no gpu<i>_energy column");
  PowerLimitProfile profile;
  profile.source = table->source;
  profile.num_gpus = static_cast<int>(energy_cols.size());
  std::map<int, int> first_line;  // power limit -> line
  for (const CsvRow& row : table->rows) {
    const std::string& name = row.fields[*name_col];
    const std::string prefix = kPrefix;
    const std::string digits = name.size() > prefix.size() ? name.substr(prefix.size()) : "";
    if (name.rfind(prefix, 0) != 0 || digits.empty() || digits.find_first_not_of("0123456789") != std::string::npos) {
      return Status::InvalidArgument(table->Where(row, "window_name") + "expected '" + prefix + "<watts>', got '" + name + "'");
    }
    // No GPU's power limit is 0 W or above 10 kW; the digits' length is
    // checked first so that converting them cannot overflow.
    const int watts = digits.size() <= 5 ? std::stoi(digits) : 0;
    if (watts < 1 || watts > kMaxPowerLimitW) {
      return Status::InvalidArgument(table->Where(row, "window_name") + "power limit " + digits +
                                     " W: expected 1 to " + std::to_string(kMaxPowerLimitW) + " W");
    }
    if (auto [it, fresh] = first_line.emplace(watts, row.line); !fresh) {
      return Status::InvalidArgument(table->Where(row, "window_name") + "power limit " + std::to_string(watts) +
                                     " W also on line " + std::to_string(it->second));
    }
    PowerLimitPoint p;
    p.power_limit_w = watts;
    Result<double> t = table->Number(row, *time_col);
    if (!t.ok()) return t.status();
    if (*t <= 0) return Status::InvalidArgument(table->Where(row, "elapsed_time") + "must be > 0");
    p.time_s = *t;
    for (int c : energy_cols) {
      Result<double> e = table->Number(row, c);
      if (!e.ok()) return e.status();
      if (*e <= 0) return Status::InvalidArgument(table->Where(row, table->header[c]) + "must be > 0");
      p.energy_j += *e;
    }
    profile.points.push_back(p);
  }
  if (profile.points.empty()) return Status::InvalidArgument(table->source + ": no data rows");
  std::sort(profile.points.begin(), profile.points.end(),
            [](const PowerLimitPoint& a, const PowerLimitPoint& b) { return a.power_limit_w > b.power_limit_w; });
  return profile;
}

KnobSet PowerLimitKnobs(const PowerLimitProfile& profile) {
  KnobSet set;
  set.name = "power limit";
  std::vector<KnobOption> all;
  for (const PowerLimitPoint& p : profile.points) {
    all.push_back({std::to_string(p.power_limit_w) + " W", p.time_s, p.energy_j});
  }
  set.reference = all.front();
  set.pareto = ParetoFront(all);
  set.options = LowerConvexHull(std::move(all));
  return set;
}

}  // namespace perseus::carbon
