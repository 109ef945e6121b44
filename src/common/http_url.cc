// Server URL checks (see the header).
#include "common/http_url.h"

#include "common/strings.h"

namespace perseus {

Status CheckHttpUrl(const std::string& url, const std::string& what) {
  const std::string shown = "'" + url.substr(0, 200) + "'";
  std::string rest = url;
  const size_t scheme_end = url.find("://");
  if (scheme_end != std::string::npos) {
    const std::string scheme = ToLower(url.substr(0, scheme_end));
    if (scheme != "http" && scheme != "https") {
      return Status::InvalidArgument(what + ": unsupported URL scheme '" + url.substr(0, scheme_end) + "' in " + shown +
                                     " (expected http:// or https://)");
    }
    rest = url.substr(scheme_end + 3);
  }
  if (rest.empty() || rest[0] == '/' || rest[0] == ':') {
    return Status::InvalidArgument(what + ": no host in " + shown + " (expected e.g. http://127.0.0.1:7787)");
  }
  return Status::Ok();
}

}  // namespace perseus
