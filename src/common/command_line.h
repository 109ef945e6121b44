// The one way perseus's programs (perseus, perseusd) read their command line:
// CLI11 parses; --help and --version print and exit 0; a bad flag prints
// "<program>: error: <what>" and the hint to --help on stderr and exits 2,
// the usual exit status of a usage error (CLI11's own codes, 105-109, mean
// nothing to a shell script). Header-only: include it only where CLI11 is linked.
#pragma once

#include <CLI/CLI.hpp>
#include <cstdio>
#include <optional>

namespace perseus {

inline constexpr int kUsageErrorExit = 2;

// Parses; returns the exit status when the program should stop now (help,
// version, a usage error, or an error a subcommand's callback raised as
// CLI::RuntimeError with its own status), nullopt when it should go on.
inline std::optional<int> ParseCommandLine(CLI::App& app, int argc, const char* const* argv, const char* program) {
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForVersion& e) {
    return app.exit(e);
  } catch (const CLI::RuntimeError& e) {
    return e.get_exit_code();
  } catch (const CLI::ParseError& e) {
    std::fprintf(stderr, "%s: error: %s\nRun with --help for more information.\n", program, e.what());
    return kUsageErrorExit;
  }
  return std::nullopt;
}

}  // namespace perseus
