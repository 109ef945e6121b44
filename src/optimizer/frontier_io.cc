// Serialising frontiers. plans.json can hold thousands of plans of thousands
// of computations, so it is streamed plan by plan, each plan as the clocks
// that changed from the one before (neighbouring plans differ in few).
#include "perseus/frontier_io.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>

#include "common/file_util.h"
#include "common/json_fields.h"

namespace perseus {
namespace {

using Json = nlohmann::json;
using Clocks = std::vector<std::vector<int>>;  // [stage][position] -> SM clock, MHz

constexpr const char* kSchemaV1 = "perseus.frontier/v1";
constexpr const char* kSchemaV2 = "perseus.frontier/v2";

std::string Num(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.17g", v);
  return buf;
}

std::string Fixed(double v, int digits) {
  char buf[48];
  std::snprintf(buf, sizeof buf, "%.*f", digits, v);
  return buf;
}

std::string Cost(const FrontierPlan& p) {
  std::string out = "\"time_s\": " + Num(p.time_s) + ", \"energy_j\": " + Num(p.energy_j);
  if (p.lower_bound_j > 0) out += ", \"lower_bound_j\": " + Num(p.lower_bound_j);
  return out;
}

Clocks ClocksOf(const Problem& problem, const PlanChoice& choice) {
  Clocks out(problem.num_stages());
  for (int s = 0; s < problem.num_stages(); ++s) {
    for (int id : problem.gpu_order[s]) out[s].push_back(problem.nodes[id].options[choice[id]].freq_mhz);
  }
  return out;
}

// [[["forward", 0], ...], ...]: each stage's computations in execution order.
std::string ComputationsJson(const Problem& problem) {
  const bool chunked = problem.schedule.spec.chunks > 1;
  std::string out = "[";
  for (int s = 0; s < problem.num_stages(); ++s) {
    out += s ? ",\n    [" : "\n    [";
    for (size_t k = 0; k < problem.gpu_order[s].size(); ++k) {
      const Computation& c = problem.nodes[problem.gpu_order[s][k]].comp;
      out += k ? ", [\"" : "[\"";
      out += std::string(InstructionName(c.instruction)) + "\", " + std::to_string(c.microbatch);
      if (chunked) out += ", " + std::to_string(c.chunk);
      out += "]";
    }
    out += "]";
  }
  return out + "\n  ]";
}

std::string FullClocksJson(const Clocks& clocks) {
  std::string out = "\"sm_clocks_mhz\": [";
  for (size_t s = 0; s < clocks.size(); ++s) {
    out += s ? ", [" : "[";
    for (size_t k = 0; k < clocks[s].size(); ++k) {
      if (k) out += ", ";
      out += std::to_string(clocks[s][k]);
    }
    out += "]";
  }
  return out + "]";
}

// The clocks of plan `after` that differ from plan `before`'s, as [stage,
// position, MHz]. Consecutive plans share most options, so the options are
// compared first and only a changed one's clock is looked up.
std::string ChangesJson(const Problem& problem, const PlanChoice& before, const PlanChoice& after) {
  std::string out = "\"changes\": [";
  bool first = true;
  for (int s = 0; s < problem.num_stages(); ++s) {
    const std::vector<int>& order = problem.gpu_order[s];
    for (size_t k = 0; k < order.size(); ++k) {
      const int id = order[k];
      if (after[id] == before[id]) continue;
      const std::vector<FreqPoint>& options = problem.nodes[id].options;
      const int mhz = options[after[id]].freq_mhz;
      if (mhz == options[before[id]].freq_mhz) continue;
      out += first ? "[" : ", [";
      out += std::to_string(s) + ", " + std::to_string(k) + ", " + std::to_string(mhz) + "]";
      first = false;
    }
  }
  return out + "]";
}

// Index of the unchosen plan whose time is nearest `time_s`.
size_t NearestUnchosen(const Frontier& f, const std::vector<bool>& chosen, double time_s) {
  auto it = std::lower_bound(f.plans.begin(), f.plans.end(), time_s,
                             [](const FrontierPlan& p, double t) { return p.time_s < t; });
  const size_t at = static_cast<size_t>(it - f.plans.begin());
  size_t best = f.plans.size();
  double best_gap = 0;
  // True when the scan in this direction can stop.
  auto consider = [&](size_t i) {
    const double gap = std::abs(f.plans[i].time_s - time_s);
    if (best < f.plans.size() && gap >= best_gap) return true;  // the rest are farther still
    if (chosen[i]) return false;
    best = i;
    best_gap = gap;
    return true;
  };
  for (size_t i = at; i < f.plans.size() && !consider(i); ++i) {
  }
  for (size_t i = at; i-- > 0 && !consider(i);) {
  }
  return best;
}

// Reading: the common JSON reader (common/json_fields.h); a located error
// aborts the parse.
struct ReadError {
  Status status;
};

template <typename T>
T Take(Result<T> value) {
  if (!value.ok()) throw ReadError{value.status()};
  return *value;
}

[[noreturn]] void Fail(const std::string& where, const std::string& what) { throw ReadError{FieldError(where, what)}; }

const Json& Field(const Json& obj, const char* key, const std::string& where) {
  return *Take(GetField(obj, key, FieldPath(where, key)));
}

std::string Sub(const std::string& where, const char* key) { return FieldPath(where, key); }
std::string Sub(const std::string& where, size_t i) { return FieldPath(where, i); }

const Json& Array(const Json& v, const std::string& where, size_t size = 0) {
  if (!v.is_array()) Fail(where, "expected an array, got " + Quote(v));
  if (size && v.size() != size) {
    Fail(where, "expected " + std::to_string(size) + " entries, got " + std::to_string(v.size()));
  }
  return v;
}

int Int(const Json& v, const std::string& where, int min) {
  return static_cast<int>(Take(ReadInt(v, where, min, 1'000'000'000)));
}

double Number(const Json& v, const std::string& where) { return Take(ReadNumber(v, where, -1e300, 1e300)); }

std::string String(const Json& v, const std::string& where) { return Take(ReadString(v, where, 1 << 20)); }

PlansFilePlan CostFromJson(const Json& j, const std::string& where) {
  PlansFilePlan p;
  p.time_s = Number(Field(j, "time_s", where), Sub(where, "time_s"));
  p.energy_j = Number(Field(j, "energy_j", where), Sub(where, "energy_j"));
  if (j.contains("lower_bound_j")) p.lower_bound_j = Number(j["lower_bound_j"], Sub(where, "lower_bound_j"));
  return p;
}

// [instruction, microbatch(, chunk)(, ...)] with `clock_at` the index of the
// clock (v1) or -1 (v2's computations).
PlannedComputation ComputationFromJson(const Json& v, const std::string& where, bool chunked, int clock_at) {
  const size_t size = 2 + (clock_at >= 0) + chunked;
  Array(v, where, size);
  Result<Instruction> ins = ParseInstruction(String(v[0], Sub(where, size_t{0})));
  if (!ins.ok()) Fail(Sub(where, size_t{0}), ins.status().message());
  PlannedComputation c{*ins, Int(v[1], Sub(where, 1), 0), 0, 0};
  if (clock_at >= 0) c.freq_mhz = Int(v[clock_at], Sub(where, static_cast<size_t>(clock_at)), 1);
  if (chunked) c.chunk = Int(v[size - 1], Sub(where, size - 1), 0);
  return c;
}

StagePlan StagesFromJson(const Json& v, const std::string& where, const PlansFile& file, int clock_at) {
  Array(v, where, static_cast<size_t>(file.stages));
  StagePlan out(file.stages);
  for (size_t s = 0; s < v.size(); ++s) {
    for (size_t k = 0; k < Array(v[s], Sub(where, s)).size(); ++k) {
      out[s].push_back(ComputationFromJson(v[s][k], Sub(Sub(where, s), k), file.chunks > 1, clock_at));
    }
  }
  return out;
}

void ApplyFullClocks(const Json& v, const std::string& where, StagePlan& stages) {
  Array(v, where, stages.size());
  for (size_t s = 0; s < stages.size(); ++s) {
    Array(v[s], Sub(where, s), stages[s].size());
    for (size_t k = 0; k < stages[s].size(); ++k) stages[s][k].freq_mhz = Int(v[s][k], Sub(Sub(where, s), k), 1);
  }
}

void ApplyChanges(const Json& v, const std::string& where, StagePlan& stages) {
  for (size_t i = 0; i < Array(v, where).size(); ++i) {
    const std::string at = Sub(where, i);
    Array(v[i], at, 3);
    const int s = Int(v[i][0], Sub(at, size_t{0}), 0);
    if (s >= static_cast<int>(stages.size())) {
      Fail(at, "stage " + std::to_string(s) + " out of range (" + std::to_string(stages.size()) + " stages)");
    }
    const int k = Int(v[i][1], Sub(at, 1), 0);
    if (k >= static_cast<int>(stages[s].size())) {
      Fail(at, "position " + std::to_string(k) + " out of range (stage " + std::to_string(s) + " has " +
                   std::to_string(stages[s].size()) + " computations)");
    }
    stages[s][k].freq_mhz = Int(v[i][2], Sub(at, 2), 1);
  }
}

void HeaderFromJson(const Json& j, PlansFile& f) {
  f.schema = String(Field(j, "schema", ""), "schema");
  if (f.schema != kSchemaV1 && f.schema != kSchemaV2) {
    Fail("schema", "expected '" + std::string(kSchemaV1) + "' or '" + kSchemaV2 + "', got '" + f.schema + "'");
  }
  f.schedule = String(Field(j, "schedule", ""), "schedule");
  f.stages = Int(Field(j, "stages", ""), "stages", 1);
  f.microbatches = Int(Field(j, "microbatches", ""), "microbatches", 1);
  if (j.contains("chunks")) f.chunks = Int(j["chunks"], "chunks", 1);
  f.gpus_per_stage = Int(Field(j, "gpus_per_stage", ""), "gpus_per_stage", 1);
  f.blocking_power_w = Number(Field(j, "blocking_power_w", ""), "blocking_power_w");
  f.all_max = CostFromJson(Field(j, "all_max", ""), "all_max");
}

void PlansFromJson(const Json& j, PlansFile& f) {
  const bool v1 = f.schema == kSchemaV1;
  const Json& plans = Array(Field(j, "plans", ""), "plans");
  StagePlan layout = v1 ? StagePlan() : StagesFromJson(Field(j, "computations", ""), "computations", f, -1);
  for (size_t i = 0; i < plans.size(); ++i) {
    const std::string where = Sub("plans", i);
    PlansFilePlan p = CostFromJson(plans[i], where);
    if (v1) {
      p.stages = StagesFromJson(Field(plans[i], "stages", where), Sub(where, "stages"), f, 2);
    } else if (plans[i].contains("sm_clocks_mhz") || i == 0) {
      p.stages = layout;
      ApplyFullClocks(Field(plans[i], "sm_clocks_mhz", where), Sub(where, "sm_clocks_mhz"), p.stages);
    } else {
      p.stages = f.plans.back().stages;
      ApplyChanges(Field(plans[i], "changes", where), Sub(where, "changes"), p.stages);
    }
    f.plans.push_back(std::move(p));
  }
  f.frontier_plans = f.plans.size();
  if (!v1 && j.contains("frontier_plans")) f.frontier_plans = Int(j["frontier_plans"], "frontier_plans", 0);
}

}  // namespace

StagePlan PlanByStage(const Problem& problem, const PlanChoice& choice) {
  StagePlan out(problem.num_stages());
  for (int s = 0; s < problem.num_stages(); ++s) {
    for (int id : problem.gpu_order[s]) {
      const ProblemNode& n = problem.nodes[id];
      out[s].push_back({n.comp.instruction, n.comp.microbatch, n.comp.chunk, n.options[choice[id]].freq_mhz});
    }
  }
  return out;
}

std::vector<size_t> KeyPlanIndices(const Frontier& frontier) {
  std::vector<size_t> out;
  if (frontier.plans.empty()) return out;
  out.push_back(0);
  if (const FrontierPlan* ns = frontier.NoSlowdownPlan()) out.push_back(static_cast<size_t>(ns - frontier.plans.data()));
  out.push_back(frontier.plans.size() - 1);
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

std::vector<size_t> ThinPlanIndices(const Frontier& frontier, size_t max_plans, const std::vector<size_t>& keep) {
  const size_t n = frontier.plans.size();
  const bool thin = max_plans > 0 && n > max_plans;
  std::vector<bool> chosen(n, !thin);
  for (size_t i : keep) chosen[i] = true;
  if (thin) {
    const size_t spread = max_plans - keep.size();
    const double t0 = frontier.plans.front().time_s, t1 = frontier.plans.back().time_s;
    for (size_t k = 1; k <= spread; ++k) {
      chosen[NearestUnchosen(frontier, chosen, t0 + (t1 - t0) * static_cast<double>(k) / (spread + 1))] = true;
    }
  }
  std::vector<size_t> out;
  for (size_t i = 0; i < n; ++i) {
    if (chosen[i]) out.push_back(i);
  }
  return out;
}

Frontier SubFrontier(const Frontier& frontier, const std::vector<size_t>& indices) {
  Frontier out{frontier.all_max, {}, frontier.stats};
  for (size_t i : indices) out.plans.push_back(frontier.plans[i]);
  return out;
}

void WritePlansJson(const Problem& problem, const Frontier& frontier, std::ostream& out, size_t frontier_plans) {
  const ScheduleSpec& spec = problem.schedule.spec;
  out << "{\n  \"schema\": \"" << kSchemaV2 << "\",\n";
  out << "  \"schedule\": \"" << ScheduleName(spec.kind) << "\",\n";
  out << "  \"stages\": " << spec.stages << ",\n";
  out << "  \"microbatches\": " << spec.microbatches << ",\n";
  if (spec.chunks > 1) out << "  \"chunks\": " << spec.chunks << ",\n";
  out << "  \"gpus_per_stage\": " << problem.gpus_per_stage << ",\n";
  out << "  \"blocking_power_w\": " << Num(problem.blocking_power_w / problem.gpus_per_stage) << ",\n";
  out << "  \"all_max\": {" << Cost(frontier.all_max) << "},\n";
  out << "  \"frontier_plans\": " << (frontier_plans ? frontier_plans : frontier.plans.size()) << ",\n";
  out << "  \"computations\": " << ComputationsJson(problem) << ",\n";
  out << "  \"plans\": [";
  for (size_t i = 0; i < frontier.plans.size(); ++i) {
    const PlanChoice& choice = frontier.plans[i].choice;
    out << (i ? ",\n    {" : "\n    {") << Cost(frontier.plans[i]) << ", "
        << (i ? ChangesJson(problem, frontier.plans[i - 1].choice, choice) : FullClocksJson(ClocksOf(problem, choice)))
        << "}";
  }
  out << "\n  ]\n}\n";
}

std::string FrontierToJson(const Problem& problem, const Frontier& frontier) {
  std::ostringstream out;
  WritePlansJson(problem, frontier, out);
  return out.str();
}

Result<PlansFile> ParsePlansJson(const std::string& text, const std::string& source) {
  Json j;
  try {
    j = Json::parse(text);
  } catch (const Json::parse_error& e) {
    return Status::InvalidArgument(source + ": not JSON: " + e.what());
  }
  PlansFile f;
  try {
    HeaderFromJson(j, f);
    PlansFromJson(j, f);
  } catch (const ReadError& e) {
    return e.status.WithContext(source);
  }
  return f;
}

Result<PlansFile> ReadPlansJson(const std::string& path) {
  Result<std::string> text = ReadFile(path);
  if (!text.ok()) return text.status();
  return ParsePlansJson(*text, path);
}

std::string FrontierToCsv(const Frontier& frontier) {
  std::string out = "time_s,energy_j,lower_bound_j,savings_vs_all_max\n";
  for (const FrontierPlan& p : frontier.plans) {
    out += Num(p.time_s) + "," + Num(p.energy_j) + "," + Num(p.lower_bound_j) + "," +
           Fixed(1 - p.energy_j / frontier.all_max.energy_j, 6) + "\n";
  }
  return out;
}

std::string PlanToZeusPython(const Problem& problem, const FrontierPlan& plan, int index) {
  std::string out = "[\n";
  for (const auto& stage : PlanByStage(problem, plan.choice)) {
    out += "[";
    for (size_t k = 0; k < stage.size(); ++k) {
      if (k) out += ", ";
      out += "('" + std::string(InstructionName(stage[k].instruction)) + "', " + std::to_string(stage[k].freq_mhz) + ")";
    }
    out += "],\n";
  }
  out += "]\n";
  out += "# Plan " + std::to_string(index) + " iteration time: " + Num(plan.time_s) + " s\n";
  out += "# Plan " + std::to_string(index) + " energy: " + Num(plan.energy_j) + " J\n";
  return out;
}

}  // namespace perseus
