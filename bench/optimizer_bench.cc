// Optimizer benchmark: prints the figures the optimizer issue asks for.
//  1. Full-frontier run time (one thread, and every CPU) and peak memory on the shared GPT-3 175B A100
//     profile (or the bundled gpt3-175b-a100 model when ../shared is absent)
//     for 4x8, 8x16, 8x32, 8x96 and (with --large) 16x256 stages x microbatches,
//     and the size and write time of plans.json (all plans; at most 100),
//     and the fitted exponent of run time in the number of computations.
//  2. The default lower-bound check (the dual-flow certificate) against one
//     min-cost-flow solve with LEMON's NetworkSimplex: time and agreement.
//  3. The sweep with its dynamic min cut against LEMON's Preflow from
//     scratch (why the min cut is hand-written), and the sweep with every
//     step's cut network built afresh against reusing it where exact.
//  4. The discrete plans with the filling's moves sorted by std::sort alone
//     against by insertion from the last order (why that sort is hand-written).
//  5. (with --huge) interleaved 1F1B with 2 chunks on 32 stages (the 8-stage
//     profile's stages repeated) at 128 microbatches (--huge-microbatches N:
//     N; 512 is the size), one thread, default
//     options: where issue 12's 32 x 512 x 2 target stands.
// Plan quality (gaps to the bound and to exact) is optimizer_quality_bench's.
// Usage: optimizer_bench [--large] [--huge] [--huge-microbatches N] [--shared DIR]
#include <sys/resource.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <ostream>
#include <streambuf>
#include <string>
#include <vector>

#include "common/in_order.h"
#include "optimizer/discretize.h"
#include "optimizer/frontier_sweep.h"
#include "optimizer/node_costs.h"
#include "perseus/frontier_io.h"
#include "perseus/gpu_model.h"
#include "perseus/optimizer.h"

namespace {

using perseus::Frontier;
using perseus::FrontierOptions;
using perseus::Problem;
using perseus::Profile;

double Now() { return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count(); }

double PeakRssMiB() {
  rusage r{};
  getrusage(RUSAGE_SELF, &r);
  return r.ru_maxrss / 1024.0;
}

// Counts the bytes written through it and discards them.
class CountingBuf : public std::streambuf {
 public:
  size_t bytes = 0;

