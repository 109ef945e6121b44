// perseus: the command-line entry point. Only the subcommand table lives
// here; each subcommand is one file (optimize_command.cc, emulate_command.cc,
// serve_command.cc, status_command.cc, carbon_command.cc, doctor_command.cc).
#include <CLI/CLI.hpp>
#include <string>

#include "cli/carbon_command.h"
#include "common/command_line.h"
#include "cli/powercap_command.h"
#include "cli/doctor_command.h"
#include "cli/emulate_command.h"
#include "cli/optimize_command.h"
#include "cli/serve_command.h"
#include "cli/status_command.h"
#include "perseus/version.h"

int main(int argc, char** argv) {
  CLI::App app{"perseus: removes energy bloat from pipeline-parallel training"};
  app.require_subcommand(1);
  app.set_version_flag("--version", std::string("perseus ") + perseus::kVersion);
  perseus::cli::RegisterOptimizeCommand(app);
  perseus::cli::RegisterEmulateCommand(app);
  perseus::cli::RegisterServeCommand(app);
  perseus::cli::RegisterStatusCommand(app);
  perseus::cli::RegisterCarbonCommand(app);
  perseus::cli::RegisterPowerCapCommand(app);
  perseus::cli::RegisterDoctorCommand(app);
  return perseus::ParseCommandLine(app, argc, argv, "perseus").value_or(0);
}
