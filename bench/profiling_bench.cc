// Online profiling against ground truth: the full lifecycle of emulated ranks
// on the realistic simulated GPU (coarse energy counter, clock latency,
// jitter, thermal drift, outliers, GPU-to-GPU variation), with the Perseus
// paper's measured GPT-3 175B / A100 profile (8 stages) as what the GPUs
// really do. Prints the measured profile's error against that truth, the true
// savings and slowdown of the plan the server deploys next to the plan
// computed from the truth itself, and what profiling cost.
//
//   build/ci/bench/profiling_bench [--noise 1] [--realism default] [--microbatches 24] [--pace-ms 40] [--seed 1]
//                                  [--single-clock-windows 1|0]  (0: cross windows)
//
// Needs ../shared/data (prints "skipped" and exits 0 without it).
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "perseus/optimizer.h"
#include "perseus/problem.h"
#include "perseus/profile.h"
#include "runtime/gpu/realism.h"
#include "runtime/server/http_server.h"
#include "runtime/server/api_handlers.h"
#include "runtime/server/store.h"
#include "tests/e2e/runtime_emulation.h"

using namespace perseus;

namespace {

struct Args {
  double noise = 1;
  int microbatches = 24;
  int pace_ms = 40;
  uint64_t seed = 1;
  double timeout_s = 900;
  std::string realism = "default";
  bool single_clock_windows = true;  // the server's default
};

Args ParseArgs(int argc, char** argv) {
  Args a;
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string k = argv[i], v = argv[i + 1];
    if (k == "--noise") a.noise = std::atof(v.c_str());
    else if (k == "--microbatches") a.microbatches = std::atoi(v.c_str());
    else if (k == "--pace-ms") a.pace_ms = std::atoi(v.c_str());
    else if (k == "--seed") a.seed = std::strtoull(v.c_str(), nullptr, 10);
    else if (k == "--timeout-s") a.timeout_s = std::atof(v.c_str());
    else if (k == "--realism") a.realism = v;
    else if (k == "--single-clock-windows") a.single_clock_windows = v == "1" || v == "true";
    else {
      std::fprintf(stderr, "profiling_bench: unknown flag %s\n", k.c_str());
      std::exit(2);
    }
  }
  return a;
}

