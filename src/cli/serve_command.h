// `perseus serve`: runs the perseus server (HTTP API over a SQLite database).
//
//   perseus serve --db perseus.db [--host 127.0.0.1] [--port 7787] [--token-file F] [--token-for-reads]
//
// RunServe blocks until SIGINT or SIGTERM and returns the exit code; errors
// are printed as "perseus: error: ..." on stderr. The server keeps all state
// in the database, so a restarted server (even after SIGKILL) continues
// where it stopped. See docs/http_api.md.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "perseus/optimizer.h"

namespace CLI {
class App;
}

namespace perseus::cli {

struct ServeArgs {
  std::string db = "perseus.db";
  std::string host = "127.0.0.1";
  int port = 7787;  // 0: any free port (see port_file)
  std::string token;       // refused: a secret on the command line is visible to every user
  std::string token_file;  // else $PERSEUS_TOKEN
  bool token_for_reads = false;  // reads need the token too
  size_t max_body_bytes = 1 << 20;
  int threads = 256;
  int idle_timeout_s = 5;
  double request_deadline_s = 30;
  std::vector<std::string> allowed_hosts;
  std::vector<std::string> job_files;  // folders job specs may name files in (JobResourcePolicy)
  int max_jobs = 1000;
  int max_frontier_plans = kDefaultMaxPlans;
  int optimizer_threads = 0;  // ServiceLimits::optimizer_threads
  int optimizer_workers = 2;  // ServiceLimits::optimizer_workers
  double max_solve_s = 3600;  // ServiceLimits::max_solve_s
  int64_t job_expiry_s = 7 * 86400;
  std::string log_file;    // empty: stderr
  std::string log_level = "info";
  bool log_requests = false;
  bool full_sync = false;  // fsync every commit (survives power loss, slower)
  std::string port_file;   // write the bound port here once listening
  std::string tls_cert;    // HTTPS: PEM certificate (chain); needs tls_key
  std::string tls_key;     // HTTPS: PEM private key
};

int RunServe(const ServeArgs& args);
// Adds the `serve` subcommand to `app`; its callback runs RunServe and
// throws CLI::RuntimeError with a non-zero exit code.
void RegisterServeCommand(CLI::App& app);

}  // namespace perseus::cli