 protected:
  std::streamsize xsputn(const char*, std::streamsize n) override {
    bytes += static_cast<size_t>(n);
    return n;
  }
  int overflow(int c) override {
    if (c != traits_type::eof()) ++bytes;
    return c;
  }
};

// plans.json's size in MB and the seconds WritePlansJson takes, for at most `max_plans` plans (0: all).
std::pair<double, double> PlansJsonSize(const Problem& problem, const Frontier& f, size_t max_plans) {
  double t0 = Now();
  const Frontier written = perseus::SubFrontier(f, perseus::ThinPlanIndices(f, max_plans, perseus::KeyPlanIndices(f)));
  CountingBuf buf;
  std::ostream out(&buf);
  perseus::WritePlansJson(problem, written, out, f.plans.size());
  return {buf.bytes / 1e6, Now() - t0};
}

// The 8-stage profile stretched or shrunk to `stages` stages.
Profile Restage(const Profile& p, int stages) {
  Profile out;
  for (int s = 0; s < stages; ++s) out.stages.push_back(p.stages[s * p.num_stages() / stages]);
  return out;
}

Problem Build(const Profile& p, int stages, int microbatches) {
  perseus::ProblemSpec spec;
  spec.schedule = {perseus::ScheduleKind::k1F1B, stages, microbatches, 1};
  spec.blocking_power_w = 83.64;
  return *perseus::BuildProblem(Restage(p, stages), spec);
}

// Least-squares slope of y on x.
double Slope(const std::vector<double>& x, const std::vector<double>& y) {
  double mx = 0, my = 0, sxy = 0, sxx = 0;
  for (size_t k = 0; k < x.size(); ++k) mx += x[k], my += y[k];
  mx /= x.size(), my /= y.size();
  for (size_t k = 0; k < x.size(); ++k) sxy += (x[k] - mx) * (y[k] - my), sxx += (x[k] - mx) * (x[k] - mx);
  return sxy / sxx;
}

void SpeedTable(const Profile& profile, bool large) {
  const int cpus = perseus::WorkerCount(0, 1 << 20);
  std::printf("\n== Frontier as `perseus optimize` makes it by default (plans at about %d times, unit time 1 ms, "
              "default lower-bound check: the dual-flow certificate), on one thread and on every CPU (%d); "
              "every_unit_s: one thread, a plan every unit time (--max-plans 0) ==\n", perseus::kDefaultMaxPlans, cpus);
  std::printf("%-8s %6s %7s %7s %9s %9s %9s %10s %12s %10s %9s %8s %9s %8s %12s\n", "shape", "nodes", "plans", "steps",
              "sweep_s", "plans_s", "total_s", "all_cpu_s", "no-slow sav", "peak_MiB", "json_MB", "write_s",
              "json100_MB", "check_s", "every_unit_s");
  std::vector<double> log_nodes, log_seconds, log_sweep_seconds, log_every_unit_seconds;
  std::vector<std::pair<int, int>> shapes = {{4, 8}, {8, 16}, {8, 32}, {8, 96}};
  if (large) shapes.push_back({16, 256});
  for (auto [s, m] : shapes) {
    Problem problem = Build(profile, s, m);
    FrontierOptions one_thread;
    one_thread.threads = 1;
    one_thread.max_plans = perseus::MakePlansFor(perseus::kDefaultMaxPlans);
    double t0 = Now();
    Frontier f = *perseus::SolveFrontier(problem, one_thread);
    double total = Now() - t0;
    const auto* ns = f.NoSlowdownPlan();
    const double peak_mib = PeakRssMiB();
    t0 = Now();
    FrontierOptions all_cpus;
    all_cpus.max_plans = one_thread.max_plans;
    (void)*perseus::SolveFrontier(problem, all_cpus);
    const double all_cpu = Now() - t0;
    FrontierOptions every_unit;
    every_unit.threads = 1;
    t0 = Now();
    (void)*perseus::SolveFrontier(problem, every_unit);
    const double every_unit_s = Now() - t0;
    auto [json_mb, write_s] = PlansJsonSize(problem, f, 0);
    const double json100_mb = PlansJsonSize(problem, f, 100).first;
    std::printf("%2dx%-5d %6d %7zu %7d %9.3f %9.3f %9.3f %10.3f %11.2f%% %10.1f %9.2f %8.3f %9.2f %7.3f %12.3f%s\n", s, m,
                problem.num_nodes(), f.plans.size(), f.stats.sweep_steps, f.stats.solve_s - f.stats.plans_s,
                f.stats.plans_s, total, all_cpu, 100 * (1 - ns->energy_j / f.all_max.energy_j), peak_mib, json_mb,
                write_s, json100_mb, f.stats.lower_bound_s, every_unit_s,
                f.stats.lower_bound_checked ? "" : " (not checked)");
    std::fflush(stdout);
    if (problem.num_nodes() >= 256) {
      log_nodes.push_back(std::log(problem.num_nodes()));
      log_seconds.push_back(std::log(total));
      log_sweep_seconds.push_back(std::log(f.stats.solve_s - f.stats.plans_s));
      log_every_unit_seconds.push_back(std::log(every_unit_s));
    }
  }
  // Least-squares slopes of log(seconds) on log(computations), 8 x 16 and up.
  if (log_nodes.size() >= 2) {
    std::printf("one thread, seconds grow as computations^%.2f (the sweep alone ^%.2f; a plan every unit time ^%.2f), "
                "fitted from 8x16 up\n", Slope(log_nodes, log_seconds), Slope(log_nodes, log_sweep_seconds),
                Slope(log_nodes, log_every_unit_seconds));
  }
  std::printf("targets: 8x96 < 1 s, 16x256 < 30 s, memory < 1 GiB; original (Python): 4x8 10 s, 8x16 130 s, 8x32 653 s\n");
  std::printf("issue 12's targets: 8x96 < 0.3 s, 16x256 < 3 s, 32x512x2 interleaved < 60 s and 2 GiB, growth sub-quadratic\n");
  std::printf("plans.json targets: 8x96 < 5 MB, 16x256 < 50 MB (schema v1: 88 MB and 1.08 GB)\n");
}

// The default check (the dual-flow certificate) against one min-cost-flow
// solve at the same time: seconds, and whether each confirmed the sweep.
void BoundChecks(const Profile& profile, bool large) {
  std::printf("\n== Lower-bound check: dual-flow certificate (default) vs LEMON NetworkSimplex (--lower-bound-samples 1) ==\n");
  std::vector<std::pair<int, int>> shapes = {{8, 32}, {8, 96}};
  if (large) shapes.push_back({16, 256});
  for (auto [s, m] : shapes) {
    Problem problem = Build(profile, s, m);
    FrontierOptions certificate, simplex;
    simplex.lower_bound_samples = 1;
    const Frontier a = *perseus::SolveFrontier(problem, certificate);
    const Frontier b = *perseus::SolveFrontier(problem, simplex);
    std::printf("%2dx%-4d certificate %.4f s (%s, relative difference %.1e); network simplex %.4f s (%s, %.1e)\n", s, m,
                a.stats.lower_bound_s, a.stats.lower_bound_checked ? "checked" : "NOT checked",
                a.stats.lower_bound_max_error, b.stats.lower_bound_s, b.stats.lower_bound_checked ? "checked" : "NOT checked",
                b.stats.lower_bound_max_error);
    std::fflush(stdout);
  }
}

void MinCutEngines(const Profile& profile) {
  std::printf("\n== Sweep min cut: dynamic search trees (hand-written) vs LEMON Preflow from scratch ==\n");
  for (auto [s, m] : std::vector<std::pair<int, int>>{{8, 12}, {8, 24}}) {
    Problem problem = Build(profile, s, m);
    auto costs = perseus::optimizer::BuildNodeCosts(problem);
    for (auto engine : {perseus::optimizer::MinCut::Engine::kDynamicTrees, perseus::optimizer::MinCut::Engine::kLemonPreflow}) {
      perseus::optimizer::FrontierSweep sweep(problem, costs, engine);
      double t0 = Now();
      while (sweep.Step()) {
      }
      std::printf("%dx%-3d %-20s steps %5d  %.3f s  final T %.6f s\n", s, m,
                  engine == perseus::optimizer::MinCut::Engine::kDynamicTrees ? "dynamic search trees" : "LEMON Preflow",
                  sweep.steps(), Now() - t0, sweep.time_s());
    }
  }
}

// The sweep alone, each step's cut network built afresh or reused where
// exact (the default): steps, steps that reused, seconds (best of three).
void NetworkReuse(const Profile& profile, bool large) {
  std::printf("\n== Sweep cut networks: built afresh every step vs reused where exact (default), one thread, best of 3 ==\n");
  std::vector<std::pair<int, int>> shapes = {{8, 24}, {8, 96}};
  if (large) shapes.push_back({16, 256});
  for (auto [s, m] : shapes) {
    Problem problem = Build(profile, s, m);
    auto costs = perseus::optimizer::BuildNodeCosts(problem);
    double seconds[2] = {1e300, 1e300}, final_t[2] = {0, 0};
    int steps[2] = {0, 0}, reused[2] = {0, 0};
    for (int run = 0; run < 6; ++run) {
      const int reuse = run % 2;
      perseus::optimizer::FrontierSweep sweep(problem, costs);
      sweep.set_reuse_networks(reuse == 1);
      const double t0 = Now();
      while (sweep.Step()) {
      }
      seconds[reuse] = std::min(seconds[reuse], Now() - t0);
      steps[reuse] = sweep.steps(), reused[reuse] = sweep.reused_networks(), final_t[reuse] = sweep.time_s();
    }
    std::printf("%2dx%-4d afresh: steps %6d  %.3f s | reused: steps %6d (%d on a reused network)  %.3f s  (%.2fx)  final T %.6f / %.6f s\n",
                s, m, steps[0], seconds[0], steps[1], reused[1], seconds[1], seconds[0] / seconds[1], final_t[0], final_t[1]);
    std::fflush(stdout);
  }
}

// The filling's moves sorted by binary insertion from the order of the last sort
// (the default, Discretizer::SortGivenMoves) or by std::sort alone: plans at
// the sweep's steps (their times and durations; every k-th, 1,000-2,000) up to
// where the CLI's recording stops, ascending, in slices of 64 from a fresh
// start as the CLI makes them, one thread, best of 3.
void FillingSort(const Profile& profile, bool large) {
  std::printf("\n== The filling's sort: std::sort vs insertion from the last order (default), plans on one thread, best of 3 ==\n");
  std::vector<std::pair<int, int>> shapes = {{8, 96}};
  if (large) shapes.push_back({16, 256});
  for (auto [s, m] : shapes) {
    Problem problem = Build(profile, s, m);
    auto costs = perseus::optimizer::BuildNodeCosts(problem);
    perseus::optimizer::FrontierSweep sweep(problem, costs);
    // (time, durations) at every step up to 3% past the relaxation's
    // least-energy time, where the CLI's recording stops (about 19.2 s of
    // 15.7-23.5 s at 8 x 96).
    std::vector<std::pair<double, std::vector<double>>> points;
    double least_j = 1e300, least_s = 0;
    while (sweep.Step()) {
      points.emplace_back(sweep.time_s(), sweep.durations_s());
      const double energy_j = sweep.relaxation_cost_j() + problem.pipeline_blocking_power_w() * sweep.time_s();
      if (energy_j < least_j) least_j = energy_j, least_s = sweep.time_s();
    }
    std::erase_if(points, [&](const auto& p) { return p.first > least_s * 1.03; });
    std::vector<std::pair<double, std::vector<double>>> deadlines;
    const size_t every = std::max<size_t>(1, points.size() / 1000);
    for (size_t k = points.size(); k-- > 0;) {
      if (k % every == 0) deadlines.push_back(std::move(points[k]));
    }
    double seconds[2] = {1e300, 1e300};
    long checksum[2] = {0, 0};
    for (int run = 0; run < 6; ++run) {
      const int adaptive = run % 2;
      perseus::optimizer::Discretizer discretizer(problem, costs);
      discretizer.set_adaptive_sort(adaptive == 1);
      long sum = 0;
      const double t0 = Now();
      for (size_t k = 0; k < deadlines.size(); ++k) {
        if (k % 64 == 0) discretizer.Forget();
        const perseus::PlanChoice plan = discretizer.Run(deadlines[k].second, deadlines[k].first, 1L << 14, true);
        for (size_t i = 0; i < plan.size(); ++i) sum += plan[i] * static_cast<long>(i % 7 + 1);
      }
      seconds[adaptive] = std::min(seconds[adaptive], Now() - t0);
      checksum[adaptive] = sum;
    }
    std::printf("%2dx%-4d %zu plans: std::sort %.3f s | insertion from the last order %.3f s (%.2fx)  plans %s\n", s, m,
                deadlines.size(), seconds[0], seconds[1], seconds[0] / seconds[1],
                checksum[0] == checksum[1] ? "the same" : "DIFFER");
    std::fflush(stdout);
  }
}

}  // namespace

