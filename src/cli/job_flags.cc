// Shared job flags.
#include "cli/job_flags.h"

#include <CLI/CLI.hpp>
#include <filesystem>

#include "common/flag_checks.h"
#include "perseus/gpu_model.h"

namespace perseus::cli {

void AddJobFlags(CLI::App* cmd, JobFlags& f) {
  cmd->add_option("profile", f.profile, "Profile CSV: stage,instruction,frequency,time,energy");
  cmd->add_option("--example", f.example, "Use a bundled example instead of a profile")
      ->check(CLI::IsMember(ExampleNames()));
  cmd->add_option("--stages", f.stages, "Pipeline stages (GPUs per pipeline)")->transform(kPositiveInt);
  cmd->add_option("--microbatches", f.microbatches, "Microbatches per iteration")->transform(kPositiveInt);
  cmd->add_option("--schedule", f.schedule, "1f1b (default), gpipe, interleaved-1f1b, zb-h1, dualpipev or zb-v");
  cmd->add_option("--chunks", f.chunks, "Model chunks per GPU (interleaved-1f1b; dualpipev, zb-v: 2)")
      ->transform(kPositiveInt);
  cmd->add_option("--gpus-per-stage", f.gpus_per_stage, "Tensor-parallel GPUs per stage (multiplies energy)")
      ->transform(kPositiveInt);
  cmd->add_option("--blocking-power", f.blocking_power_w, "Watts a GPU draws while blocked on communication")
      ->check(NumberIn(0, kMaxPlausibleGpuPowerW));  // the bound a profile's rows have
}

Result<ResolvedJob> ResolveJob(const JobFlags& a) {
  if (!a.example.empty() == !a.profile.empty()) {
    return Status::InvalidArgument("give exactly one of PROFILE.csv or --example NAME");
  }
  ResolvedJob job;
  job.spec.schedule.chunks = 1;
  job.spec.gpus_per_stage = 1;
  if (!a.example.empty()) {
    Result<Example> ex = FindExample(a.example);
    if (!ex.ok()) return ex.status();
    job.profile = ex->profile;
    job.spec = ex->spec;
    job.name = ex->name;
  }
  if (!a.schedule.empty()) {
    Result<ScheduleKind> kind = ParseScheduleKind(a.schedule);
    if (!kind.ok()) return kind.status().WithContext("--schedule");
    job.spec.schedule.kind = *kind;
  }
  ScheduleSpec& s = job.spec.schedule;
  if (a.stages) s.stages = a.stages;
  if (a.microbatches) s.microbatches = a.microbatches;
  if (a.chunks) s.chunks = a.chunks;
  else if (VShaped(s.kind)) s.chunks = 2;
  if (a.gpus_per_stage) job.spec.gpus_per_stage = a.gpus_per_stage;
  if (a.blocking_power_w >= 0) job.spec.blocking_power_w = a.blocking_power_w;
  if (!a.example.empty()) return job;
  if (s.stages <= 0) return Status::InvalidArgument("--stages is required with a profile");
  if (s.microbatches <= 0) return Status::InvalidArgument("--microbatches is required with a profile");
  if (a.blocking_power_w < 0) return Status::InvalidArgument("--blocking-power is required with a profile");
  Result<Profile> p = LoadProfileCsv(a.profile, s.chunks > 1 ? -1 : s.stages);
  if (!p.ok()) return p.status();
  job.profile = std::move(*p);
  job.name = std::filesystem::path(a.profile).stem().string();
  return job;
}

std::string JobTitle(const ResolvedJob& job) {
  const ScheduleSpec& s = job.spec.schedule;
  std::string shape = std::to_string(s.stages) + " stages x " + std::to_string(s.microbatches) + " microbatches";
  if (s.chunks > 1) shape += " x " + std::to_string(s.chunks) + " chunks";
  return job.name + " (" + shape + ", " + ScheduleName(s.kind) + ")";
}

}  // namespace perseus::cli
