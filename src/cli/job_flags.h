// The flags every job-taking subcommand shares (optimize, emulate, carbon):
// a profile or a bundled example, and the pipeline it runs on. One place
// registers them and turns them into a profile and a ProblemSpec.
#pragma once

#include <string>

#include "perseus/problem.h"
#include "perseus/profile.h"
#include "perseus/status.h"

namespace CLI {
class App;
}

namespace perseus::cli {

struct JobFlags {
  std::string profile;   // PROFILE.csv (positional)
  std::string example;   // --example NAME
  std::string schedule;  // empty: 1f1b, or the example's
  int stages = 0;        // 0: the example's (required with a profile)
  int microbatches = 0;
  int chunks = 0;        // 0: 1, or the example's
  int gpus_per_stage = 0;
  double blocking_power_w = -1;  // < 0: the example's (required with a profile)
};

// Adds PROFILE, --example, --stages, --microbatches, --schedule, --chunks,
// --gpus-per-stage and --blocking-power to `cmd`, writing into `flags`.
void AddJobFlags(CLI::App* cmd, JobFlags& flags);

struct ResolvedJob {
  Profile profile;
  ProblemSpec spec;
  std::string name;  // the example's name or the profile's file name without .csv
};

// "gpt3-xl-a100 (4 stages x 12 microbatches, 1f1b)": the job as plot titles name it.
std::string JobTitle(const ResolvedJob& job);

// The profile and spec from --example or PROFILE plus flags; flags override
// the example's values. Errors name the flag or the profile's file:line.
Result<ResolvedJob> ResolveJob(const JobFlags& flags);

}  // namespace perseus::cli
