// GpuRealism presets, its text form, and the coarse energy counter.
#include "runtime/gpu/realism.h"

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <limits>

#include "common/strings.h"

namespace perseus::runtime {
namespace {

std::vector<std::string> SplitItems(const std::string& text) {
  std::vector<std::string> items;
  size_t start = 0;
  for (;;) {
    size_t comma = text.find(',', start);
    items.push_back(Trim(text.substr(start, comma == std::string::npos ? std::string::npos : comma - start)));
    if (comma == std::string::npos) return items;
    start = comma + 1;
  }
}

// Shortest text that reads back to `v` ("0.25", "300", "1e-05").
std::string FormatNumber(double v) {
  char buf[64];
  for (int precision = 6; precision <= 17; ++precision) {
    std::snprintf(buf, sizeof(buf), "%.*g", precision, v);
    if (std::strtod(buf, nullptr) == v) break;
  }
  return buf;
}

Status Invalid(const std::string& key, const std::string& expected, const std::string& got) {
  return Status::InvalidArgument("realism: " + key + ": expected " + expected + ", got " + got);
}

Result<double> ParseNumber(const std::string& key, const std::string& value) {
  std::optional<double> v = ParseDecimal(value);
  if (!v) return Invalid(key, "a number", "'" + value + "'");
  return *v;
}

// A number with lower bound `min` (inclusive unless `min_exclusive`) and upper
// bound `max` (inclusive).
Result<double> ParseBounded(const std::string& key, const std::string& value, double min, bool min_exclusive,
                            double max = std::numeric_limits<double>::infinity()) {
  Result<double> v = ParseNumber(key, value);
  if (!v.ok()) return v;
  bool low = min_exclusive ? *v <= min : *v < min;
  if (low || *v > max) {
    std::string expected = std::isinf(max) ? std::string(min_exclusive ? "> " : ">= ") + FormatNumber(min)
                                            : std::string("a number in ") + (min_exclusive ? "(" : "[") +
                                                  FormatNumber(min) + ", " + FormatNumber(max) + "]";
    return Invalid(key, expected, value);
  }
  return v;
}

Result<uint64_t> ParseUnsigned(const std::string& key, const std::string& value, uint64_t max) {
  bool digits = !value.empty() && value.find_first_not_of("0123456789") == std::string::npos;
  errno = 0;
  unsigned long long v = digits ? std::strtoull(value.c_str(), nullptr, 10) : 0;
  if (!digits || errno == ERANGE || v > max) {
    return Invalid(key, "an integer in [0, " + std::to_string(max) + "]", "'" + value + "'");
  }
  return static_cast<uint64_t>(v);
}

// Applies one key=value item to `r`.
Status ApplyItem(const std::string& key, const std::string& value, GpuRealism& r) {
  auto set = [&](double* field, double scale, Result<double> v) -> Status {
    if (!v.ok()) return v.status();
    *field = *v * scale;
    return Status::Ok();
  };
  constexpr double kInf = std::numeric_limits<double>::infinity();
  if (key == "noise") {
    Result<double> v = ParseBounded(key, value, 0, false);
    if (!v.ok()) return v.status();
    r = ScaleNoise(r, *v);
    return Status::Ok();
  }
  if (key == "period_ms") return set(&r.energy_period_s, 1e-3, ParseBounded(key, value, 0, false));
  if (key == "sample") return set(&r.energy_sample_fraction, 1, ParseBounded(key, value, 0, true, 1));
  if (key == "latency_ms") return set(&r.clock_latency_s, 1e-3, ParseBounded(key, value, 0, false));
  if (key == "jitter") return set(&r.time_jitter, 1, ParseBounded(key, value, 0, false, kInf));
  if (key == "drift") return set(&r.thermal_drift, 1, ParseBounded(key, value, 0, false));
  if (key == "tau_s") return set(&r.thermal_tau_s, 1, ParseBounded(key, value, 0, true));
  if (key == "outliers") return set(&r.outlier_probability, 1, ParseBounded(key, value, 0, false, 1));
  if (key == "outlier_factor") return set(&r.outlier_factor, 1, ParseBounded(key, value, 1, false));
  if (key == "variation") return set(&r.gpu_variation, 1, ParseBounded(key, value, 0, false));
  if (key == "cap_mhz") {
    Result<uint64_t> v = ParseUnsigned(key, value, 1000000);
    if (!v.ok()) return v.status();
    r.achieved_clock_cap_mhz = static_cast<int>(*v);
    return Status::Ok();
  }
  if (key == "seed") {
    Result<uint64_t> v = ParseUnsigned(key, value, std::numeric_limits<uint64_t>::max());
    if (!v.ok()) return v.status();
    r.seed = *v;
    return Status::Ok();
  }
  return Status::InvalidArgument("realism: unknown key '" + key +
                                 "' (expected noise, period_ms, sample, latency_ms, cap_mhz, jitter, drift, "
                                 "tau_s, outliers, outlier_factor, variation or seed)");
}

}  // namespace

GpuRealism IdealRealism() {
  GpuRealism r;
  r.energy_period_s = 0;
  r.energy_sample_fraction = 1;
  r.clock_latency_s = 0;
  r.achieved_clock_cap_mhz = 0;
  r.time_jitter = 0;
  r.thermal_drift = 0;
  r.outlier_probability = 0;
  r.gpu_variation = 0;
  return r;
}

GpuRealism DefaultRealism() { return GpuRealism{}; }

GpuRealism ScaleNoise(GpuRealism realism, double factor) {
  factor = std::max(0.0, factor);
  realism.time_jitter *= factor;
  realism.thermal_drift *= factor;
  realism.outlier_probability = std::min(1.0, realism.outlier_probability * factor);
  realism.gpu_variation *= factor;
  return realism;
}

Result<GpuRealism> ParseGpuRealism(const std::string& text) {
  std::vector<std::string> items = SplitItems(text);
  GpuRealism r = DefaultRealism();
  for (size_t i = 0; i < items.size(); ++i) {
    const std::string& item = items[i];
    if (item == "ideal" || item == "default") {
      if (i != 0) return Status::InvalidArgument("realism: '" + item + "' must be the first item");
      r = item == "ideal" ? IdealRealism() : DefaultRealism();
      continue;
    }
    size_t eq = item.find('=');
    if (eq == std::string::npos) {
      return Status::InvalidArgument("realism: expected 'ideal', 'default' or key=value, got '" + item + "'");
    }
    PERSEUS_RETURN_IF_ERROR(ApplyItem(Trim(item.substr(0, eq)), Trim(item.substr(eq + 1)), r));
  }
  return r;
}

std::string FormatGpuRealism(const GpuRealism& r) {
  return "ideal,period_ms=" + FormatNumber(r.energy_period_s * 1e3) +
         ",sample=" + FormatNumber(r.energy_sample_fraction) +
         ",latency_ms=" + FormatNumber(r.clock_latency_s * 1e3) +
         ",cap_mhz=" + std::to_string(r.achieved_clock_cap_mhz) + ",jitter=" + FormatNumber(r.time_jitter) +
         ",drift=" + FormatNumber(r.thermal_drift) + ",tau_s=" + FormatNumber(r.thermal_tau_s) +
         ",outliers=" + FormatNumber(r.outlier_probability) + ",outlier_factor=" + FormatNumber(r.outlier_factor) +
         ",variation=" + FormatNumber(r.gpu_variation) + ",seed=" + std::to_string(r.seed);
}

CoarseEnergyCounter::CoarseEnergyCounter(double period_s, double sample_fraction, double start_s)
    : CoarseEnergyCounter(period_s, sample_fraction, start_s, start_s + period_s) {}

CoarseEnergyCounter::CoarseEnergyCounter(double period_s, double sample_fraction, double start_s,
                                         double first_step_s)
    : period_s_(std::max(0.0, period_s)), sample_fraction_(std::clamp(sample_fraction, 1e-9, 1.0)) {
  state_.time_s = start_s;
  state_.period_start_s = start_s;
  state_.next_step_s = first_step_s > start_s ? first_step_s : start_s + period_s_;
}

CoarseEnergyCounter::CoarseEnergyCounter(double period_s, double sample_fraction, const State& state)
    : period_s_(std::max(0.0, period_s)), sample_fraction_(std::clamp(sample_fraction, 1e-9, 1.0)), state_(state) {}

void CoarseEnergyCounter::Advance(double end_s, double power_w) {
  State& s = state_;
  if (end_s <= s.time_s) return;
  if (period_s_ <= 0) {
    const double e = power_w * (end_s - s.time_s);
    s.true_energy_j += e;
    s.reported_energy_j += e;
    s.time_s = end_s;
    return;
  }
  while (s.time_s < end_s) {
    const double segment_end_s = std::min(end_s, s.next_step_s);
    const double window_start_s = std::max(s.next_step_s - sample_fraction_ * period_s_, s.period_start_s);
    s.true_energy_j += power_w * (segment_end_s - s.time_s);
    const double sampled_from_s = std::max(s.time_s, window_start_s);
    if (segment_end_s > sampled_from_s) s.sampled_energy_j += power_w * (segment_end_s - sampled_from_s);
    s.time_s = segment_end_s;
    if (s.time_s >= s.next_step_s) Step();
  }
}

void CoarseEnergyCounter::Step() {
  State& s = state_;
  const double window_s = s.next_step_s - std::max(s.next_step_s - sample_fraction_ * period_s_, s.period_start_s);
  const double length_s = s.next_step_s - s.period_start_s;
  if (window_s > 0) s.reported_energy_j += length_s * s.sampled_energy_j / window_s;
  history_.push_back(Update{s.next_step_s, s.reported_energy_j});
  while (history_.size() > history_limit_) history_.pop_front();
  s.period_start_s = s.next_step_s;
  s.next_step_s += period_s_;
  s.sampled_energy_j = 0;
}

std::vector<CoarseEnergyCounter::Update> CoarseEnergyCounter::UpdatesAfter(double after_s) const {
  auto first = std::upper_bound(history_.begin(), history_.end(), after_s,
                                [](double t, const Update& u) { return t < u.time_s; });
  return std::vector<Update>(first, history_.end());
}

}  // namespace perseus::runtime
