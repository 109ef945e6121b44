// RunPipeline and CombineRuns against EvaluatePlan and against a naive
// simulation that moves every GPU of every pipeline separately.
#include "emulator/pipeline_run.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <random>

#include "emulator/job_evaluation.h"
#include "emulator/test_job.h"

namespace perseus::emulator {
namespace {

PlanChoice RandomPlan(const Problem& p, std::mt19937& rng) {
  PlanChoice c(p.nodes.size());
  for (size_t i = 0; i < c.size(); ++i) c[i] = static_cast<int>(rng() % p.nodes[i].options.size());
  return c;
}

TEST(RunPipeline, NominalMatchesEvaluatePlan) {
  Problem p = SmallProblem(4, 6, 2);
  std::mt19937 rng(7);
  for (int trial = 0; trial < 20; ++trial) {
    PlanChoice c = RandomPlan(p, rng);
    PipelineRun run = RunPipeline(p, c, PipelineConditions{});
    PlanCost cost = EvaluatePlan(p, c);
    EXPECT_NEAR(run.time_s, cost.time_s, 1e-12);
    EXPECT_NEAR(PipelineEnergyJ(run, run.time_s, BlockingPowerPerGpuW(p)), cost.energy_j, 1e-9 * cost.energy_j);
    std::vector<double> start = EarliestStarts(p, c);
    for (size_t i = 0; i < start.size(); ++i) EXPECT_NEAR(run.start_s[i], start[i], 1e-12);
  }
}

TEST(RunPipeline, SlowdownStretchesTimeAndEnergy) {
  Problem p = SmallProblem(3, 4, 1);
  PlanChoice c = AllMaxPlan(p);
  PipelineRun base = RunPipeline(p, c, PipelineConditions{});
  PipelineRun slow = RunPipeline(p, c, PipelineConditions{1.25, {}});
  EXPECT_NEAR(slow.time_s, 1.25 * base.time_s, 1e-12);
  const double w = BlockingPowerPerGpuW(p);
  EXPECT_NEAR(PipelineEnergyJ(slow, slow.time_s, w), 1.25 * PipelineEnergyJ(base, base.time_s, w), 1e-9);
}

TEST(RunPipeline, CappedGpuRunsSlowerAndItsGroupWaits) {
  Problem p = SmallProblem(2, 2, 4);
  PlanChoice c = AllMaxPlan(p);
  PipelineRun run = RunPipeline(p, c, PipelineConditions{1, {{1, 2, 1110}}});
  PipelineRun base = RunPipeline(p, c, PipelineConditions{});
  EXPECT_GT(run.time_s, base.time_s);
  const int capped = 1 * 4 + 2, peer = 1 * 4 + 0;
  EXPECT_GT(run.busy_time_s[capped], run.busy_time_s[peer]);
  EXPECT_DOUBLE_EQ(run.busy_time_s[peer], base.busy_time_s[peer]);
  EXPECT_DOUBLE_EQ(run.busy_energy_j[peer], base.busy_energy_j[peer]);
  for (int i = 0; i < p.num_nodes(); ++i) {
    if (p.nodes[i].stage == 1) {
      EXPECT_EQ(run.freq_mhz[i], 1110);
    }
  }
}

// Every GPU of every pipeline moved separately, in the order each stage runs
// its computations, each tensor-parallel group starting when all its members
// and the computation's inputs are ready.
struct NaiveJob {
  double time_s = 0;
  std::vector<double> gpu_energy_j;  // (pipeline * S + stage) * G + gpu
};

NaiveJob NaiveSimulation(const Problem& p, const std::vector<PlanChoice>& plans,
                         const std::vector<PipelineConditions>& conditions) {
  const int S = p.num_stages(), G = p.gpus_per_stage, D = static_cast<int>(plans.size());
  std::vector<double> ready(static_cast<size_t>(D) * S * G, 0.0), busy_s(ready.size(), 0.0), busy_j(ready.size(), 0.0);
  NaiveJob job;
  for (int d = 0; d < D; ++d) {
    std::map<int, double> done;  // node -> finish
    std::vector<size_t> next(S, 0);
    for (size_t left = p.nodes.size(); left > 0;) {
      for (int s = 0; s < S; ++s) {
        if (next[s] == p.gpu_order[s].size()) continue;
        int node = p.gpu_order[s][next[s]];
        double start = 0;
        bool inputs_ready = true;
        for (int u : p.nodes[node].preds) {
          if (!done.count(u))
            inputs_ready = false;
          else
            start = std::max(start, done[u]);
        }
        if (!inputs_ready) continue;
        double longest = 0;
        for (int g = 0; g < G; ++g) start = std::max(start, ready[(d * S + s) * G + g]);
        for (int g = 0; g < G; ++g) {
          int k = p.nodes[node].options.size(), opt = plans[d][node];
          for (const emulator::GpuCap& cap : conditions[d].caps) {
            if (cap.stage != s || cap.gpu != g) continue;
            for (int o = 0; o < k; ++o) {
              if (p.nodes[node].options[o].freq_mhz <= cap.max_freq_mhz) {
                opt = std::max(opt, o);
                break;
              }
            }
          }
          const FreqPoint& fp = p.nodes[node].options[opt];
          double t = fp.time_s * conditions[d].slowdown;
          busy_s[(d * S + s) * G + g] += t;
          busy_j[(d * S + s) * G + g] += fp.energy_j / G * conditions[d].slowdown;
          longest = std::max(longest, t);
        }
        done[node] = start + longest;
        for (int g = 0; g < G; ++g) ready[(d * S + s) * G + g] = start + longest;
        job.time_s = std::max(job.time_s, start + longest);
        ++next[s];
        --left;
      }
    }
  }
  const double w = BlockingPowerPerGpuW(p);
  for (size_t k = 0; k < ready.size(); ++k) job.gpu_energy_j.push_back(busy_j[k] + w * (job.time_s - busy_s[k]));
  return job;
}

TEST(CombineRuns, MatchesNaivePerGpuSimulationWithStragglersAndCaps) {
  Problem p = SmallProblem(3, 5, 2);
  std::mt19937 rng(11);
  for (int trial = 0; trial < 10; ++trial) {
    // Three classes: nominal, slowed, slowed and capped; pipelines assigned at random.
    JobConditions jc;
    jc.classes = {PipelineConditions{}, PipelineConditions{1.0 + 0.1 * (trial % 4), {}},
                  PipelineConditions{1.1, {{static_cast<int>(rng() % 3), static_cast<int>(rng() % 2), 1110}}}};
    jc.pipeline_count = {0, 0, 0};
    const int D = 7;
    for (int d = 0; d < D; ++d) {
      int c = static_cast<int>(rng() % 3);
      jc.class_of.push_back(c);
      ++jc.pipeline_count[c];
    }
    std::vector<PlanChoice> class_plans{RandomPlan(p, rng), RandomPlan(p, rng), RandomPlan(p, rng)};
    std::vector<PipelineRun> runs;
    for (int c = 0; c < 3; ++c) runs.push_back(RunPipeline(p, class_plans[c], jc.classes[c]));
    JobOutcome fast = CombineRuns(p, jc, {&runs[0], &runs[1], &runs[2]});

    std::vector<PlanChoice> plans;
    std::vector<PipelineConditions> conds;
    for (int d = 0; d < D; ++d) {
      plans.push_back(class_plans[jc.class_of[d]]);
      conds.push_back(jc.classes[jc.class_of[d]]);
    }
    NaiveJob naive = NaiveSimulation(p, plans, conds);
    EXPECT_NEAR(fast.time_s, naive.time_s, 1e-9);
    double naive_total = 0;
    const int per_pipeline = p.num_stages() * p.gpus_per_stage;
    for (int d = 0; d < D; ++d) {
      for (int k = 0; k < per_pipeline; ++k) {
        double e = GpuEnergyJ(runs[jc.class_of[d]], k, fast.time_s, BlockingPowerPerGpuW(p));
        EXPECT_NEAR(e, naive.gpu_energy_j[d * per_pipeline + k], 1e-9) << "pipeline " << d << " gpu " << k;
        naive_total += naive.gpu_energy_j[d * per_pipeline + k];
      }
    }
    EXPECT_NEAR(fast.energy_j, naive_total, 1e-8);
  }
}

}  // namespace
}  // namespace perseus::emulator
