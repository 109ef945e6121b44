// One pipeline's training iteration replayed under a plan and its conditions:
// when every computation starts, how long its tensor-parallel group takes, and
// each GPU's busy time and busy energy. The iteration's energy of a GPU is
// its busy energy plus blocking power for the rest of the job's iteration
// (inside the pipeline and at the gradient synchronisation), so the same run
// serves any job iteration time. Pure functions; thread-safe.
#pragma once

#include <vector>

#include "emulator/conditions.h"
#include "perseus/problem.h"

namespace perseus::emulator {

struct PipelineRun {
  double time_s = 0;                                      // when the pipeline's last computation ends
  std::vector<double> busy_time_s;                        // per GPU, index stage * G + gpu
  std::vector<double> busy_energy_j;                      // per GPU
  double total_busy_time_s = 0, total_busy_energy_j = 0;  // sums over the pipeline's GPUs
  std::vector<double> start_s;                            // per node (Problem order)
  std::vector<double> duration_s;                         // per node, of the whole tensor-parallel group
  std::vector<int> freq_mhz;                              // per node, of the slowest GPU of the group
};

// With `clock_latency_s` > 0, every computation whose clock differs from the
// previous one's on its GPU runs as OptionWithClockLatency (perseus/problem.h)
// models; the extra is not stretched by a straggler's slowdown, and a capped
// GPU (a throttle) is not charged it.
// REQUIRES: choice has one valid option index per node; caps name existing
// stages and GPUs (see ValidateEvents).
PipelineRun RunPipeline(const Problem& problem, const PlanChoice& choice, const PipelineConditions& conditions,
                        double clock_latency_s = 0);

// Energy of GPU `k` of the run in a job iteration lasting `iteration_time_s`.
inline double GpuEnergyJ(const PipelineRun& run, int k, double iteration_time_s, double blocking_power_per_gpu_w) {
  return run.busy_energy_j[k] + blocking_power_per_gpu_w * (iteration_time_s - run.busy_time_s[k]);
}

// Energy of all the run's GPUs in a job iteration lasting `iteration_time_s`.
inline double PipelineEnergyJ(const PipelineRun& run, double iteration_time_s, double blocking_power_per_gpu_w) {
  const double gpus = static_cast<double>(run.busy_time_s.size());
  return run.total_busy_energy_j + blocking_power_per_gpu_w * (gpus * iteration_time_s - run.total_busy_time_s);
}

}  // namespace perseus::emulator