// 32 stages x `microbatches` x 2 chunks, interleaved, on one thread with the
// CLI's defaults: seconds, sweep steps and peak memory.
void Huge(const Profile& profile, int microbatches) {
  Profile stages32;
  for (int s = 0; s < 32; ++s) stages32.stages.push_back(profile.stages[s % profile.num_stages()]);
  perseus::ProblemSpec spec;
  spec.schedule = {perseus::ScheduleKind::kInterleaved1F1B, 32, microbatches, 2};
  spec.blocking_power_w = 83.64;
  const Problem problem = *perseus::BuildProblem(stages32, spec);
  FrontierOptions options;
  options.threads = 1;
  options.max_plans = perseus::MakePlansFor(perseus::kDefaultMaxPlans);
  const double t0 = Now();
  const Frontier f = *perseus::SolveFrontier(problem, options);
  std::printf("\n== 32x%dx2 interleaved, one thread, defaults ==\n%d computations: %.1f s (sweep %.1f s, %d steps; "
              "plans %.1f s; certificate %.2f s), %zu plans, peak %.0f MiB\n", microbatches, problem.num_nodes(),
              Now() - t0, f.stats.solve_s - f.stats.plans_s, f.stats.sweep_steps, f.stats.plans_s,
              f.stats.lower_bound_s, f.plans.size(), PeakRssMiB());
}

