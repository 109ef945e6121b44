#include "tests/e2e/runtime_server_process.h"

#include <httplib.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cmath>
#include <cstdlib>
#include <cstdio>
#include <fstream>
#include <iterator>
#include <thread>

namespace perseus::e2e {

double MetricValue(const std::string& exposition, const std::string& series) {
  size_t at = exposition.rfind("\n" + series);
  if (at == std::string::npos && exposition.rfind(series, 0) != 0) return std::nan("");
  at = at == std::string::npos ? 0 : at + 1;
  return std::strtod(exposition.c_str() + at + series.size(), nullptr);
}

std::string PerseusBinary() { return PERSEUS_CLI_PATH; }

std::string TempPath(const std::string& name) {
  const char* dir = std::getenv("TEST_TMPDIR");
  if (dir == nullptr || *dir == '\0') dir = std::getenv("TMPDIR");
  const std::string base = dir != nullptr && *dir != '\0' ? dir : "/tmp";
  return base + "/perseus_e2e_" + name + "_" + std::to_string(getpid());
}

std::string TokenFile(const std::string& path, const std::string& token) {
  std::FILE* f = std::fopen(path.c_str(), "w");
  if (f != nullptr) {
    ::chmod(path.c_str(), 0600);
    std::fputs(token.c_str(), f);
    std::fclose(f);
  }
  return path;
}

ServerProcess::ServerProcess(std::string binary, std::string db, std::vector<std::string> extra_args)
    : binary_(std::move(binary)), db_(std::move(db)), log_(db_ + ".log"), port_file_(db_ + ".port"),
      extra_(std::move(extra_args)) {
  for (const char* suffix : {"", "-wal", "-shm", ".log", ".port"}) std::remove((db_ + suffix).c_str());
}

ServerProcess::~ServerProcess() { Stop(); }

std::string ServerProcess::Log() const {
  std::ifstream in(log_);
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

bool ServerProcess::Start() {
  std::remove(port_file_.c_str());
  std::vector<std::string> args = {binary_, "serve", "--db", db_, "--port", std::to_string(port_),
                                   "--port-file", port_file_, "--log-file", log_};
  args.insert(args.end(), extra_.begin(), extra_.end());
  pid_ = fork();
  if (pid_ == 0) {
    std::vector<char*> argv;
    for (std::string& a : args) argv.push_back(a.data());
    argv.push_back(nullptr);
    execv(argv[0], argv.data());
    _exit(127);
  }
  for (int i = 0; i < 1000; ++i) {
    std::ifstream in(port_file_);
    int port = 0;
    if (in >> port && port > 0) {
      port_ = port;
      if (HttpGet(url(), "/healthz").status == 200) return true;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return false;
}

void ServerProcess::Kill() {
  if (pid_ <= 0) return;
  kill(pid_, SIGKILL);
  waitpid(pid_, nullptr, 0);
  pid_ = -1;
}

void ServerProcess::Stop() {
  if (pid_ <= 0) return;
  kill(pid_, SIGTERM);
  waitpid(pid_, nullptr, 0);
  pid_ = -1;
}

namespace {

httplib::Client MakeClient(const std::string& url) {
  httplib::Client c(url);
  c.set_connection_timeout(2, 0);
  c.set_read_timeout(10, 0);
  return c;
}

HttpReply ToReply(const httplib::Result& r) {
  if (!r) return {};
  return {r->status, r->body};
}

}  // namespace

HttpReply HttpGet(const std::string& url, const std::string& path) {
  httplib::Client c = MakeClient(url);
  return ToReply(c.Get(path));
}

HttpReply HttpSend(const std::string& method, const std::string& url, const std::string& path,
                   const std::string& body, const std::string& token) {
  httplib::Client c = MakeClient(url);
  if (!token.empty()) c.set_bearer_token_auth(token);
  if (method == "DELETE") return ToReply(c.Delete(path));
  if (method == "PUT") return ToReply(c.Put(path, body, "application/json"));
  return ToReply(c.Post(path, body, "application/json"));
}

}  // namespace perseus::e2e

namespace perseus::e2e {

bool WaitUntil(const std::function<bool()>& done, double timeout_s) {
  auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(timeout_s);
  while (std::chrono::steady_clock::now() < deadline) {
    if (done()) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return done();
}

}  // namespace perseus::e2e
