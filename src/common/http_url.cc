// Server URL checks (see the header).
#include "common/http_url.h"

#include <algorithm>
#include <string>

#include "common/strings.h"

namespace perseus {

Status CheckHttpUrl(const std::string& url, const std::string& what) {
  const std::string shown = "'" + ShownText(url, 200) + "'";
  const std::string example = " (expected e.g. http://127.0.0.1:7787)";
  std::string rest = url;
  const size_t scheme_end = url.find("://");
  if (scheme_end != std::string::npos) {
    // cpp-httplib reads the scheme in lower case only.
    const std::string scheme = url.substr(0, scheme_end);
    if (scheme != "http" && scheme != "https") {
      return Status::InvalidArgument(what + ": unsupported URL scheme '" + scheme + "' in " + shown +
                                     " (expected http:// or https://, in lower case)");
    }
    rest = url.substr(scheme_end + 3);
  }
  size_t host_end = 0;
  if (!rest.empty() && rest[0] == '[') {  // an IPv6 address: [::1]
    host_end = rest.find(']');
    // cpp-httplib 0.11 reads only digits and colons between the brackets.
    if (host_end == std::string::npos || host_end == 1 || rest.find_first_not_of("0123456789:", 1) != host_end) {
      return Status::InvalidArgument(what + ": an IPv6 address in brackets may hold only digits and colons here "
                                            "(cpp-httplib 0.11; give a host name instead) in " + shown);
    }
    ++host_end;
  } else {
    host_end = std::min(rest.find_first_of(":/?#@ \t"), rest.size());
  }
  if (host_end == 0) return Status::InvalidArgument(what + ": no host in " + shown + example);
  size_t end = host_end;
  if (end < rest.size() && rest[end] == ':') {
    const size_t digits_end = std::min(rest.find_first_not_of("0123456789", end + 1), rest.size());
    const std::string digits = rest.substr(end + 1, digits_end - end - 1);
    const long port = digits.empty() || digits.size() > 5 ? 0 : std::stol(digits);
    if (port < 1 || port > 65535 || (digits_end < rest.size() && rest[digits_end] != '/')) {
      return Status::InvalidArgument(what + ": bad port in " + shown + " (expected 1 to 65535)");
    }
    end = digits_end;
  }
  if (end == rest.size()) return Status::Ok();
  if (rest.substr(end) == "/") {
    return Status::InvalidArgument(what + ": " + shown + " ends in '/'; give the address alone" + example);
  }
  if (rest[end] == '@') return Status::InvalidArgument(what + ": user names in URLs are not supported: " + shown);
  return Status::InvalidArgument(what + ": " + shown + " has a path, query or fragment; give the address alone" +
                                 example);
}

Status CheckHeaderValue(const std::string& value, const std::string& what) {
  for (size_t i = 0; i < value.size(); ++i) {
    const unsigned char c = static_cast<unsigned char>(value[i]);
    if (c < 0x20 || c == 0x7f) {
      const bool line_break = c == '\n' || c == '\r';
      return Status::InvalidArgument(
          what + ": " + (line_break ? "a line break" : "a control character") + " at character " + std::to_string(i + 1) +
          " of " + std::to_string(value.size()) +
          (line_break && i + 2 >= value.size() ? " (a file's trailing newline? strip it)" : "") +
          "; a token is sent as one header line");
    }
  }
  return Status::Ok();
}

}  // namespace perseus
