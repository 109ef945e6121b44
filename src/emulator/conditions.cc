// Grouping pipelines by their conditions.
#include "emulator/conditions.h"

#include <algorithm>
#include <cstdio>
#include <map>

namespace perseus::emulator {
namespace {

bool Active(int start, int end, int iteration) { return iteration >= start && (end < 0 || iteration < end); }

void AddCap(PipelineConditions& c, const GpuCapEvent& e) {
  for (GpuCap& cap : c.caps) {
    if (cap.stage == e.stage && cap.gpu == e.gpu) {
      cap.max_freq_mhz = std::min(cap.max_freq_mhz, e.max_freq_mhz);
      return;
    }
  }
  c.caps.push_back({e.stage, e.gpu, e.max_freq_mhz});
  std::sort(c.caps.begin(), c.caps.end(),
            [](const GpuCap& a, const GpuCap& b) { return a.stage != b.stage ? a.stage < b.stage : a.gpu < b.gpu; });
}

}  // namespace

std::string PipelineConditions::Key() const {
  char buf[64];
  std::snprintf(buf, sizeof buf, "x%.17g", slowdown);
  std::string key = buf;
  for (const GpuCap& c : caps) {
    std::snprintf(buf, sizeof buf, "|cap %d.%d@%d", c.stage, c.gpu, c.max_freq_mhz);
    key += buf;
  }
  return key;
}

std::string JobConditions::Key() const {
  std::string key;
  for (size_t c = 0; c < classes.size(); ++c) key += classes[c].Key() + "#" + std::to_string(pipeline_count[c]) + ";";
  return key;
}

std::vector<int> ActiveEvents(const std::vector<SlowPipelineEvent>& stragglers,
                              const std::vector<GpuCapEvent>& throttles, int iteration) {
  std::vector<int> active;
  for (size_t i = 0; i < stragglers.size(); ++i) {
    if (Active(stragglers[i].start_iteration, stragglers[i].end_iteration, iteration))
      active.push_back(static_cast<int>(i));
  }
  for (size_t i = 0; i < throttles.size(); ++i) {
    if (Active(throttles[i].start_iteration, throttles[i].end_iteration, iteration)) {
      active.push_back(static_cast<int>(stragglers.size() + i));
    }
  }
  return active;
}

JobConditions ConditionsAt(int pipelines, const std::vector<SlowPipelineEvent>& stragglers,
                           const std::vector<GpuCapEvent>& throttles, int iteration) {
  std::map<int, PipelineConditions> special;  // pipeline -> conditions, only for affected pipelines
  for (const SlowPipelineEvent& e : stragglers) {
    if (!Active(e.start_iteration, e.end_iteration, iteration)) continue;
    for (int p = e.first_pipeline; p <= e.last_pipeline && p < pipelines; ++p) special[p].slowdown *= e.factor;
  }
  for (const GpuCapEvent& e : throttles) {
    if (Active(e.start_iteration, e.end_iteration, iteration) && e.pipeline < pipelines) AddCap(special[e.pipeline], e);
  }
  JobConditions job;
  job.classes.push_back(PipelineConditions{});
  job.pipeline_count.push_back(pipelines);
  job.class_of.assign(pipelines, 0);
  for (const auto& [pipeline, cond] : special) {
    if (cond.nominal()) continue;
    auto it = std::find(job.classes.begin(), job.classes.end(), cond);
    int c = static_cast<int>(it - job.classes.begin());
    if (it == job.classes.end()) {
      job.classes.push_back(cond);
      job.pipeline_count.push_back(0);
    }
    job.class_of[pipeline] = c;
    ++job.pipeline_count[c];
    --job.pipeline_count[0];
  }
  return job;
}

}  // namespace perseus::emulator
