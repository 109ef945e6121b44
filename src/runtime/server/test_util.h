// Helpers for the server's tests: a deterministic stand-in for SolveFrontier,
// a synthetic GPU whose energy falls then rises as the clock drops, and a
// driver that walks a job through registration and profiling.
#pragma once

#include <algorithm>
#include <cmath>
#include <string>
#include <unistd.h>

#include "perseus/optimizer.h"
#include "runtime/server/job_service.h"

namespace perseus::server::testing {

inline std::string TempDbPath(const std::string& name) {
  std::string path = ::testing::TempDir() + "/perseus_" + name + "_" + std::to_string(getpid()) + ".db";
  for (const char* suffix : {"", "-wal", "-shm"}) std::remove((path + suffix).c_str());
  return path;
}

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

inline Json RankBody(int rank, int dp_rank, int pp_rank) {
  return {{"rank", rank}, {"dp_rank", dp_rank}, {"pp_rank", pp_rank}, {"tp_rank", 0},
          {"gpu_name", "Synthetic"}, {"gpu_uuid", "GPU-" + std::to_string(rank)}, {"sm_clocks_mhz", kClocks}};
}

inline Json MeasurementBody(int stage, int freq_mhz, int microbatches) {
  FreqPoint f = SyntheticPoint(stage, true, freq_mhz), b = SyntheticPoint(stage, false, freq_mhz);
  return {{"sm_clock_mhz", freq_mhz}, {"iterations", 1},
          {"forward", {{"count", microbatches}, {"time_s", f.time_s * microbatches}, {"energy_j", f.energy_j * microbatches}}},
          {"backward", {{"count", microbatches}, {"time_s", b.time_s * microbatches}, {"energy_j", b.energy_j * microbatches}}},
          {"blocking", {{"time_s", 0.01}, {"energy_j", 0.6}}}};
}

// The rank's plan, parsed.
inline Json Plan(JobService& service, const std::string& job, int rank, int64_t version = -1) {
  Result<std::string> text = service.RankPlan(job, rank, version);
  return text.ok() ? Json::parse(*text) : Json{{"error", text.status().message()}};
}

// Registers every rank (rank = dp_rank * pp + pp_rank) and answers every
// profiling assignment until the job leaves the profiling phase.
inline void RegisterAndProfile(JobService& service, const std::string& job, int dp, int pp, int microbatches) {
  for (int d = 0; d < dp; ++d) {
    for (int s = 0; s < pp; ++s) (void)service.RegisterRank(job, RankBody(d * pp + s, d, s));
  }
  for (int round = 0; round < 100; ++round) {
    bool profiling = false;
    for (int r = 0; r < dp * pp; ++r) {
      Json plan = Plan(service, job, r);
      if (plan["kind"] != "profiling") continue;
      profiling = true;
      (void)service.ReportMeasurement(job, r, MeasurementBody(r % pp, plan["sm_clock_mhz"].get<int>(), microbatches));
    }
    if (!profiling) return;
  }
}

}  // namespace perseus::server::testing
