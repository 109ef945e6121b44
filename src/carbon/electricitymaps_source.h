// The ElectricityMaps carbon-intensity API as an intensity source.
//
// GET <base_url>/v3/carbon-intensity/latest?zone=Z  -> {"zone", "carbonIntensity", "datetime", ...}
// GET <base_url>/v3/carbon-intensity/history?zone=Z -> {"zone", "history": [{"carbonIntensity", "datetime", ...}]}
// with the token in the `auth-token` header. Network and parse failures fall
// back to the last known value (logged, never thrown); before any success the
// configured fallback value is used. Thread safety: not thread-safe.
#pragma once

#include <optional>
#include <string>

#include "carbon/intensity_source.h"
#include "carbon/intensity_trace.h"

namespace perseus::carbon {

struct ElectricityMapsConfig {
  std::string base_url = "https://api.electricitymap.org";  // scheme://host[:port], no trailing path
  std::string zone;                                          // e.g. "US-CAL-CISO"
  std::string token;                                         // sent as `auth-token`; empty: not sent
  double timeout_s = 5;
  double fallback_carbon_g_per_kwh = 400;                    // used before any successful fetch
};

// OK for a zone key ElectricityMaps could know ("US-CAL-CISO", "DE", "DK-DK1"):
// 1 to 64 letters, digits, '-' or '_'. Else InvalidArgument "expected a zone
// key ..., got ..." for the caller to prefix with the flag or field: the key
// goes into the request's query string, so '&', '#', '/' or a space would
// change the request.
Status CheckElectricityMapsZone(const std::string& zone);

// Parses a `latest` response. `source` names the input in errors.
Result<IntensityReading> ParseElectricityMapsLatest(const std::string& json_text, const std::string& source);
// Parses a `history` response into an hourly trace.
Result<IntensityTrace> ParseElectricityMapsHistory(const std::string& json_text, const std::string& source);

class ElectricityMapsSource : public IntensitySource {
 public:
  ElectricityMapsSource(ElectricityMapsConfig config, LogFn log);
  // The latest value, or the last known one (stale) when the request fails.
  IntensityReading Current(int64_t now_unix_s) override;
  // The last 24 hours, or the error (the caller decides what to fall back to).
  Result<IntensityTrace> FetchHistory();
  // FetchHistory's hours before the one containing `now_unix_s` (HistoryWithoutLookAhead);
  // nothing when the request fails (logged).
  std::vector<IntensityReading> History(int64_t now_unix_s, int max_hours) override;

 private:
  Result<std::string> Get(const std::string& endpoint);
  ElectricityMapsConfig config_;
  LogFn log_;
  std::optional<IntensityReading> last_;
};

}  // namespace perseus::carbon
