// JsonLog: structured logs, one JSON object per line.
//
// {"ts":"2025-01-01T12:00:00.123Z","level":"info","event":"job_registered","job":"gpt3",...}
// Lines below the log's level are not written (perseus serve --log-level).
// Thread safety: thread-safe; each line is written with one fwrite.
#pragma once

#include <cstdio>
#include <mutex>
#include <string>

#include "common/json_fields.h"

namespace perseus::server {

enum class LogLevel { kDebug, kInfo, kWarn, kError };

// "debug", "info", "warn" or "error".
Result<LogLevel> ParseLogLevel(const std::string& name);

class JsonLog {
 public:
  // Writes to `out` (not owned); nullptr discards everything.
  explicit JsonLog(std::FILE* out, LogLevel level = LogLevel::kInfo) : out_(out), level_(level) {}
  void Debug(const std::string& event, Json fields = Json::object()) { Write(LogLevel::kDebug, event, std::move(fields)); }
  void Info(const std::string& event, Json fields = Json::object()) { Write(LogLevel::kInfo, event, std::move(fields)); }
  void Warn(const std::string& event, Json fields = Json::object()) { Write(LogLevel::kWarn, event, std::move(fields)); }
  void Error(const std::string& event, Json fields = Json::object()) { Write(LogLevel::kError, event, std::move(fields)); }
  void Write(LogLevel level, const std::string& event, Json fields);
  bool Enabled(LogLevel level) const { return level >= level_; }

 private:
  std::mutex mu_;
  std::FILE* out_;
  LogLevel level_;
};

}  // namespace perseus::server
