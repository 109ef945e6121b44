// `perseus status`: what a perseus server is doing.
//
//   perseus status --server http://127.0.0.1:7787 [--job ID] [--json]
//
// Without --job it lists the jobs; with it, the job's phase, profiling
// progress, frontier, carbon decision, plan per pipeline and stragglers.
// Errors are printed as "perseus: error: ..." and give exit code 1.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

namespace CLI {
class App;
}

namespace perseus::cli {

struct StatusArgs {
  std::string server = "http://127.0.0.1:7787";
  std::string job;
  std::string token_file;  // else $PERSEUS_TOKEN (needed with serve --token-for-reads)
  bool json = false;
  std::string ca_cert;  // https: the server's CA bundle (else $PERSEUS_CA_CERT, else the system's)
};

int RunStatus(const StatusArgs& args);
// The text `perseus status --job` prints for a GET /jobs/{id} reply.
std::string FormatJobStatus(const nlohmann::json& job);
// The text of `perseus status` for the job list (GET /jobs).
// The server's power cap (GET /power-cap's "power_cap"), one line; empty
// without one.
std::string FormatServerPowerCap(const nlohmann::json& cap);
std::string FormatJobList(const nlohmann::json& reply);
void RegisterStatusCommand(CLI::App& app);

}  // namespace perseus::cli
