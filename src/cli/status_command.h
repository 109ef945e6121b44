// `perseus status`: what a perseus server is doing.
//
//   perseus status --server http://127.0.0.1:7787 [--job ID] [--json]
//
// Without --job it lists the jobs; with it, the job's phase, profiling
// progress, frontier, plan per pipeline and stragglers. Errors are printed as
// "perseus: error: ..." and give exit code 1.
#pragma once

#include <string>

namespace CLI {
class App;
}

namespace perseus::cli {

struct StatusArgs {
  std::string server = "http://127.0.0.1:7787";
  std::string job;
  bool json = false;
};

int RunStatus(const StatusArgs& args);
void RegisterStatusCommand(CLI::App& app);

}  // namespace perseus::cli
