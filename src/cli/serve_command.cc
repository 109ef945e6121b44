#include "cli/serve_command.h"

#include <signal.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstring>
#include <CLI/CLI.hpp>
#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <memory>
#include <thread>

#include "cli/cli_util.h"
#include "common/flag_checks.h"
#include "common/file_util.h"
#include "runtime/server/admission.h"
#include "runtime/server/http_server.h"
#include "runtime/server/job_service.h"
#include "runtime/server/store.h"

namespace perseus::cli {

namespace {

constexpr size_t kMaxTlsFileBytes = 1 << 20;

int Fail(const std::string& message) {
  std::cerr << "perseus: error: " << message << "\n";
  return 1;
}

Result<std::string> LoadToken(const ServeArgs& args) {
  if (!args.token.empty()) {
    return Status::InvalidArgument(
        "--token: a secret on the command line is visible to every user in /proc/PID/cmdline; use --token-file FILE "
        "or $PERSEUS_TOKEN");
  }
  Result<std::string> token = ReadToken(args.token_file);
  if (!token.ok()) return token.status();
  if (args.token_for_reads && token->empty()) {
    return Status::InvalidArgument("--token-for-reads: needs a token (--token-file FILE or $PERSEUS_TOKEN)");
  }
  return token;
}

// Both TLS files or neither, each a readable file (OpenSSL's own errors
// come from HttpServer::Bind).
Status CheckTlsFiles(const ServeArgs& args) {
  if (args.tls_cert.empty() != args.tls_key.empty()) {
    return Status::InvalidArgument(args.tls_cert.empty() ? "--tls-key needs --tls-cert (the certificate)"
                                                         : "--tls-cert needs --tls-key (its private key)");
  }
  for (const auto& [flag, path] : {std::pair{"--tls-cert", args.tls_cert}, std::pair{"--tls-key", args.tls_key}}) {
    if (path.empty()) continue;
    Result<std::string> text = ReadFile(path, kMaxTlsFileBytes);
    if (!text.ok()) return Status::InvalidArgument(std::string(flag) + " " + text.status().message());
  }
  return Status::Ok();
}

// What job specs may make the server read or fetch (job_resources.h): files
// under --job-files, else any file with a token (its holders run the
// server) and none without; a URL other than the default only with a token.
Result<server::JobResourcePolicy> JobResources(const ServeArgs& args, const std::string& token) {
  server::JobResourcePolicy policy;
  policy.any_url = !token.empty();
  if (!args.job_files.empty()) {
    Result<std::vector<std::string>> dirs = server::RealFolders(args.job_files);
    if (!dirs.ok()) return Status::InvalidArgument("--job-files " + dirs.status().message());
    policy.file_dirs = *dirs;
  } else if (token.empty()) {
    policy.file_dirs = std::vector<std::string>{};
  }
  return policy;
}

// A database this start created is removed again if the start fails, so a
// failed `perseus serve` leaves no new files behind. Declared before the
// Store, it runs after the Store has closed the database and its lock.
class RemoveNewDatabaseUnlessStarted {
 public:
  explicit RemoveNewDatabaseUnlessStarted(const std::string& db)
      : db_(db), is_new_(db != ":memory:" && ::access(db.c_str(), F_OK) != 0) {}
  ~RemoveNewDatabaseUnlessStarted() {
    if (!is_new_ || started_) return;
    for (const char* suffix : {"", "-wal", "-shm", ".lock"}) std::remove((db_ + suffix).c_str());
  }
  void Started() { started_ = true; }