double Median(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

double Max(const std::vector<double>& v) { return v.empty() ? 0 : *std::max_element(v.begin(), v.end()); }

const FreqPoint* AtClock(const std::vector<FreqPoint>& points, int mhz) {
  for (const FreqPoint& p : points) {
    if (p.freq_mhz == mhz) return &p;
  }
  return nullptr;
}

// Relative errors of the measured profile against the truth, per entry.
struct ProfileErrors {
  std::vector<double> time, energy, total_energy;  // total: forward + backward (independent of the split)
  // Per instruction after moving one energy c per stage from backward to
  // forward (the least-squares c): the error window totals can observe at
  // all, since eF + c, eB - c predict every window and cost every plan alike.
  std::vector<double> aligned_energy;
};

// The c (J) that best aligns eF + c and eB - c with the truth, in relative terms.
double GaugeOffsetJ(const std::vector<std::pair<const FreqPoint*, const FreqPoint*>>& forward,
                    const std::vector<std::pair<const FreqPoint*, const FreqPoint*>>& backward) {
  double num = 0, den = 0;  // minimise sum ((m + c - t) / t)^2 over forward and ((m - c - t) / t)^2 over backward
  for (auto [m, t] : forward) {
    num -= (m->energy_j - t->energy_j) / (t->energy_j * t->energy_j);
    den += 1 / (t->energy_j * t->energy_j);
  }
  for (auto [m, t] : backward) {
    num += (m->energy_j - t->energy_j) / (t->energy_j * t->energy_j);
    den += 1 / (t->energy_j * t->energy_j);
  }
  return den > 0 ? num / den : 0;
}

// The truth of each GPU as profiling ended: the nominal profile's energy
// times the GPU's own power factor and its thermal drift by then (what an
// ideal profiler of that GPU would report; time is unaffected).
Profile GpuTruth(const Profile& nominal, e2e::Cluster& cluster, const runtime::GpuRealism& realism, double warm_s) {
  Profile out = nominal;
  const double warm = realism.thermal_tau_s > 0 ? 1 - std::exp(-warm_s / realism.thermal_tau_s) : 1;
  for (size_t s = 0; s < out.stages.size(); ++s) {
    const double factor = cluster.gpu(static_cast<int>(s)).power_factor() * (1 + realism.thermal_drift * warm);
    for (Instruction ins : {Instruction::kForward, Instruction::kBackward}) {
      for (FreqPoint& p : out.stages[s].at(ins)) p.energy_j *= factor;
    }
  }
  return out;
}

ProfileErrors Compare(const Profile& measured, const Profile& truth) {
  ProfileErrors e;
  for (size_t s = 0; s < measured.stages.size(); ++s) {
    const auto& mf = measured.stages[s].at(Instruction::kForward);
    const auto& mb = measured.stages[s].at(Instruction::kBackward);
    std::vector<std::pair<const FreqPoint*, const FreqPoint*>> forward, backward;  // (measured, truth)
    for (size_t i = 0; i < mf.size(); ++i) {
      const FreqPoint* tf = AtClock(truth.stages[s].at(Instruction::kForward), mf[i].freq_mhz);
      const FreqPoint* tb = AtClock(truth.stages[s].at(Instruction::kBackward), mb[i].freq_mhz);
      if (tf == nullptr || tb == nullptr) continue;
      forward.emplace_back(&mf[i], tf);
      backward.emplace_back(&mb[i], tb);
      e.time.push_back(std::abs(mf[i].time_s / tf->time_s - 1));
      e.time.push_back(std::abs(mb[i].time_s / tb->time_s - 1));
      e.energy.push_back(std::abs(mf[i].energy_j / tf->energy_j - 1));
      e.energy.push_back(std::abs(mb[i].energy_j / tb->energy_j - 1));
      e.total_energy.push_back(std::abs((mf[i].energy_j + mb[i].energy_j) / (tf->energy_j + tb->energy_j) - 1));
    }
    const double c = GaugeOffsetJ(forward, backward);
    for (auto [m, t] : forward) e.aligned_energy.push_back(std::abs((m->energy_j + c) / t->energy_j - 1));
    for (auto [m, t] : backward) e.aligned_energy.push_back(std::abs((m->energy_j - c) / t->energy_j - 1));
  }
  return e;
}

// The plan's clocks replayed on the true profile.
PlanCost TrueCost(const Problem& truth, const Problem& measured, const PlanChoice& choice) {
  PlanChoice mapped(truth.nodes.size(), 0);
  for (size_t n = 0; n < truth.nodes.size(); ++n) {
    const int mhz = measured.nodes[n].options[choice[n]].freq_mhz;
    const auto& opts = truth.nodes[n].options;
    size_t best = 0;
    for (size_t k = 0; k < opts.size(); ++k) {
      if (std::abs(opts[k].freq_mhz - mhz) < std::abs(opts[best].freq_mhz - mhz)) best = k;
    }
    mapped[n] = static_cast<int>(best);
  }
  return EvaluatePlan(truth, mapped);
}

template <typename T>
T Must(Result<T> r, const char* what) {
  if (!r.ok()) {
    std::fprintf(stderr, "profiling_bench: %s: %s\n", what, r.status().ToString().c_str());
    std::exit(1);
  }
  return std::move(r).value();
}

}  // namespace

