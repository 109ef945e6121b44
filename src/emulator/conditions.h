// What is different about a pipeline in one iteration (a slowdown factor, GPU
// clock caps) and how the job's pipelines group into classes of identical
// conditions, so each class is simulated once however many pipelines it has.
// Plain values; thread-safe to copy.
#pragma once

#include <string>
#include <vector>

#include "perseus/emulator.h"

namespace perseus::emulator {

struct GpuCap {
  int stage = 0, gpu = 0, max_freq_mhz = 0;
  bool operator==(const GpuCap&) const = default;
};

struct PipelineConditions {
  double slowdown = 1;       // every computation's time and energy x this
  std::vector<GpuCap> caps;  // sorted by (stage, gpu)
  bool nominal() const { return slowdown == 1 && caps.empty(); }
  bool operator==(const PipelineConditions&) const = default;
  // A short stable text, e.g. "x1.2", "x1|cap 3.0@1100".
  std::string Key() const;
};

// The job's pipelines grouped by conditions. Class 0 is always the nominal
// class (possibly with no pipelines).
struct JobConditions {
  std::vector<PipelineConditions> classes;
  std::vector<int> pipeline_count;  // per class
  std::vector<int> class_of;        // per pipeline
  std::string Key() const;          // identifies the grouping and conditions
};

// The conditions of iteration `iteration` given the events (events that
// overlap on a pipeline multiply factors and keep the lowest cap).
JobConditions ConditionsAt(int pipelines, const std::vector<SlowPipelineEvent>& stragglers,
                           const std::vector<GpuCapEvent>& throttles, int iteration);

// Indices of the events active in `iteration`, as a cheap change detector.
std::vector<int> ActiveEvents(const std::vector<SlowPipelineEvent>& stragglers,
                              const std::vector<GpuCapEvent>& throttles, int iteration);

}  // namespace perseus::emulator
