// ElectricityMaps over cpp-httplib; JSON with nlohmann.
#include "carbon/electricitymaps_source.h"

#include <httplib.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <nlohmann/json.hpp>

#include "carbon/iso_time.h"
#include "common/http_error.h"
#include "common/http_url.h"
#include "common/json_fields.h"
#include "common/strings.h"

namespace perseus::carbon {
namespace {

using nlohmann::json;

// One history/latest entry: "carbonIntensity" (number or null) and "datetime".
Result<IntensitySample> ParseEntry(const json& e, const std::string& where) {
  if (!e.is_object()) return Status::InvalidArgument(where + ": expected an object");
  auto ci = e.find("carbonIntensity");
  auto dt = e.find("datetime");
  if (dt == e.end() || !dt->is_string()) return Status::InvalidArgument(where + ": missing string field 'datetime'");
  Result<int64_t> t = ParseIsoUtc(dt->get<std::string>());
  if (!t.ok()) return Status::InvalidArgument(where + ": field 'datetime': " + t.status().message());
  IntensitySample s{*t, std::nan("")};
  if (ci == e.end()) return Status::InvalidArgument(where + ": missing field 'carbonIntensity'");
  if (ci->is_number()) {
    s.carbon_g_per_kwh = ci->get<double>();
    PERSEUS_RETURN_IF_ERROR(CheckCarbonIntensity(s.carbon_g_per_kwh, where + ": field 'carbonIntensity': "));
  } else if (!ci->is_null()) {
    return Status::InvalidArgument(where + ": field 'carbonIntensity': expected a number");
  }
  return s;
}

Result<json> ParseJson(const std::string& text, const std::string& source) {
  json j = json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded()) return Status::InvalidArgument(source + ": not valid JSON");
  return j;
}

}  // namespace

Status CheckElectricityMapsZone(const std::string& zone) {
  constexpr size_t kMaxZoneChars = 64;
  const bool ok = !zone.empty() && zone.size() <= kMaxZoneChars &&
                  std::all_of(zone.begin(), zone.end(), [](unsigned char c) {
                    return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-' ||
                           c == '_';  // ASCII whatever the locale
                  });
  if (ok) return Status::Ok();
  return Status::InvalidArgument("expected a zone key such as \"US-CAL-CISO\" (1 to 64 letters, digits, "
                                 "'-' or '_'), got " + Quote(json(zone)));
}

Result<IntensityReading> ParseElectricityMapsLatest(const std::string& json_text, const std::string& source) {
  Result<json> j = ParseJson(json_text, source);
  if (!j.ok()) return j.status();
  Result<IntensitySample> s = ParseEntry(*j, source);
  if (!s.ok()) return s.status();
  if (std::isnan(s->carbon_g_per_kwh)) return Status::Unavailable(source + ": 'carbonIntensity' is null");
  return IntensityReading{s->carbon_g_per_kwh, s->unix_s, false};
}

Result<IntensityTrace> ParseElectricityMapsHistory(const std::string& json_text, const std::string& source) {
  Result<json> j = ParseJson(json_text, source);
  if (!j.ok()) return j.status();
  auto h = j->find("history");
  if (!j->is_object() || h == j->end() || !h->is_array()) {
    return Status::InvalidArgument(source + ": missing array field 'history'");
  }
  std::vector<IntensitySample> samples;
  std::vector<std::string> where;
  for (size_t i = 0; i < h->size(); ++i) {
    where.push_back(source + ": history[" + std::to_string(i) + "]");
    Result<IntensitySample> s = ParseEntry((*h)[i], where.back());
    if (!s.ok()) return s.status();
    samples.push_back(*s);
  }
  return BuildHourlyTrace(samples, where, source);
}

ElectricityMapsSource::ElectricityMapsSource(ElectricityMapsConfig config, LogFn log)
    : config_(std::move(config)), log_(std::move(log)) {}

Result<std::string> ElectricityMapsSource::Get(const std::string& endpoint) {
  const std::string path = "/v3/carbon-intensity/" + endpoint + "?zone=" + config_.zone;
  const std::string url = config_.base_url + path;
  PERSEUS_RETURN_IF_ERROR(CheckHttpUrl(config_.base_url, "ElectricityMaps base URL"));
  if (Status zone = CheckElectricityMapsZone(config_.zone); !zone.ok()) {
    return Status::InvalidArgument("ElectricityMaps zone: " + zone.message());
  }
  httplib::Client client(config_.base_url);
  if (!client.is_valid()) return Status::InvalidArgument("ElectricityMaps base URL '" + config_.base_url + "' is invalid");
  const auto timeout = std::chrono::milliseconds(static_cast<int64_t>(config_.timeout_s * 1000));
  client.set_connection_timeout(timeout);
  client.set_read_timeout(timeout);
  httplib::Headers headers;
  if (!config_.token.empty()) headers.emplace("auth-token", config_.token);
  // One deadline for the whole reply and a bounded body: a server that
  // trickles bytes, or sends without end, cannot hold the caller.
  constexpr size_t kMaxBodyBytes = 8 << 20;
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  std::string body;
  const char* refused = nullptr;
  httplib::Result res = client.Get(path, headers, [&](const char* data, size_t n) {
    if (body.size() + n > kMaxBodyBytes) {
      refused = "reply larger than 8 MiB";
    } else if (std::chrono::steady_clock::now() > deadline) {
      refused = "reply not complete within the timeout";
    } else {
      body.append(data, n);
      return true;
    }
    return false;
  });
  if (refused != nullptr) return Status::Unavailable("GET " + url + ": " + refused);
  if (!res) return Status::Unavailable("GET " + url + ": " + DescribeHttpError(res.error(), config_.timeout_s));
  if (res->status != 200) {
    return Status::Unavailable("GET " + url + ": HTTP " + std::to_string(res->status) + ": " +
                               ShownText(body, 200));
  }
  return body;
}

IntensityReading ElectricityMapsSource::Current(int64_t now_unix_s) {
  Result<std::string> body = Get("latest");
  Result<IntensityReading> r = body.ok() ? ParseElectricityMapsLatest(*body, config_.base_url + " latest")
                                         : Result<IntensityReading>(body.status());
  if (r.ok()) {
    last_ = *r;
    return *r;
  }
  IntensityReading fallback = last_ ? *last_ : IntensityReading{config_.fallback_carbon_g_per_kwh, now_unix_s, true};
  fallback.stale = true;
  if (log_) {
    char value[64];
    std::snprintf(value, sizeof value, "%.1f gCO2/kWh", fallback.carbon_g_per_kwh);
    log_("carbon: " + r.status().message() + "; using the " + (last_ ? "last known" : "configured fallback") +
         " value " + value);
  }
  return fallback;
}

Result<IntensityTrace> ElectricityMapsSource::FetchHistory() {
  Result<std::string> body = Get("history");
  if (!body.ok()) return body.status();
  return ParseElectricityMapsHistory(*body, config_.base_url + " history");
}

std::vector<IntensityReading> ElectricityMapsSource::History(int64_t now_unix_s, int max_hours) {
  Result<IntensityTrace> trace = FetchHistory();
  if (!trace.ok()) {
    if (log_) log_("carbon: no history to start from: " + trace.status().message() + "; forecasting from the readings alone");
    return {};
  }
  return HistoryWithoutLookAhead(*trace, now_unix_s, max_hours);
}

}  // namespace perseus::carbon