int main(int argc, char** argv) {
  const Args args = ParseArgs(argc, argv);
  const std::string path = std::string(PERSEUS_SHARED_DATA) + "/sosp24/stage_profile/gpt3-175b+a100_sxm_bf16.csv";
  if (!std::filesystem::exists(path)) {
    std::printf("profiling_bench: skipped: %s not found (needs ../shared/data)\n", path.c_str());
    return 0;
  }
  const Profile truth = Must(LoadProfileCsv(path, 8), "ground truth");
  const int pp = 8, mb = args.microbatches;

  auto store = Must(server::Store::Open(":memory:", false), "store");
  auto service = Must(server::JobService::Create(store.get(), nullptr), "service");
  perseus::Json job = {{"id", "gpt3"}, {"dp", 1}, {"pp", pp}, {"microbatches", mb},
                      {"profiling", {{"min_clock_mhz", 855}, {"single_clock_windows", args.single_clock_windows}}}};
  Must(HandleRegisterJob(*service, job), "register");
  server::ServerOptions so;
  so.port = 0;
  so.threads = 32;
  server::HttpServer http(service.get(), nullptr, so);
  const int port = Must(http.Bind(), "bind");
  std::thread serve([&] { http.Serve(); });

  e2e::ClusterShape shape;
  shape.dp = 1;
  shape.pp = pp;
  shape.microbatches = mb;
  shape.truth = truth;
  shape.realism = runtime::ScaleNoise(Must(runtime::ParseGpuRealism(args.realism), "--realism"), args.noise);
  shape.realism.seed = args.seed;
  e2e::ClusterOptions co;
  co.server_url = "http://127.0.0.1:" + std::to_string(port);
  co.job = "gpt3";
  co.poll_interval_ms = 10;
  co.pace_ms = args.pace_ms;
  e2e::Cluster cluster(shape, co);
  const auto wall_start = std::chrono::steady_clock::now();
  cluster.Start();
  int64_t profiling_iterations = -1;
  std::string phase;
  while (true) {
    phase = (*service->JobSummary("gpt3"))["phase"].get<std::string>();
    if (phase != "profiling" && phase != "registering" && profiling_iterations < 0) {
      profiling_iterations = cluster.iterations();
    }
    if (phase == "running" || phase == "failed") break;
    const double wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - wall_start).count();
    if (wall_s > args.timeout_s) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  cluster.Stop();
  const double wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - wall_start).count();
  perseus::Json summary = *service->JobSummary("gpt3");
  http.Stop();
  serve.join();
  if (phase != "running") {
    std::printf("profiling_bench: the job did not reach running in %.0f s: %s\n", wall_s, summary.dump().c_str());
    return 1;
  }

  // What profiling cost: its iterations' true time and energy against all-max.
  std::vector<e2e::IterationStats> history = cluster.History();
  double prof_time_s = 0, prof_energy_j = 0;
  for (int64_t i = 0; i < profiling_iterations && i < static_cast<int64_t>(history.size()); ++i) {
    prof_time_s += history[i].time_s;
    prof_energy_j += history[i].energy_j;
  }
  const Profile measured = Must(ParseProfileCsv(*service->ProfileCsv("gpt3"), "measured profile", pp), "profile");
  const double measured_blocking_w = summary["blocking_power_w"].get<double>();
  ProblemSpec truth_spec{{ScheduleKind::k1F1B, pp, mb, 1}, 83.64, 1};
  ProblemSpec measured_spec{{ScheduleKind::k1F1B, pp, mb, 1}, measured_blocking_w, 1};
  // What each GPU really does as profiling ended (its power factor, warm).
  const Profile gpu_truth = GpuTruth(truth, cluster, shape.realism, prof_time_s);
  const Problem truth_problem = Must(BuildProblem(gpu_truth, truth_spec), "truth problem");
  const Problem measured_problem = Must(BuildProblem(measured, measured_spec), "measured problem");
  const PlanCost all_max = EvaluatePlan(truth_problem, AllMaxPlan(truth_problem));
  const Frontier truth_frontier = Must(SolveFrontier(truth_problem, FrontierOptions{}), "truth frontier");
  const Frontier measured_frontier = Must(SolveFrontier(measured_problem, FrontierOptions{}), "measured frontier");
  const PlanCost ideal = TrueCost(truth_problem, truth_problem, truth_frontier.plans.front().choice);
  const PlanCost deployed = TrueCost(truth_problem, measured_problem, measured_frontier.plans.front().choice);

  const double n = static_cast<double>(std::max<int64_t>(profiling_iterations, 1));
  const ProfileErrors err = Compare(measured, gpu_truth);
  const ProfileErrors nominal_err = Compare(measured, truth);
  const perseus::Json& prof = summary["profiling"];

  std::printf("profiling_bench: GPT-3 175B / A100 ground truth, 8 stages x %d microbatches (1F1B), noise x%.0f, seed %llu\n",
              mb, args.noise, static_cast<unsigned long long>(args.seed));
  std::printf("  realistic GPU: counter step %.0f ms sampling %.0f%%, clock latency %.0f ms, jitter %.1f%%, drift %.1f%%, "
              "outliers %.2f%%, GPU variation %.1f%%\n",
              shape.realism.energy_period_s * 1e3, shape.realism.energy_sample_fraction * 100,
              shape.realism.clock_latency_s * 1e3, shape.realism.time_jitter * 100, shape.realism.thermal_drift * 100,
              shape.realism.outlier_probability * 100, shape.realism.gpu_variation * 100);
  std::printf("  profiling: %lld windows (%d repeat rounds), %lld iterations, %.1f min of job time (all-max iteration %.2f s)\n",
              static_cast<long long>(prof.is_object() ? prof["windows"].get<int>() : 0),
              prof.is_object() ? prof["rounds"].get<int>() : 0, static_cast<long long>(profiling_iterations),
              prof_time_s / 60, all_max.time_s);
  std::printf("  profiling cost vs all-max over the same iterations: time %+.2f%%, energy %+.2f%%\n",
              (prof_time_s / (n * all_max.time_s) - 1) * 100, (prof_energy_j / (n * all_max.energy_j) - 1) * 100);
  std::printf("  profile error vs each GPU's truth (%zu entries): time median %.3f%% worst %.3f%%; energy median %.3f%% worst %.3f%%; "
              "forward+backward energy median %.3f%% worst %.3f%%; per instruction at the best gauge offset median %.3f%% "
              "worst %.3f%%\n",
              err.time.size(), Median(err.time) * 100, Max(err.time) * 100, Median(err.energy) * 100,
              Max(err.energy) * 100, Median(err.total_energy) * 100, Max(err.total_energy) * 100,
              Median(err.aligned_energy) * 100, Max(err.aligned_energy) * 100);
  std::printf("  (against the nominal profile, without each GPU's variation and drift: energy median %.3f%%, "
              "forward+backward median %.3f%%)\n",
              Median(nominal_err.energy) * 100, Median(nominal_err.total_energy) * 100);
  std::printf("  blocking power: measured %.2f W, truth 83.64 W x each GPU's factor\n", measured_blocking_w);
  std::printf("  deployed plan (fastest of the measured frontier), true: savings %.2f%%, slowdown %+.3f%%\n",
              (1 - deployed.energy_j / all_max.energy_j) * 100, (deployed.time_s / all_max.time_s - 1) * 100);
  std::printf("  ground-truth plan (fastest of the true frontier):       savings %.2f%%, slowdown %+.3f%%\n"
              "  (savings and slowdown against all-max, all replayed on each GPU's truth)\n",
              (1 - ideal.energy_j / all_max.energy_j) * 100, (ideal.time_s / all_max.time_s - 1) * 100);
  std::printf("  warnings: %zu; emulation wall time %.0f s\n", summary["warnings"].size(), wall_s);
  for (const perseus::Json& w : summary["warnings"]) {
    std::printf("    [%s] %s\n", w["code"].get<std::string>().c_str(), w["message"].get<std::string>().c_str());
  }
  return 0;
}
