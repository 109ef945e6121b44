// The rank client's messages to the server, once: typed structs and their
// JSON codecs. The rank client writes them with these functions and the
// server reads them with these parsers (common/json_fields.h: every bad field
// is named), so the two sides cannot drift (docs/http_api.md).
// Thread safety: plain values and pure functions.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "common/json_fields.h"
#include "perseus/status.h"

namespace perseus::protocol {

// A rank's registration (POST /jobs/{id}/ranks): its place in the job and
// its GPU. The server stores it as the rank's row.
struct RankRegistration {
  int rank = 0, dp_rank = 0, pp_rank = 0, tp_rank = 0;
  std::string gpu_name, gpu_uuid;
  std::vector<int> sm_clocks_mhz;  // supported; parsed: descending, no repeats
  // The client process's own id (optional, at most 64 bytes): a registration
  // of a registered rank with another session is a restarted process, whose
  // iteration numbers start again at 0; the same session is a retry.
  std::string session;
  // Server-assigned, not in the message: what the server adds to this
  // rank's iteration numbers (after a restart, past every iteration seen).
  int64_t iteration_base = 0;
  bool operator==(const RankRegistration&) const = default;
};
inline constexpr size_t kMaxRegisteredClocks = 4096;
inline constexpr size_t kMaxSessionBytes = 64;
inline constexpr int64_t kMaxIteration = INT64_MAX / 2;  // an iteration report's number, before and after the base
// The same rank on the same GPU: everything but the session and the base.
bool SameRankAndGpu(const RankRegistration& a, const RankRegistration& b);
Json RankRegistrationToJson(const RankRegistration& r);
// Checks every field on its own (ranks >= 0, names at most 256 bytes, 1 to
// 4096 clocks in [1, 100000] MHz); the server checks the ranks against its job.
Result<RankRegistration> ParseRankRegistration(const Json& body);

// Durations of one instruction's computations in a window.
struct DurationTotals {
  int64_t count = 0;
  double time_s = 0, time_sq_s2 = 0;
  void Add(double seconds) {
    ++count;
    time_s += seconds;
    time_sq_s2 += seconds * seconds;
  }
};

// What one rank measured in one profiling window (POST .../windows).
struct WindowReport {
  int rank = 0;               // from the URL, not the body
  int window = 0;
  int forward_clock_mhz = 0, backward_clock_mhz = 0;
  int iterations = 0;
  double cycle_time_s = 0;    // whole iterations: step begin to the next step begin
  double energy_j = -1;       // over the same span; < 0: the counter did not step (unmeasured)
  DurationTotals forward, backward;
  int64_t late_clocks = 0;    // computations that began before their clock was applied
  int achieved_clock_mhz = 0; // 0: unknown
  double mid_s = -1;          // the span's midpoint on the rank's own clock (< 0: not reported)
  double clock_switch_latency_s = -1;  // the GPU's median time to put a locked clock in effect (< 0: not measured)
  std::string durations = "hooks";  // or "framework" (CUDA events)
};
// The report's JSON (the HTTP body and the server's stored row share it) and
// its parser, which checks every field against physical bounds and names it.
Json WindowReportToJson(const WindowReport& r);
Result<WindowReport> ParseWindowReport(const Json& body);

// One training iteration of one rank (POST .../iterations).
struct IterationReport {
  int rank = 0;               // from the URL, not the body
  int64_t iteration = 0;
  double compute_time_s = 0;  // the pipeline schedule, before gradient sync
  double energy_j = 0;        // the rank's GPU energy in that time (0: not measured)
  int64_t plan_version = 0;   // the plan the rank ran
  int64_t schedule_mismatches = 0;  // hooks that did not match the plan's next computation (not stored)
};
inline constexpr size_t kMaxIterationsPerReport = 1000;
// A request's reports, and the session of the process that sent them
// (optional: the server drops a report of a process the rank has since been
// restarted from).
struct IterationReports {
  std::vector<IterationReport> reports;
  std::string session;
};
// {"iterations": [...], "session": ...}; REQUIRES: reports.size() <= kMaxIterationsPerReport.
Json IterationReportsToJson(const std::vector<IterationReport>& reports, const std::string& session = "");
// Every report gets `rank`.
Result<IterationReports> ParseIterationReports(const Json& body, int rank);

}  // namespace perseus::protocol
