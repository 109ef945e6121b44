#include "runtime/server/json_log.h"

#include <chrono>
#include <ctime>

namespace perseus::server {

namespace {

std::string UtcNow() {
  auto now = std::chrono::system_clock::now();
  std::time_t secs = std::chrono::system_clock::to_time_t(now);
  int ms = static_cast<int>(
      std::chrono::duration_cast<std::chrono::milliseconds>(now.time_since_epoch()).count() % 1000);
  std::tm tm{};
  gmtime_r(&secs, &tm);
  char buf[96];
  std::snprintf(buf, sizeof(buf), "%04d-%02d-%02dT%02d:%02d:%02d.%03dZ", tm.tm_year + 1900, tm.tm_mon + 1,
                tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec, ms);
  return buf;
}

const char* LevelName(LogLevel level) {
  switch (level) {
    case LogLevel::kDebug: return "debug";
    case LogLevel::kInfo: return "info";
    case LogLevel::kWarn: return "warn";
    case LogLevel::kError: return "error";
  }
  return "info";
}

}  // namespace

Result<LogLevel> ParseLogLevel(const std::string& name) {
  for (LogLevel level : {LogLevel::kDebug, LogLevel::kInfo, LogLevel::kWarn, LogLevel::kError}) {
    if (name == LevelName(level)) return level;
  }
  return Status::InvalidArgument("log level: expected debug, info, warn or error, got '" + name + "'");
}

void JsonLog::Write(LogLevel level, const std::string& event, Json fields) {
  if (out_ == nullptr || !Enabled(level)) return;
  Json line = {{"ts", UtcNow()}, {"level", LevelName(level)}, {"event", event}};
  if (fields.is_object()) line.update(fields);
  std::string text = line.dump(-1, ' ', false, Json::error_handler_t::replace) + "\n";
  std::lock_guard<std::mutex> lock(mu_);
  std::fwrite(text.data(), 1, text.size(), out_);
  std::fflush(out_);
}

}  // namespace perseus::server
