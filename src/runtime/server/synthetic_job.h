// A synthetic job for the server's tests and the runtime benchmarks: a
// deterministic stand-in for SolveFrontier, a synthetic GPU whose energy falls
// then rises as the clock drops, and a driver that walks a job through
// registration and profiling windows. No test framework needed.
#pragma once

#include <algorithm>
#include <cmath>
#include <string>

#include "perseus/optimizer.h"
#include "runtime/server/api_handlers.h"

namespace perseus::server::testing {

// Plans "all computations at the k-th highest option" for every k, Pareto-filtered.
inline Result<Frontier> UniformPlansSolver(const Problem& problem, const FrontierOptions&) {
  Frontier f;
  f.all_max.choice = AllMaxPlan(problem);
  PlanCost c = EvaluatePlan(problem, f.all_max.choice);
  f.all_max.time_s = c.time_s;
  f.all_max.energy_j = c.energy_j;
  size_t levels = 1000;
  for (const ProblemNode& n : problem.nodes) levels = std::min(levels, n.options.size());
  for (size_t k = 0; k < levels; ++k) {
    FrontierPlan p;
    p.choice.assign(problem.nodes.size(), static_cast<int>(k));
    PlanCost pc = EvaluatePlan(problem, p.choice);
    p.time_s = pc.time_s;
    p.energy_j = pc.energy_j;
    if (!f.plans.empty() && p.energy_j >= f.plans.back().energy_j) continue;
    f.plans.push_back(p);
  }
  return f;
}

inline const std::vector<int> kClocks = {1410, 1305, 1200, 1095, 990, 885, 780};

// Per-microbatch time and energy of a synthetic stage at `freq_mhz`: energy
// falls with the clock down to ~900 MHz and rises below it.
inline FreqPoint SyntheticPoint(int stage, bool forward, int freq_mhz) {
  double t_max = (forward ? 0.010 : 0.020) * (1 + 0.1 * stage);
  double ratio = 1410.0 / freq_mhz;
  double time_s = t_max * (0.8 * ratio + 0.2);
  double power_w = 80 + 220 * std::pow(freq_mhz / 1410.0, 3);
  return {freq_mhz, time_s, power_w * time_s};
}

inline Json JobBody(const std::string& id, int dp, int pp, int microbatches) {
  return {{"id", id}, {"dp", dp}, {"pp", pp}, {"tp", 1}, {"microbatches", microbatches},
          {"blocking_power_w", 60}, {"profiling", {{"iterations_per_clock", 1}}}};
}

inline Json RankBody(int rank, int dp_rank, int pp_rank, int tp_rank = 0) {
  return {{"rank", rank}, {"dp_rank", dp_rank}, {"pp_rank", pp_rank}, {"tp_rank", tp_rank},
          {"gpu_name", "Synthetic"}, {"gpu_uuid", "GPU-" + std::to_string(rank)}, {"sm_clocks_mhz", kClocks}};
}

// A noise-free window report of a synthetic stage: `microbatches` forwards
// at the window's forward clock and as many backwards at its backward clock,
// plus 5, 10 or 15 ms of waiting at 60 W per iteration (the wait varies with
// the window, as the neighbours' clocks make it vary in a real pipeline).
inline Json WindowBody(int stage, const Json& plan, int microbatches, int iterations = 1) {
  const Json& w = plan["window"];
  const int fwd_mhz = w["forward_clock_mhz"].get<int>(), bwd_mhz = w["backward_clock_mhz"].get<int>();
  FreqPoint f = SyntheticPoint(stage, true, fwd_mhz), b = SyntheticPoint(stage, false, bwd_mhz);
  const double n = microbatches * iterations;
  const double wait_s = 0.005 * (1 + w["id"].get<int>() % 3) * iterations;
  return {{"window", w["id"]},
          {"forward_clock_mhz", fwd_mhz},
          {"backward_clock_mhz", bwd_mhz},
          {"iterations", iterations},
          {"cycle_time_s", n * (f.time_s + b.time_s) + wait_s},
          {"energy_j", n * (f.energy_j + b.energy_j) + 60 * wait_s},
          {"forward", {{"count", n}, {"time_s", n * f.time_s}, {"time_sq_s2", n * f.time_s * f.time_s}}},
          {"backward", {{"count", n}, {"time_s", n * b.time_s}, {"time_sq_s2", n * b.time_s * b.time_s}}}};
}

// The rank's plan, parsed.
inline Json Plan(JobService& service, const std::string& job, int rank, int64_t version = -1) {
  Result<std::string> text = service.RankPlan(job, rank, version);
  return text.ok() ? Json::parse(*text) : Json{{"error", text.status().message()}};
}

// Registers every rank (rank = (dp_rank * pp + pp_rank) * tp + tp_rank) that
// is not registered yet and answers every profiling window until the job
// leaves the profiling phase.
inline void RegisterAndProfile(JobService& service, const std::string& job, int dp, int pp, int microbatches,
                               int tp = 1) {
  const int world = dp * pp * tp;
  for (int r = 0; r < world; ++r) (void)HandleRegisterRank(service, job, RankBody(r, r / (pp * tp), (r / tp) % pp, r % tp));
  for (int round = 0; round < 1000; ++round) {
    bool profiling = false;
    for (int r = 0; r < world; ++r) {
      Json plan = Plan(service, job, r);
      if (plan["kind"] != "profiling") continue;
      profiling = true;
      (void)HandleReportWindow(service, job, r, WindowBody((r / tp) % pp, plan, microbatches));
    }
    if (!profiling) return;
  }
}

}  // namespace perseus::server::testing
