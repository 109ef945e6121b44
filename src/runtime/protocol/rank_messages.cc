// The rank messages' codecs.
#include "runtime/protocol/rank_messages.h"

#include <algorithm>
#include <map>
#include <utility>

namespace perseus::protocol {
namespace {

Json TotalsJson(const DurationTotals& t) {
  return {{"count", t.count}, {"time_s", t.time_s}, {"time_sq_s2", t.time_sq_s2}};
}

// Durations of one instruction: at most 1e6 computations of at most 1e4 s.
Status ParseDurations(const Json& body, const std::string& key, DurationTotals* out) {
  auto it = body.find(key);
  if (it == body.end()) return FieldError(key, "missing");
  if (!it->is_object()) return FieldError(key, "expected an object, got " + Quote(*it));
  Result<int64_t> count = GetInt(*it, "count", key + ".count", 1, 1'000'000);
  if (!count.ok()) return count.status();
  Result<double> time = GetNumber(*it, "time_s", key + ".time_s", 1e-7 * static_cast<double>(*count), 1e4 * *count);
  if (!time.ok()) return time.status();
  Result<double> sq = GetNumber(*it, "time_sq_s2", key + ".time_sq_s2", 0, 1e8 * *count);
  if (!sq.ok()) return sq.status();
  *out = {*count, *time, *sq};
  return Status::Ok();
}

Status ParseClocks(const Json& body, std::vector<int>* out) {
  auto clocks = body.find("sm_clocks_mhz");
  if (clocks == body.end()) return FieldError("sm_clocks_mhz", "missing");
  if (!clocks->is_array() || clocks->empty() || clocks->size() > kMaxRegisteredClocks) {
    return FieldError("sm_clocks_mhz", "expected a non-empty array of at most " + std::to_string(kMaxRegisteredClocks) +
                                           " clocks, got " + Quote(*clocks));
  }
  for (size_t i = 0; i < clocks->size(); ++i) {
    const Json& c = (*clocks)[i];
    if (!c.is_number_integer() || c.get<int64_t>() < 1 || c.get<int64_t>() > 100000) {
      return FieldError(FieldPath("sm_clocks_mhz", i), "expected a clock in [1, 100000] MHz, got " + Quote(c));
    }
    out->push_back(c.get<int>());
  }
  std::sort(out->rbegin(), out->rend());
  out->erase(std::unique(out->begin(), out->end()), out->end());
  return Status::Ok();
}

}  // namespace

bool SameRankAndGpu(const RankRegistration& a, const RankRegistration& b) {
  return a.rank == b.rank && a.dp_rank == b.dp_rank && a.pp_rank == b.pp_rank && a.tp_rank == b.tp_rank &&
         a.gpu_name == b.gpu_name && a.gpu_uuid == b.gpu_uuid && a.sm_clocks_mhz == b.sm_clocks_mhz;
}

Json RankRegistrationToJson(const RankRegistration& r) {
  Json j = {{"rank", r.rank},         {"dp_rank", r.dp_rank},   {"pp_rank", r.pp_rank},
            {"tp_rank", r.tp_rank},   {"gpu_name", r.gpu_name}, {"gpu_uuid", r.gpu_uuid},
            {"sm_clocks_mhz", r.sm_clocks_mhz}};
  if (!r.session.empty()) j["session"] = r.session;
  return j;
}

Result<RankRegistration> ParseRankRegistration(const Json& body) {
  if (!body.is_object()) return Status::InvalidArgument("expected a JSON object, got " + Quote(body));
  RankRegistration r;
  for (auto [key, slot] : {std::pair{"rank", &r.rank}, std::pair{"dp_rank", &r.dp_rank},
                           std::pair{"pp_rank", &r.pp_rank}, std::pair{"tp_rank", &r.tp_rank}}) {
    Result<int64_t> v = GetInt(body, key, key, 0, 1'000'000);
    if (!v.ok()) return v.status();
    *slot = static_cast<int>(*v);
  }
  Result<std::string> name = GetString(body, "gpu_name", "gpu_name", 256);
  if (!name.ok()) return name.status();
  Result<std::string> uuid = GetString(body, "gpu_uuid", "gpu_uuid", 256);
  if (!uuid.ok()) return uuid.status();
  r.gpu_name = *name;
  r.gpu_uuid = *uuid;
  if (body.contains("session")) {
    Result<std::string> session = GetString(body, "session", "session", kMaxSessionBytes);
    if (!session.ok()) return session.status();
    r.session = *session;
  }
  PERSEUS_RETURN_IF_ERROR(ParseClocks(body, &r.sm_clocks_mhz));
  return r;
}

Json WindowReportToJson(const WindowReport& r) {
  Json j = {{"window", r.window}, {"forward_clock_mhz", r.forward_clock_mhz},
            {"backward_clock_mhz", r.backward_clock_mhz}, {"iterations", r.iterations},
            {"cycle_time_s", r.cycle_time_s}, {"forward", TotalsJson(r.forward)},
            {"backward", TotalsJson(r.backward)}, {"late_clocks", r.late_clocks},
            {"durations", r.durations}};
  if (r.energy_j >= 0) j["energy_j"] = r.energy_j;
  if (r.achieved_clock_mhz > 0) j["achieved_clock_mhz"] = r.achieved_clock_mhz;
  if (r.mid_s >= 0) j["mid_s"] = r.mid_s;
  if (r.clock_switch_latency_s >= 0) j["clock_switch_latency_s"] = r.clock_switch_latency_s;
  return j;
}

// Bounds: a window of at most 1e4 iterations of at most 1e5 s; energy at
// most 5 kW times the span (no GPU board draws more); busy time within the span.
Result<WindowReport> ParseWindowReport(const Json& body) {
  WindowReport r;
  Result<int64_t> window = GetInt(body, "window", "window", 0, 1'000'000);
  if (!window.ok()) return window.status();
  r.window = static_cast<int>(*window);
  for (auto [key, slot] : {std::pair{"forward_clock_mhz", &r.forward_clock_mhz},
                           std::pair{"backward_clock_mhz", &r.backward_clock_mhz}}) {
    Result<int64_t> v = GetInt(body, key, key, 1, 100000);
    if (!v.ok()) return v.status();
    *slot = static_cast<int>(*v);
  }
  Result<int64_t> iterations = GetInt(body, "iterations", "iterations", 1, 10000);
  if (!iterations.ok()) return iterations.status();
  r.iterations = static_cast<int>(*iterations);
  Result<double> cycle = GetNumber(body, "cycle_time_s", "cycle_time_s", 1e-6, 1e5 * r.iterations);
  if (!cycle.ok()) return cycle.status();
  r.cycle_time_s = *cycle;
  Result<std::optional<double>> energy = GetOptionalNumber(body, "energy_j", "energy_j", 0, 5000 * r.cycle_time_s);
  if (!energy.ok()) return energy.status();
  r.energy_j = energy->value_or(-1);
  PERSEUS_RETURN_IF_ERROR(ParseDurations(body, "forward", &r.forward));
  PERSEUS_RETURN_IF_ERROR(ParseDurations(body, "backward", &r.backward));
  if (r.forward.time_s + r.backward.time_s > r.cycle_time_s * 1.01) {
    return FieldError("cycle_time_s", "the computations' durations (" + std::to_string(r.forward.time_s + r.backward.time_s) +
                                          " s) exceed the window's span (" + std::to_string(r.cycle_time_s) + " s)");
  }
  Result<std::optional<int64_t>> late = GetOptionalInt(body, "late_clocks", "late_clocks", 0, 1'000'000'000);
  if (!late.ok()) return late.status();
  r.late_clocks = late->value_or(0);
  Result<std::optional<int64_t>> achieved = GetOptionalInt(body, "achieved_clock_mhz", "achieved_clock_mhz", 1, 100000);
  if (!achieved.ok()) return achieved.status();
  r.achieved_clock_mhz = static_cast<int>(achieved->value_or(0));
  Result<std::optional<double>> mid = GetOptionalNumber(body, "mid_s", "mid_s", 0, 1e12);
  if (!mid.ok()) return mid.status();
  r.mid_s = mid->value_or(-1);
  Result<std::optional<double>> latency =
      GetOptionalNumber(body, "clock_switch_latency_s", "clock_switch_latency_s", 0, 60);
  if (!latency.ok()) return latency.status();
  r.clock_switch_latency_s = latency->value_or(-1);
  if (body.contains("durations")) {
    Result<std::string> d = GetString(body, "durations", "durations", 16);
    if (!d.ok()) return d.status();
    if (*d != "hooks" && *d != "framework") return FieldError("durations", "expected \"hooks\" or \"framework\", got " + Quote(*d));
    r.durations = *d;
  }
  return r;
}

Json IterationReportsToJson(const std::vector<IterationReport>& reports, const std::string& session) {
  Json list = Json::array();
  for (const IterationReport& r : reports) {
    Json item = {{"iteration", r.iteration}, {"compute_time_s", r.compute_time_s}, {"energy_j", r.energy_j},
                 {"plan_version", r.plan_version}};
    if (r.schedule_mismatches > 0) item["schedule_mismatches"] = r.schedule_mismatches;
    list.push_back(std::move(item));
  }
  Json body = {{"iterations", list}};
  if (!session.empty()) body["session"] = session;
  return body;
}

Result<IterationReports> ParseIterationReports(const Json& body, int rank) {
  auto it = body.find("iterations");
  if (it == body.end()) return FieldError("iterations", "missing");
  if (!it->is_array() || it->size() > kMaxIterationsPerReport) {
    return FieldError("iterations", "expected an array of at most " + std::to_string(kMaxIterationsPerReport) +
                                        " reports, got " + Quote(*it));
  }
  IterationReports parsed;
  if (body.contains("session")) {
    Result<std::string> session = GetString(body, "session", "session", kMaxSessionBytes);
    if (!session.ok()) return session.status();
    parsed.session = *session;
  }
  std::vector<IterationReport>& out = parsed.reports;
  std::map<int64_t, size_t> seen;  // iteration -> its index: one report per iteration
  for (size_t i = 0; i < it->size(); ++i) {
    const Json& r = (*it)[i];
    const std::string path = "iterations[" + std::to_string(i) + "]";
    if (!r.is_object()) return FieldError(path, "expected an object, got " + Quote(r));
    IterationReport rep;
    rep.rank = rank;
    Result<int64_t> n = GetInt(r, "iteration", path + ".iteration", 0, kMaxIteration);
    if (!n.ok()) return n.status();
    if (auto [first, fresh] = seen.emplace(*n, i); !fresh) {
      return FieldError(path + ".iteration", "iteration " + std::to_string(*n) + " is reported twice (also at iterations[" +
                                                 std::to_string(first->second) + "])");
    }
    Result<double> t = GetNumber(r, "compute_time_s", path + ".compute_time_s", 1e-9, 1e6);
    if (!t.ok()) return t.status();
    Result<std::optional<double>> e = GetOptionalNumber(r, "energy_j", path + ".energy_j", 0, 1e10);
    if (!e.ok()) return e.status();
    Result<int64_t> v = GetInt(r, "plan_version", path + ".plan_version", 0, INT64_MAX / 2);
    if (!v.ok()) return v.status();
    Result<std::optional<int64_t>> mism =
        GetOptionalInt(r, "schedule_mismatches", path + ".schedule_mismatches", 0, 1'000'000'000);
    if (!mism.ok()) return mism.status();
    rep.schedule_mismatches = mism->value_or(0);
    rep.iteration = *n;
    rep.compute_time_s = *t;
    rep.energy_j = e->value_or(0);
    rep.plan_version = *v;
    out.push_back(rep);
  }
  return parsed;
}

}  // namespace perseus::protocol
