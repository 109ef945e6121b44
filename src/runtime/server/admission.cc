#include "runtime/server/admission.h"

#include "common/strings.h"

namespace perseus::server {

namespace {

bool ConstantTimeEquals(const std::string& a, const std::string& b) {
  if (a.size() != b.size()) return false;
  unsigned char diff = 0;
  for (size_t i = 0; i < a.size(); ++i) diff |= static_cast<unsigned char>(a[i] ^ b[i]);
  return diff == 0;
}

// "host:port", "[::1]:port" or "host" -> the lower-case host.
std::string HostName(const std::string& authority) {
  const std::string a = ToLower(Trim(authority));
  if (!a.empty() && a.front() == '[') {
    const size_t end = a.find(']');
    return end == std::string::npos ? a : a.substr(0, end + 1);
  }
  return a.substr(0, a.find(':'));
}

// "http://host:port" -> "host:port"; "" when not an http(s) origin.
std::string OriginAuthority(const std::string& origin) {
  const std::string o = ToLower(Trim(origin));
  for (const char* scheme : {"http://", "https://"}) {
    if (o.rfind(scheme, 0) == 0) return o.substr(std::string(scheme).size());
  }
  return "";
}

std::optional<Refusal> CheckHost(const AdmissionRequest& r, const AdmissionPolicy& p) {
  const std::string host = HostName(r.host);
  const bool listed = std::any_of(p.allowed_hosts.begin(), p.allowed_hosts.end(),
                                  [&](const std::string& h) { return ToLower(h) == host; });
  if (listed || host.empty()) return std::nullopt;  // browsers always send Host
  if (p.loopback_only ? (host == "localhost" || host == "127.0.0.1" || host == "[::1]") : p.allowed_hosts.empty()) {
    return std::nullopt;
  }
  return Refusal{403, "forbidden",
                 "header 'Host': '" + r.host.substr(0, 100) +
                     "' is not a name of this server (a guard against DNS rebinding; add it with --allowed-host)"};
}

std::optional<Refusal> CheckToken(const AdmissionRequest& r, const AdmissionPolicy& p) {
  if (p.token.empty()) return std::nullopt;
  const std::string got = Trim(r.authorization);
  const size_t space = got.find(' ');
  if (got.empty()) {
    return Refusal{401, "unauthorized", "header 'Authorization': missing (expected 'Bearer <token>')"};
  }
  if (space == std::string::npos || ToLower(got.substr(0, space)) != "bearer") {
    return Refusal{401, "unauthorized", "header 'Authorization': expected the 'Bearer' scheme"};
  }
  if (!ConstantTimeEquals(Trim(got.substr(space + 1)), p.token)) {
    return Refusal{401, "unauthorized", "header 'Authorization': wrong token"};
  }
  return std::nullopt;
}

// The declared body length, or the refusal of a header that declares none or two.
struct DeclaredLength {
  std::optional<unsigned long long> bytes;
  std::optional<Refusal> refused;
};

DeclaredLength ParseContentLength(const std::vector<std::string>& values) {
  DeclaredLength d;
  for (const std::string& raw : values) {
    const std::string v = Trim(raw);
    if (v.empty() || v.size() > 18 || v.find_first_not_of("0123456789") != std::string::npos) {
      d.refused = Refusal{400, "bad_request",
                          "header 'Content-Length': expected a number of bytes, got '" + raw.substr(0, 40) + "'"};
      return d;
    }
    const unsigned long long bytes = std::stoull(v);
    if (d.bytes && *d.bytes != bytes) {
      d.refused = Refusal{400, "bad_request", "header 'Content-Length': sent twice with different values (" +
                                                  std::to_string(*d.bytes) + " and " + std::to_string(bytes) + ")"};
      return d;
    }
    d.bytes = bytes;
  }
  return d;
}

std::optional<Refusal> CheckBody(const AdmissionRequest& r, const AdmissionPolicy& p,
                                 std::optional<unsigned long long> content_length) {
  if (ToLower(r.transfer_encoding).find("chunked") != std::string::npos) {
    return Refusal{411, "length_required",
                   "header 'Transfer-Encoding': chunked bodies are not accepted; send a Content-Length"};
  }
  if (content_length && *content_length > p.max_body_bytes) {
    return Refusal{413, "payload_too_large", "body: larger than " + std::to_string(p.max_body_bytes) + " bytes"};
  }
  if (r.method == "POST" || r.method == "PUT" || r.method == "PATCH") {
    const std::string type = ToLower(Trim(r.content_type.substr(0, r.content_type.find(';'))));
    if (type != "application/json") {
      return Refusal{415, "unsupported_media_type",
                     "header 'Content-Type': expected 'application/json', got '" + r.content_type.substr(0, 100) + "'"};
    }
  }
  return std::nullopt;
}

// The dashboard's page and files hold no data, and probes need /healthz.
bool IsOpenToAll(const std::string& path) {
  return path == "/" || path.starts_with("/dashboard/") || path == "/healthz";
}

}  // namespace

bool IsLoopbackAddress(const std::string& host) {
  return host == "localhost" || host == "::1" || host == "[::1]" || host.rfind("127.", 0) == 0;
}

std::optional<Refusal> Admit(const AdmissionRequest& r, const AdmissionPolicy& p) {
  if (std::optional<Refusal> refused = CheckHost(r, p)) return refused;
  const DeclaredLength length = ParseContentLength(r.content_lengths);
  if (length.refused) return length.refused;
  if (r.method == "GET" || r.method == "HEAD") {
    // cpp-httplib does not read a body it does not expect: left on the
    // connection, it would be read as the next request (request smuggling).
    const bool declares_bytes = length.bytes && *length.bytes > 0;
    if (declares_bytes || !Trim(r.transfer_encoding).empty()) {
      return Refusal{400, "bad_request", "a " + r.method + " request has no body (header '" +
                                             (declares_bytes ? "Content-Length" : "Transfer-Encoding") + "')"};
    }
    return p.reads_need_token && !IsOpenToAll(r.path) ? CheckToken(r, p) : std::nullopt;
  }
  if (std::optional<Refusal> refused = CheckToken(r, p)) return refused;
  // "null" (a sandboxed page) has no authority and never matches.
  if (!r.origin.empty() && OriginAuthority(r.origin) != ToLower(Trim(r.host))) {
    return Refusal{403, "forbidden",
                   "header 'Origin': '" + r.origin.substr(0, 100) + "' is another site (cross-origin requests are refused)"};
  }
  return CheckBody(r, p, length.bytes);
}

}  // namespace perseus::server
