// A stand-in for the perseus binary with only the runtime's subcommands
// (serve, status), used by the runtime end-to-end tests until src/cli/main.cc
// exists; then the tests run the real perseus binary instead.
#include <CLI/CLI.hpp>

#include "cli/serve_command.h"
#include "cli/status_command.h"

int main(int argc, char** argv) {
  CLI::App app{"perseus (runtime subcommands only)"};
  app.require_subcommand(1);
  perseus::cli::RegisterServeCommand(app);
  perseus::cli::RegisterStatusCommand(app);
  CLI11_PARSE(app, argc, argv);
  return 0;
}
