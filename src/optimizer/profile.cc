// Reading and validating Zeus-format profiles.
#include "perseus/profile.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <set>
#include <sstream>

#include "common/csv_reader.h"
#include "common/file_util.h"
#include "common/strings.h"

namespace perseus {

namespace {

constexpr int kMaxProfileStages = 4096 * 64;  // stages x model chunks the schedules accept

struct Columns {
  int stage, instruction, frequency, time, energy;
};

Result<Columns> FindColumns(const CsvTable& t) {
  Columns c{};
  const char* names[] = {"stage", "instruction", "frequency", "time", "energy"};
  int* slots[] = {&c.stage, &c.instruction, &c.frequency, &c.time, &c.energy};
  for (int i = 0; i < 5; ++i) {
    Result<int> col = t.RequireColumn(names[i]);
    if (!col.ok()) return col.status();
    *slots[i] = *col;
  }
  return c;
}

Result<double> PositiveNumber(const CsvTable& t, const CsvRow& row, int col) {
  Result<double> v = t.Number(row, col);
  if (!v.ok()) return v;
  if (*v <= 0) {
    return Status::InvalidArgument(t.Where(row, t.header[col]) + "expected a positive number, got '" +
                                   row.fields[col] + "'");
  }
  return v;
}

Result<int> IntegerField(const CsvTable& t, const CsvRow& row, int col, bool positive) {
  Result<double> v = t.Number(row, col);
  if (!v.ok()) return v.status();
  if (*v != std::floor(*v) || *v < (positive ? 1 : 0) || *v > 1e9) {
    return Status::InvalidArgument(t.Where(row, t.header[col]) + "expected a " +
                                   (positive ? "positive" : "non-negative") + " integer, got '" +
                                   row.fields[col] + "'");
  }
  return static_cast<int>(*v);
}

struct Parsed {
  int stage;
  Instruction ins;
  FreqPoint point;
};

Result<Parsed> ParseRow(const CsvTable& t, const CsvRow& row, const Columns& c, int expected_stages) {
  Parsed p{};
  Result<int> stage = IntegerField(t, row, c.stage, false);
  if (!stage.ok()) return stage.status();
  if (expected_stages > 0 && *stage >= expected_stages) {
    return Status::InvalidArgument(t.Where(row, "stage") + "stage " + std::to_string(*stage) +
                                   " is out of range (the pipeline has " + std::to_string(expected_stages) +
                                   " stages, 0.." + std::to_string(expected_stages - 1) + ")");
  }
  if (*stage >= kMaxProfileStages) {
    return Status::InvalidArgument(t.Where(row, "stage") + "stage " + std::to_string(*stage) +
                                   " is out of range (at most " + std::to_string(kMaxProfileStages) + " stages)");
  }
  p.stage = *stage;
  const std::string ins = c.instruction < static_cast<int>(row.fields.size()) ? row.fields[c.instruction] : "";
  Result<Instruction> parsed = ParseInstruction(ins);
  if (!parsed.ok()) return Status::InvalidArgument(t.Where(row, "instruction") + parsed.status().message());
  p.ins = *parsed;
  Result<int> freq = IntegerField(t, row, c.frequency, true);
  if (!freq.ok()) return freq.status();
  Result<double> time = PositiveNumber(t, row, c.time);
  if (!time.ok()) return time.status();
  Result<double> energy = PositiveNumber(t, row, c.energy);
  if (!energy.ok()) return energy.status();
  p.point = FreqPoint{*freq, *time, *energy};
  return p;
}

// The whole backward from its two halves, at the clocks both list.
std::vector<FreqPoint> SumOfHalves(const StageProfile& sp) {
  std::map<int, FreqPoint> weight;
  for (const FreqPoint& p : sp.at(Instruction::kBackwardWeight)) weight[p.freq_mhz] = p;
  std::vector<FreqPoint> sum;
  for (const FreqPoint& p : sp.at(Instruction::kBackwardInput)) {
    auto it = weight.find(p.freq_mhz);
    if (it != weight.end()) sum.push_back({p.freq_mhz, p.time_s + it->second.time_s, p.energy_j + it->second.energy_j});
  }
  return sum;
}

// Every stage has forward rows, both backward halves or neither, and
// backward rows (derived from the halves when it lists only those).
Status CompleteStages(Profile& profile, const std::string& source) {
  for (int s = 0; s < profile.num_stages(); ++s) {
    StageProfile& sp = profile.stages[s];
    const std::string where = source + ": stage " + std::to_string(s) + ": ";
    if (sp.at(Instruction::kForward).empty()) return Status::InvalidArgument(where + "no 'forward' rows");
    const bool input = !sp.at(Instruction::kBackwardInput).empty();
    const bool weight = !sp.at(Instruction::kBackwardWeight).empty();
    if (input != weight) {
      return Status::InvalidArgument(where + "'" + (input ? "backward_input" : "backward_weight") +
                                     "' rows without '" + (input ? "backward_weight" : "backward_input") +
                                     "' rows (list both halves of the backward, or neither)");
    }
    if (!sp.at(Instruction::kBackward).empty()) continue;
    if (!input) return Status::InvalidArgument(where + "no 'backward' rows");
    sp.at(Instruction::kBackward) = SumOfHalves(sp);
    if (sp.at(Instruction::kBackward).empty()) {
      return Status::InvalidArgument(where + "no 'backward' rows, and its 'backward_input' and 'backward_weight' "
                                     "rows share no frequency to derive them from");
    }
  }
  return Status::Ok();
}

// A row's time against its stage's and instruction's highest clock: a lower
// clock cannot run the computation faster than the clock ratio allows (time
// x clock at most kSlackFactor times the top row's; compute-bound work keeps
// it constant, memory-bound work lowers it), nor take under 1/kSlackFactor of
// the top row's time. The shared A100 profiles stay within 0.4% of both;
// milliseconds written as seconds are 1,000 times off. One such row would
// otherwise look like a very slow, cheap option and stretch the whole frontier.
Status CheckPlausibleTimes(const Profile& profile, const std::map<std::tuple<int, int, int>, int>& line_of,
                           const std::string& source) {
  constexpr double kSlackFactor = 2;
  for (int s = 0; s < profile.num_stages(); ++s) {
    for (int i = 0; i < kNumInstructions; ++i) {
      const std::vector<FreqPoint>& pts = profile.stages[s].points[i];
      if (pts.size() < 2) continue;
      const FreqPoint& top = *std::max_element(
          pts.begin(), pts.end(), [](const FreqPoint& a, const FreqPoint& b) { return a.freq_mhz < b.freq_mhz; });
      for (const FreqPoint& p : pts) {
        const double scaled_s = top.time_s * top.freq_mhz / p.freq_mhz;
        if (p.time_s <= kSlackFactor * scaled_s && p.time_s >= top.time_s / kSlackFactor) continue;
        const auto line = [&](const FreqPoint& q) { return line_of.at({s, i, q.freq_mhz}); };
        return Status::InvalidArgument(
            source + ":" + std::to_string(line(p)) + ": column 'time': " + Format("%g", p.time_s) + " s at " +
            std::to_string(p.freq_mhz) + " MHz is implausible next to stage " + std::to_string(s) + " " +
            InstructionName(static_cast<Instruction>(i)) + "'s " + Format("%g", top.time_s) + " s at " +
            std::to_string(top.freq_mhz) + " MHz (line " + std::to_string(line(top)) + "): expected " +
            Format("%g", top.time_s / kSlackFactor) + " to " + Format("%g", kSlackFactor * scaled_s) +
            " s (seconds, not milliseconds?)");
      }
    }
  }
  return Status::Ok();
}

// A row's power, energy / time, against what one GPU can draw. The bounds
// are wide (the shared A100 profiles draw 221-482 W; the largest GPUs about
// 1,400 W): they catch units, not hardware. Millijoules read as joules are a
// thousand times too much; kilojoules, watt-hours or times in milliseconds a
// thousand times too little.
// Checked after the times, so a time in milliseconds is named as such.
constexpr double kMaxTensorParallelGroup = 64;  // a group's summed energy reads as up to this many GPUs

Status CheckPlausiblePowers(const Profile& profile, const std::map<std::tuple<int, int, int>, int>& line_of,
                            const std::string& source) {
  for (int s = 0; s < profile.num_stages(); ++s) {
    for (int i = 0; i < kNumInstructions; ++i) {
      for (const FreqPoint& p : profile.stages[s].points[i]) {
        const double power_w = p.energy_j / p.time_s;
        if (power_w >= kMinPlausibleGpuPowerW && power_w <= kMaxPlausibleGpuPowerW) continue;
        return Status::InvalidArgument(
            source + ":" + std::to_string(line_of.at({s, i, p.freq_mhz})) + ": column 'energy': " +
            Format("%g J in %g s at %d MHz is ", p.energy_j, p.time_s, p.freq_mhz) +
            Format("%.6g", power_w) +  // enough digits that a value just outside a bound does not print as it
            Format(" W on one GPU: expected %g to %g W", kMinPlausibleGpuPowerW, kMaxPlausibleGpuPowerW) +
            (power_w < kMinPlausibleGpuPowerW ? " (joules, not kilojoules or watt-hours? seconds, not milliseconds?)"
             : power_w <= kMaxTensorParallelGroup * kMaxPlausibleGpuPowerW
                 ? " (one GPU's energy, not its tensor-parallel group's? joules, not millijoules?)"
                 : " (joules, not millijoules?)"));
      }
    }
  }
  return Status::Ok();
}

}  // namespace

Result<Profile> ParseProfileCsv(const std::string& text, const std::string& source, int expected_stages,
                                ProfileOrigin origin) {
  Result<CsvTable> table = ParseCsv(text, source);
  if (!table.ok()) return table.status();
  Result<Columns> cols = FindColumns(*table);
  if (!cols.ok()) return cols.status();
  if (table->rows.empty()) return Status::InvalidArgument(source + ": no data rows");
  Profile profile;
  std::map<std::tuple<int, int, int>, int> seen;  // (stage, ins, freq) -> line
  for (const CsvRow& row : table->rows) {
    Result<Parsed> p = ParseRow(*table, row, *cols, expected_stages);
    if (!p.ok()) return p.status();
    auto key = std::make_tuple(p->stage, static_cast<int>(p->ins), p->point.freq_mhz);
    auto [it, inserted] = seen.emplace(key, row.line);
    if (!inserted) {
      return Status::InvalidArgument(source + ":" + std::to_string(row.line) + ": duplicate row for stage " +
                                     std::to_string(p->stage) + " " + InstructionName(p->ins) + " at " +
                                     std::to_string(p->point.freq_mhz) + " MHz (first at line " +
                                     std::to_string(it->second) + ")");
    }
    if (p->stage >= profile.num_stages()) profile.stages.resize(p->stage + 1);
    profile.stages[p->stage].at(p->ins).push_back(p->point);
  }
  if (expected_stages > profile.num_stages()) {
    return Status::InvalidArgument(source + ": its highest stage is " + std::to_string(profile.num_stages() - 1) +
                                   ", but the pipeline has " + std::to_string(expected_stages) + " stages (0.." +
                                   std::to_string(expected_stages - 1) + ")");
  }
  profile.source = source;
  if (origin == ProfileOrigin::kUserFile) {
    PERSEUS_RETURN_IF_ERROR(CheckPlausibleTimes(profile, seen, source));
    PERSEUS_RETURN_IF_ERROR(CheckPlausiblePowers(profile, seen, source));
  }
  PERSEUS_RETURN_IF_ERROR(CompleteStages(profile, source));
  for (StageProfile& sp : profile.stages) {
    for (auto& pts : sp.points) {
      std::sort(pts.begin(), pts.end(), [](const FreqPoint& a, const FreqPoint& b) { return a.freq_mhz > b.freq_mhz; });
    }
  }
  return profile;
}

Result<Profile> LoadProfileCsv(const std::string& path, int expected_stages) {
  Result<std::string> text = ReadFile(path);
  if (!text.ok()) return text.status();
  return ParseProfileCsv(*text, path, expected_stages);
}

std::string ProfileToCsv(const Profile& profile) {
  std::ostringstream out;
  out.precision(17);
  out << "stage,instruction,frequency,time,energy\n";
  for (int s = 0; s < profile.num_stages(); ++s) {
    for (int i = 0; i < kNumInstructions; ++i) {
      for (const FreqPoint& p : profile.stages[s].points[i]) {
        out << s << ',' << InstructionName(static_cast<Instruction>(i)) << ',' << p.freq_mhz << ',' << p.time_s
            << ',' << p.energy_j << '\n';
      }
    }
  }
  return out.str();
}

}  // namespace perseus
