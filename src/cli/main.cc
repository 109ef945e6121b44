// perseus: the command-line entry point. Only the subcommand table lives
// here; each subcommand is one file (optimize_command.cc, emulate_command.cc,
// serve_command.cc, status_command.cc, carbon_command.cc).
#include <CLI/CLI.hpp>

#include "cli/optimize_command.h"
#ifdef PERSEUS_HAVE_EMULATE
#include "cli/emulate_command.h"
#endif
#ifdef PERSEUS_HAVE_SERVE
#include "cli/serve_command.h"
#include "cli/status_command.h"
#endif
#ifdef PERSEUS_HAVE_CARBON
#include "cli/carbon_command.h"
#endif

int main(int argc, char** argv) {
  CLI::App app{"perseus: removes energy bloat from pipeline-parallel training"};
  app.require_subcommand(1);
  app.set_version_flag("--version", "perseus 0.1.0");
  perseus::cli::RegisterOptimizeCommand(app);
#ifdef PERSEUS_HAVE_EMULATE
  perseus::cli::RegisterEmulateCommand(app);
#endif
#ifdef PERSEUS_HAVE_SERVE
  perseus::cli::RegisterServeCommand(app);
  perseus::cli::RegisterStatusCommand(app);
#endif
#ifdef PERSEUS_HAVE_CARBON
  perseus::cli::RegisterCarbonCommand(app);
#endif
  try {
    app.parse(argc, argv);
  } catch (const CLI::RuntimeError& e) {
    return e.get_exit_code();
  } catch (const CLI::ParseError& e) {
    return app.exit(e);
  }
  return 0;
}