int main(int argc, char** argv) {
  bool large = false, huge = false;
  int huge_microbatches = 128;
  std::string shared = PERSEUS_SHARED_DATA;
  for (int i = 1; i < argc; ++i) {
    if (!std::strcmp(argv[i], "--large")) large = true;
    else if (!std::strcmp(argv[i], "--huge")) huge = true;
    else if (!std::strcmp(argv[i], "--huge-microbatches") && i + 1 < argc) huge = true, huge_microbatches = std::atoi(argv[++i]);
    else if (!std::strcmp(argv[i], "--shared") && i + 1 < argc) shared = argv[++i];
  }
  std::string path = shared + "/sosp24/stage_profile/gpt3-175b+a100_sxm_bf16.csv";
  Profile profile;
  if (std::filesystem::exists(path)) {
    profile = *perseus::LoadProfileCsv(path, 8);
    std::printf("profile: %s\n", path.c_str());
  } else {
    profile = perseus::FindExample("gpt3-175b-a100")->profile;
    std::printf("profile: bundled gpt3-175b-a100 model (shared data not found at %s)\n", path.c_str());
  }
  SpeedTable(profile, large);
  BoundChecks(profile, large);
  MinCutEngines(profile);
  NetworkReuse(profile, large);
  FillingSort(profile, large);
  if (huge) Huge(profile, huge_microbatches);
  return 0;
}
