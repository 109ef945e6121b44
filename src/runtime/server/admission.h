// Admission: what every request must satisfy before the server reads its
// body or routes it, checked in one place for every endpoint.
//
//   * Host (DNS rebinding): when the server listens on a loopback address,
//     the Host header must name localhost, 127.0.0.1 or [::1], or a host in
//     `allowed_hosts`; otherwise only hosts in `allowed_hosts` when it is set.
//   * Reads (GET, HEAD) need the bearer token too when `reads_need_token`
//     (serve --token-for-reads), except the dashboard's files (/ and
//     /dashboard/*, which hold no data) and /healthz. A read carries no
//     body (a Content-Length above 0 or a Transfer-Encoding is refused: the
//     HTTP library would read the body as the next request).
//   * Mutating methods (all but GET and HEAD):
//       - `Authorization: Bearer <token>` when a token is set (the scheme is
//         case-insensitive, RFC 9110 11.1), checked in constant time;
//       - `Content-Type: application/json` on POST and PUT, so no web page
//         can send a "simple" cross-site request (CSRF);
//       - an `Origin` header, when present, that names the Host itself;
//       - a declared Content-Length of at most `max_body_bytes`; chunked
//         bodies are refused (their length is unknown until read).
//   * Any method: Content-Length, when sent, is one decimal number; sent
//     twice it must repeat the same value (RFC 9110 8.6: two different
//     lengths let a proxy and this server split the stream differently).
// Thread safety: pure functions.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "common/json_fields.h"

namespace perseus::server {

struct AdmissionPolicy {
  std::string token;                       // empty: no authentication
  size_t max_body_bytes = 1 << 20;
  bool loopback_only = true;               // the server listens on a loopback address
  std::vector<std::string> allowed_hosts;  // extra Host names (without port) accepted
  bool reads_need_token = false;           // with a token: reads need it too
};

struct AdmissionRequest {
  std::string method;
  std::string host;            // Host header ("" when absent)
  std::string authorization;   // Authorization header
  std::string content_type;
  std::string origin;
  std::string transfer_encoding;
  std::vector<std::string> content_lengths;  // every Content-Length header, as sent
  std::string path;  // without the query
};

struct Refusal {
  int http_status;
  std::string code;     // error code in the JSON body
  std::string message;  // names the header
};

// Why the request is refused, or nullopt to admit it.
std::optional<Refusal> Admit(const AdmissionRequest& request, const AdmissionPolicy& policy);

// True for addresses that only this machine can reach ("127.0.0.1",
// "::1", "localhost").
bool IsLoopbackAddress(const std::string& host);

}  // namespace perseus::server
