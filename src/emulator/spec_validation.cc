// Validation of an EmulationSpec.
#include "emulator/spec_validation.h"

#include <cmath>
#include <string>

namespace perseus::emulator {
namespace {

std::string Ordinal(const std::string& flag, size_t index) { return flag + " #" + std::to_string(index + 1); }

Status CheckIterations(const std::string& where, int start, int end, int iterations) {
  if (start >= iterations) {
    return Status::InvalidArgument(where + ": starts at iteration " + std::to_string(start) + " but --iterations is " +
                                   std::to_string(iterations));
  }
  if (end >= 0 && end <= start) return Status::InvalidArgument(where + ": ends before it starts");
  return Status::Ok();
}

Status CheckPipeline(const std::string& where, int pipeline, int pipelines) {
  if (pipeline < 0 || pipeline >= pipelines) {
    return Status::InvalidArgument(where + ": pipeline " + std::to_string(pipeline) + " is outside 0.." +
                                   std::to_string(pipelines - 1) + " (--pipelines " + std::to_string(pipelines) + ")");
  }
  return Status::Ok();
}

Status CheckClosedLoop(const ClosedLoopOptions& o) {
  auto in = [](double v, double lo, double hi) { return std::isfinite(v) && v >= lo && v <= hi; };
  if (!(o.profiling_s == -1 || in(o.profiling_s, 0, 1e7))) {
    return Status::InvalidArgument("--profiling-s: expected -1 (the server's sweep) or seconds in [0, 1e7]");
  }
  if (!in(o.profiling_time_factor, 0.1, 10) || !in(o.profiling_energy_factor, 0.1, 10)) {
    return Status::InvalidArgument("closed loop: profiling factors must lie in [0.1, 10]");
  }
  if (!(o.optimization_s == -1 || in(o.optimization_s, 0, 1e7))) {
    return Status::InvalidArgument("--optimization-s: expected -1 (measured) or seconds in [0, 1e7]");
  }
  if (!in(o.plan_delivery_s, 0, 1e5)) return Status::InvalidArgument("--plan-delivery-s: expected seconds in [0, 1e5]");
  if (!in(o.clock_latency_s, 0, 10)) return Status::InvalidArgument("--clock-latency-ms: expected ms in [0, 10000]");
  if (!in(o.power_cap_w, 0, 1e12)) return Status::InvalidArgument("--power-cap: expected watts in [0, 1e12]");
  if (!in(o.power_cap_window_s, 1, 3600)) {
    return Status::InvalidArgument("--power-cap-window-s: expected seconds in [1, 3600]");
  }
  if (!in(o.iteration_jitter, 0, 1)) return Status::InvalidArgument("--iteration-jitter: expected a fraction in [0, 1]");
  if (o.detection_window < 1 || o.detection_window > 1000 || !in(o.detection_threshold, 1, 100)) {
    return Status::InvalidArgument("closed loop: detection window must lie in [1, 1000] and threshold in [1, 100]");
  }
  return Status::Ok();
}

Status CheckScalars(const EmulationSpec& spec) {
  const ScheduleSpec& s = spec.problem.schedule;
  if (spec.pipelines < 1)
    return Status::InvalidArgument("--pipelines: expected at least 1, got " + std::to_string(spec.pipelines));
  const long gpus =
      static_cast<long>(spec.pipelines) * std::max(s.stages, 1) * std::max(spec.problem.gpus_per_stage, 1);
  if (gpus > kMaxGpus) {
    return Status::InvalidArgument("--pipelines: " + std::to_string(gpus) + " GPUs in the job; at most " +
                                   std::to_string(kMaxGpus) + " are emulated");
  }
  if (spec.iterations < 1 || spec.iterations > kMaxIterations) {
    return Status::InvalidArgument("--iterations: expected 1.." + std::to_string(kMaxIterations) + ", got " +
                                   std::to_string(spec.iterations));
  }
  if (!(spec.slowdown_budget >= 0 && spec.slowdown_budget <= 1)) {
    return Status::InvalidArgument("--slowdown-budget: expected a fraction in [0, 1]");
  }
  if (!(spec.profile_scale > 0 && spec.profile_scale <= 1e6)) {
    return Status::InvalidArgument("--scale: expected a positive factor up to 1e6");
  }
  if (spec.max_clock_changes_per_gpu < -1) {
    return Status::InvalidArgument("--max-clock-changes: expected -1 (no limit) or a count >= 0");
  }
  if (!(spec.unit_time_s > 0 && std::isfinite(spec.unit_time_s))) {
    return Status::InvalidArgument("--unit-time-ms: expected a positive number");
  }
  PERSEUS_RETURN_IF_ERROR(CheckClosedLoop(spec.closed_loop));
  if (spec.sweep_factors.size() > 100) return Status::InvalidArgument("--sweep: at most 100 factors");
  for (double f : spec.sweep_factors) {
    if (!(f >= 1 && f <= 100)) return Status::InvalidArgument("--sweep: factors must lie in [1, 100]");
  }
  return Status::Ok();
}

Status CheckStraggler(const EmulationSpec& spec, size_t i) {
  const SlowPipelineEvent& e = spec.stragglers[i];
  const std::string where = Ordinal("--straggler", i);
  if (!(e.factor >= 1 && e.factor <= 100)) return Status::InvalidArgument(where + ": factor must lie in [1, 100]");
  if (e.last_pipeline < e.first_pipeline) return Status::InvalidArgument(where + ": empty pipeline range");
  PERSEUS_RETURN_IF_ERROR(CheckPipeline(where, e.first_pipeline, spec.pipelines));
  PERSEUS_RETURN_IF_ERROR(CheckPipeline(where, e.last_pipeline, spec.pipelines));
  return CheckIterations(where, e.start_iteration, e.end_iteration, spec.iterations);
}

Status CheckThrottle(const EmulationSpec& spec, size_t i) {
  const GpuCapEvent& e = spec.throttles[i];
  const std::string where = Ordinal("--throttle", i);
  PERSEUS_RETURN_IF_ERROR(CheckPipeline(where, e.pipeline, spec.pipelines));
  const int stages = spec.problem.schedule.stages, gpus = spec.problem.gpus_per_stage;
  if (e.stage < 0 || e.stage >= stages) {
    return Status::InvalidArgument(where + ": stage " + std::to_string(e.stage) + " is outside 0.." +
                                   std::to_string(stages - 1));
  }
  if (e.gpu < 0 || e.gpu >= gpus) {
    return Status::InvalidArgument(where + ": gpu " + std::to_string(e.gpu) + " is outside 0.." +
                                   std::to_string(gpus - 1) + " (--gpus-per-stage " + std::to_string(gpus) + ")");
  }
  if (e.stage < spec.profile.num_stages()) {
    for (const auto& points : spec.profile.stages[e.stage].points) {
      if (!points.empty() && e.max_freq_mhz < points.back().freq_mhz) {
        return Status::InvalidArgument(where + ": freq " + std::to_string(e.max_freq_mhz) +
                                       " MHz is below the lowest profiled clock of stage " + std::to_string(e.stage) +
                                       " (" + std::to_string(points.back().freq_mhz) + " MHz)");
      }
    }
  }
  return CheckIterations(where, e.start_iteration, e.end_iteration, spec.iterations);
}

}  // namespace

Status ValidateSpec(const EmulationSpec& spec) {
  PERSEUS_RETURN_IF_ERROR(CheckScalars(spec));
  for (size_t i = 0; i < spec.stragglers.size(); ++i) PERSEUS_RETURN_IF_ERROR(CheckStraggler(spec, i));
  for (size_t i = 0; i < spec.throttles.size(); ++i) PERSEUS_RETURN_IF_ERROR(CheckThrottle(spec, i));
  return Status::Ok();
}

}  // namespace perseus::emulator
