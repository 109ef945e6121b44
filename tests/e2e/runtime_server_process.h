// ServerProcess: the real `perseus serve` binary as a child process, for the
// runtime's end-to-end tests. It listens on 127.0.0.1 at a free port (chosen
// by the server: --port 0 --port-file) and can be SIGKILLed and restarted on
// the same database. Also: minimal JSON-over-HTTP helpers.
#pragma once

#include <sys/types.h>

#include <functional>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

namespace perseus::e2e {

using Json = nlohmann::json;

class ServerProcess {
 public:
  // `binary` is the perseus executable; `extra_args` go after `serve`.
  ServerProcess(std::string binary, std::string db, std::vector<std::string> extra_args);
  ~ServerProcess();
  // Starts the server (on the previous port when restarting) and waits until it answers.
  bool Start();
  void Kill();  // SIGKILL, then reap
  void Stop();  // SIGTERM, then reap
  int port() const { return port_; }
  std::string url() const { return "http://127.0.0.1:" + std::to_string(port_); }
  const std::string& log_path() const { return log_; }
  // The log so far: for failure messages, as the file goes with the test's directory.
  std::string Log() const;

 private:
  std::string binary_, db_, log_, port_file_;
  std::vector<std::string> extra_;
  pid_t pid_ = -1;
  int port_ = 0;
};

struct HttpReply {
  int status = -1;  // -1: no connection
  std::string body;
  Json json() const { return Json::parse(body, nullptr, false); }
};

HttpReply HttpGet(const std::string& url, const std::string& path);
HttpReply HttpSend(const std::string& method, const std::string& url, const std::string& path,
                   const std::string& body, const std::string& token);

// The value of the sample whose line starts with `series` ("name{labels} ")
// in a /metrics reply; NaN when there is none.
double MetricValue(const std::string& exposition, const std::string& series);

// The perseus binary the tests drive (PERSEUS_CLI_PATH from CMake).
std::string PerseusBinary();
// `name` under $TEST_TMPDIR, else $TMPDIR, else /tmp, made unique by the pid:
// for the benchmarks (bench/soak_bench.cc), which remove what they write. Tests
// put their files in a ScopedTempDir (common/temp_dir_for_test.h) instead.
std::string TempPath(const std::string& name);
// Writes `token` to `path` (mode 0600) for --token-file and returns `path`.
std::string TokenFile(const std::string& path, const std::string& token);

}  // namespace perseus::e2e

namespace perseus::e2e {

// Polls `done` every 20 ms until it holds or `timeout_s` pass.
bool WaitUntil(const std::function<bool()>& done, double timeout_s);

}  // namespace perseus::e2e
