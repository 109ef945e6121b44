// JsonLog: structured logs, one JSON object per line.
//
// {"ts":"2025-01-01T12:00:00.123Z","level":"info","event":"job_registered","job":"gpt3",...}
// Thread safety: thread-safe; each line is written with one fwrite.
#pragma once

#include <cstdio>
#include <mutex>
#include <string>

#include "runtime/server/json_fields.h"

namespace perseus::server {

class JsonLog {
 public:
  // Writes to `out` (not owned); nullptr discards everything.
  explicit JsonLog(std::FILE* out) : out_(out) {}
  void Info(const std::string& event, Json fields = Json::object()) { Write("info", event, std::move(fields)); }
  void Warn(const std::string& event, Json fields = Json::object()) { Write("warn", event, std::move(fields)); }
  void Error(const std::string& event, Json fields = Json::object()) { Write("error", event, std::move(fields)); }
  void Write(const char* level, const std::string& event, Json fields);

 private:
  std::mutex mu_;
  std::FILE* out_;
};

}  // namespace perseus::server