 private:
  std::string db_;
  bool is_new_;
  bool started_ = false;
};

}  // namespace

int RunServe(const ServeArgs& args) {
  Result<std::string> token = LoadToken(args);
  if (!token.ok()) return Fail(token.status().message());
  if (Status tls = CheckTlsFiles(args); !tls.ok()) return Fail(tls.message());
  Result<server::JobResourcePolicy> resources = JobResources(args, *token);
  if (!resources.ok()) return Fail(resources.status().message());
  Result<server::LogLevel> level = server::ParseLogLevel(args.log_level);
  if (!level.ok()) return Fail("--log-level: " + level.status().message());
  if (!args.port_file.empty()) {
    if (Status st = CheckCanCreate(args.port_file); !st.ok()) return Fail("--port-file " + st.message());
  }
  std::FILE* log_out = stderr;
  if (!args.log_file.empty()) {
    log_out = std::fopen(args.log_file.c_str(), "a");
    if (log_out == nullptr) return Fail("--log-file " + args.log_file + ": cannot open for appending: " + std::strerror(errno));
  }
  server::JsonLog log(log_out, *level);
  RemoveNewDatabaseUnlessStarted new_database(args.db);
  Result<std::unique_ptr<server::Store>> store = server::Store::Open(args.db, args.full_sync);
  if (!store.ok()) return Fail(store.status().message());
  // Block the stop signals before any thread starts, so only sigwait sees them.
  sigset_t stop_signals;
  sigemptyset(&stop_signals);
  sigaddset(&stop_signals, SIGINT);
  sigaddset(&stop_signals, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &stop_signals, nullptr);
  server::ServiceLimits limits;
  limits.max_jobs = args.max_jobs;
  limits.max_frontier_plans = args.max_frontier_plans;
  limits.optimizer_threads = args.optimizer_threads;
  limits.optimizer_workers = args.optimizer_workers;
  limits.max_solve_s = args.max_solve_s;
  limits.job_expiry_s = args.job_expiry_s;
  limits.job_resources = *resources;
  Result<std::unique_ptr<server::JobService>> service =
      server::JobService::Create(store->get(), &log, nullptr, {}, limits);
  if (!service.ok()) return Fail(args.db + ": " + service.status().message());
  server::ServerOptions options;
  options.host = args.host;
  options.port = args.port;
  options.token = *token;
  options.reads_need_token = args.token_for_reads;
  options.max_body_bytes = args.max_body_bytes;
  options.threads = args.threads;
  options.idle_timeout_s = args.idle_timeout_s;
  options.request_deadline_s = args.request_deadline_s;
  options.allowed_hosts = args.allowed_hosts;
  options.log_all_requests = args.log_requests;
  options.tls_cert_path = args.tls_cert;
  options.tls_key_path = args.tls_key;
  if (!token->empty() && args.tls_cert.empty() && !server::IsLoopbackAddress(args.host)) {
    log.Warn("token_in_clear", {{"host", args.host},
                                {"message", "the bearer token crosses the network unencrypted: use --tls-cert/--tls-key "
                                            "or a TLS-terminating proxy"}});
  }
  server::HttpServer http(service->get(), &log, options);
  Result<int> port = http.Bind();
  if (!port.ok()) return Fail(port.status().message());
  if (!args.port_file.empty()) {
    Status st = WriteFileAtomic(args.port_file, std::to_string(*port) + "\n");
    if (!st.ok()) return Fail("--port-file " + st.message());
  }
  new_database.Started();
  std::atomic<bool> stopping{false};
  std::thread stopper([&] {
    int sig = 0;
    sigwait(&stop_signals, &sig);
    stopping = true;
    log.Info("server_stopping", {{"signal", sig}});
    http.Stop();
  });
  http.Serve();
  if (!stopping) kill(getpid(), SIGTERM);  // wakes the stopper (the signal is blocked, so only sigwait sees it)
  stopper.join();
  if (log_out != stderr) std::fclose(log_out);
  return 0;
}

void RegisterServeCommand(CLI::App& app) {
  auto args = std::make_shared<ServeArgs>();
  CLI::App* cmd = app.add_subcommand("serve", "Run the perseus server (HTTP API, state in SQLite)");
  cmd->add_option("--db", args->db, "SQLite database (created if missing)")->capture_default_str();
  cmd->add_option("--host", args->host, "Address to listen on")->capture_default_str();
  cmd->add_option("--port", args->port, "TCP port (0: any free port)")->capture_default_str()->transform(IntegerIn(0, 65535));
  cmd->add_option("--token", args->token, "Refused: use --token-file or $PERSEUS_TOKEN (kept to say so)");
  cmd->add_option("--token-file", args->token_file,
                  "File holding the bearer token required on mutating requests (else $PERSEUS_TOKEN; none: no auth)");
  cmd->add_flag("--token-for-reads", args->token_for_reads,
               "Reads need the token too (all but the dashboard's page and /healthz)");
  cmd->add_option("--max-body-bytes", args->max_body_bytes, "Largest request body accepted")
      ->capture_default_str()
      ->transform(IntegerIn(1024, 1LL << 30));
  cmd->add_option("--threads", args->threads, "Connections served at once; beyond them, replies close their connection so every client is served")
      ->capture_default_str()
      ->transform(IntegerIn(1, 16384));
  cmd->add_option("--idle-timeout-s", args->idle_timeout_s,
                  "Close a connection idle, or stalled in a read or write, this long")
      ->capture_default_str()
      ->transform(IntegerIn(1, 3600));
  cmd->add_option("--request-deadline-s", args->request_deadline_s,
                  "Close a connection whose request has not arrived in full and been answered this long after it "
                  "connected or got its previous reply (a client trickling a byte at a time)")
      ->capture_default_str()
      ->check(NumberIn(1, 3600));
  cmd->add_option("--allowed-host", args->allowed_hosts,
                  "A Host name clients use to reach the server (repeatable; loopback names are always accepted "
                  "when listening on loopback)");
  cmd->add_option("--job-files", args->job_files,
                  "A folder whose files job specs may name for the server to read (carbon.trace_path, "
                  "power_cap_schedule; repeatable). Without it, a server with a token reads any file a job names "
                  "and one without reads none")
      ->type_name("DIR");
  cmd->add_option("--max-jobs", args->max_jobs, "Jobs the server holds at most")->capture_default_str()->transform(IntegerIn(1, 1000000));
  cmd->add_option("--max-frontier-plans", args->max_frontier_plans,
                  "Frontier plans a job makes and keeps at most (fastest, no-slowdown and minimum-energy kept, the "
                  "rest spread evenly in time; 0: one every unit time)")
      ->capture_default_str()
      ->transform(IntegerIn(0, 1000000));
  cmd->add_option("--optimizer-threads", args->optimizer_threads,
                  "Threads one optimisation makes its plans on, all but one beside its sweep (0: every CPU the "
                  "server may run on); lower it when the server shares a machine with training")
      ->capture_default_str()
      ->transform(IntegerIn(0, 4096));
  cmd->add_option("--optimizer-workers", args->optimizer_workers,
                  "Jobs optimised at once, so that one long solve does not hold up the jobs behind it")
      ->capture_default_str()
      ->transform(IntegerIn(1, 64));
  cmd->add_option("--max-solve-s", args->max_solve_s,
                  "Stop a job's optimisation after this many seconds and fail the job, naming the limit (0: no "
                  "limit); jobs of tens of thousands of computations per iteration take minutes to hours")
      ->capture_default_str()
      ->transform(NumberIn(0, 1e9));
  cmd->add_option("--job-expiry-s", args->job_expiry_s,
                  "Delete a job no rank reached for this long (0: never)")
      ->capture_default_str()
      ->transform(IntegerIn(0, 1LL << 40));
  cmd->add_option("--log-file", args->log_file, "Append JSON-lines logs here instead of stderr");
  cmd->add_option("--log-level", args->log_level,
                  "Least severe level logged: debug (also every rank report and read), info, warn or error")
      ->capture_default_str();
  cmd->add_flag("--log-requests", args->log_requests, "Also log successful read requests (at info)");
  cmd->add_flag("--full-sync", args->full_sync, "fsync every commit (survive power loss)");
  cmd->add_option("--port-file", args->port_file, "Write the bound port to this file");
  cmd->add_option("--tls-cert", args->tls_cert, "Serve HTTPS with this PEM certificate (chain); needs --tls-key");
  cmd->add_option("--tls-key", args->tls_key, "The PEM private key of --tls-cert");
  cmd->callback([args] {
    int rc = RunServe(*args);
    if (rc != 0) throw CLI::RuntimeError(rc);
  });
}

}  // namespace perseus::cli
