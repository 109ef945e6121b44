// Parsing --straggler and --throttle values ("key=value,key=value").
#include <cmath>
#include <cstdlib>
#include <map>
#include <set>

#include "common/strings.h"
#include "perseus/emulator.h"

namespace perseus {
namespace {

using Fields = std::map<std::string, std::string>;

Status Bad(const std::string& flag, const std::string& text, const std::string& what) {
  return Status::InvalidArgument(flag + " '" + text + "': " + what);
}

Result<Fields> SplitFields(const std::string& flag, const std::string& text, const std::set<std::string>& keys) {
  Fields fields;
  size_t pos = 0;
  while (pos <= text.size()) {
    size_t comma = text.find(',', pos);
    std::string item = text.substr(pos, comma == std::string::npos ? std::string::npos : comma - pos);
    size_t eq = item.find('=');
    if (eq == std::string::npos) return Bad(flag, text, "expected key=value, got '" + item + "'");
    std::string key = item.substr(0, eq);
    if (!keys.count(key)) {
      std::string known;
      for (const std::string& k : keys) known += (known.empty() ? "" : ", ") + k;
      return Bad(flag, text, "unknown key '" + key + "' (known: " + known + ")");
    }
    if (fields.count(key)) return Bad(flag, text, "key '" + key + "' given twice");
    fields[key] = item.substr(eq + 1);
    if (comma == std::string::npos) break;
    pos = comma + 1;
  }
  return fields;
}

Result<double> ParseDouble(const std::string& s) {
  std::optional<double> v = ParseDecimal(s);
  if (!v) return Status::InvalidArgument("");
  return *v;
}

Result<int> ParseInt(const std::string& s) {
  char* end = nullptr;
  long v = std::strtol(s.c_str(), &end, 10);
  if (s.empty() || end != s.c_str() + s.size() || v < 0 || v > 1'000'000'000) return Status::InvalidArgument("");
  return static_cast<int>(v);
}

// "A" (just A; open_end: from A on) or "A-B"; "A-" is an open range.
Status ParseRange(const std::string& s, bool open_end, int& first, int& last) {
  size_t dash = s.find('-');
  Result<int> a = ParseInt(s.substr(0, dash));
  if (!a.ok()) return Status::InvalidArgument("");
  first = *a;
  if (dash == std::string::npos) {
    last = open_end ? -1 : first;
    return Status::Ok();
  }
  std::string rest = s.substr(dash + 1);
  if (rest.empty()) {
    last = -1;
    return Status::Ok();
  }
  Result<int> b = ParseInt(rest);
  if (!b.ok()) return Status::InvalidArgument("");
  last = *b;
  return Status::Ok();
}

Status ParseIterations(const std::string& flag, const std::string& text, const Fields& f, int& start, int& end) {
  auto it = f.find("iterations");
  if (it == f.end()) return Status::Ok();
  if (!ParseRange(it->second, true, start, end).ok() || (end >= 0 && end <= start)) {
    return Bad(flag, text,
               "iterations: expected START-END with END > START (END excluded) or START-, got '" + it->second + "'");
  }
  return Status::Ok();
}

Result<double> ParseFactor(const std::string& flag, const std::string& text, const std::string& value) {
  Result<double> v = ParseDouble(value);
  if (!v.ok() || *v < 1 || *v > 100)
    return Bad(flag, text, "factor: expected a number in [1, 100], got '" + value + "'");
  return *v;
}

Result<int> RequireInt(const std::string& flag, const std::string& text, const Fields& f, const std::string& key,
                       int fallback) {
  auto it = f.find(key);
  if (it == f.end()) {
    if (fallback >= 0) return fallback;
    return Bad(flag, text, "missing key '" + key + "'");
  }
  Result<int> v = ParseInt(it->second);
  if (!v.ok()) return Bad(flag, text, key + ": expected a non-negative integer, got '" + it->second + "'");
  return *v;
}

}  // namespace

Result<SlowPipelineEvent> ParseStragglerFlag(const std::string& text) {
  const std::string flag = "--straggler";
  SlowPipelineEvent e;
  if (text.find('=') == std::string::npos) {
    Result<double> factor = ParseFactor(flag, text, text);
    if (!factor.ok()) return factor.status();
    e.factor = *factor;
    return e;
  }
  Result<Fields> f = SplitFields(flag, text, {"factor", "pipeline", "pipelines", "iterations"});
  if (!f.ok()) return f.status();
  if (!f->count("factor")) return Bad(flag, text, "missing key 'factor'");
  Result<double> factor = ParseFactor(flag, text, f->at("factor"));
  if (!factor.ok()) return factor.status();
  e.factor = *factor;
  if (f->count("pipeline") && f->count("pipelines")) return Bad(flag, text, "give either pipeline= or pipelines=");
  std::string key = f->count("pipeline") ? "pipeline" : "pipelines";
  if (f->count(key)) {
    const std::string& v = f->at(key);
    if (!ParseRange(v, false, e.first_pipeline, e.last_pipeline).ok() || e.last_pipeline < e.first_pipeline) {
      return Bad(flag, text, key + ": expected P or FIRST-LAST, got '" + v + "'");
    }
  }
  PERSEUS_RETURN_IF_ERROR(ParseIterations(flag, text, *f, e.start_iteration, e.end_iteration));
  return e;
}

Result<GpuCapEvent> ParseThrottleFlag(const std::string& text) {
  const std::string flag = "--throttle";
  Result<Fields> f = SplitFields(flag, text, {"pipeline", "stage", "gpu", "freq", "iterations"});
  if (!f.ok()) return f.status();
  GpuCapEvent e;
  Result<int> pipeline = RequireInt(flag, text, *f, "pipeline", 0);
  if (!pipeline.ok()) return pipeline.status();
  Result<int> stage = RequireInt(flag, text, *f, "stage", -1);
  if (!stage.ok()) return stage.status();
  Result<int> gpu = RequireInt(flag, text, *f, "gpu", 0);
  if (!gpu.ok()) return gpu.status();
  Result<int> freq = RequireInt(flag, text, *f, "freq", -1);
  if (!freq.ok()) return freq.status();
  if (*freq <= 0) return Bad(flag, text, "freq: expected a positive clock in MHz");
  e.pipeline = *pipeline;
  e.stage = *stage;
  e.gpu = *gpu;
  e.max_freq_mhz = *freq;
  PERSEUS_RETURN_IF_ERROR(ParseIterations(flag, text, *f, e.start_iteration, e.end_iteration));
  return e;
}

}  // namespace perseus
