// ServerApi: the rank's side of the perseus HTTP API (docs/http_api.md).
//
// Every call has short timeouts (1 s to connect, 5 s for each read or write,
// kReplyDeadlineS for a whole reply however slowly it trickles) and a bounded
// reply (kMaxReplyBytes), and returns kUnavailable when the server cannot be
// reached or answers too slowly, so callers can retry;
// HTTP errors come back with the server's message. Only the client's
// background thread uses it, never a training hook.
// Thread safety: not thread-safe; one instance per thread.
#pragma once

#include <memory>
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "perseus/status.h"
#include "runtime/protocol/rank_plan.h"

namespace httplib {
class Client;
enum class Error;
}

namespace perseus::client {

// The plan a rank runs, as the protocol defines it (runtime/protocol/rank_plan.h).
using protocol::ParseRankPlan;
using protocol::PlanKind;
using protocol::PlanKindName;
using protocol::PlanStep;
using protocol::PlanWindow;
using protocol::RankPlan;

struct ServerAddress {
  std::string url;    // "http://127.0.0.1:7787" or "https://perseus.example.org:7787"
  std::string token;  // empty: $PERSEUS_TOKEN, else no Authorization header
  // https: the PEM CA bundle the server's certificate must chain to; empty:
  // $PERSEUS_CA_CERT, else the system's trust store. Always verified.
  std::string ca_cert_path = {};
};

// Ok when `address` can make a client: its URL is one cpp-httplib takes
// (CheckHttpUrl; any other scheme would throw), its CA bundle, when given,
// is a file, and its token (or $PERSEUS_TOKEN) has no control character: a
// line break would be sent as raw header text (another header, injected) and
// a file's trailing newline would otherwise fail as "Authorization missing".
// Every caller checks here first: `url_what` and `ca_what` name where the
// two came from in errors ("--server", "--ca-cert").
Status CheckServerAddress(const ServerAddress& address, const std::string& url_what, const std::string& ca_what);

class ServerApi {
 public:
  static constexpr size_t kMaxReplyBytes = 32 << 20;  // the largest plan of a 32 x 512 x 2 job is ~0.2 MB
  static constexpr double kReplyDeadlineS = 10;

  explicit ServerApi(ServerAddress address);
  ~ServerApi();

  // POSTs `body` to `path`; returns the reply body. 4xx/5xx -> error with the
  // server's message (409 -> kUnavailable "conflict: ...").
  Result<nlohmann::json> Post(const std::string& path, const nlohmann::json& body);
  // The rank's plan if its version differs from `known_version`.
  Result<std::optional<RankPlan>> FetchPlan(const std::string& job, int rank, int64_t known_version);
  Result<nlohmann::json> Get(const std::string& path);
  Result<nlohmann::json> Delete(const std::string& path);
  Result<nlohmann::json> Put(const std::string& path, const nlohmann::json& body);
  // True when the last request got an HTTP reply (even an error).
  bool reached_server() const { return reached_; }

 private:
  Result<std::string> Check(const std::string& what, int http_status, const std::string& body);
  // Why no reply came, with the certificate problem spelled out for TLS errors.
  std::string TransportError(const std::string& what, httplib::Error error) const;
  // One request; the reply body, or kUnavailable naming why none came.
  Result<std::string> Send(const std::string& method, const std::string& path, const std::string* body);
  // Send with a JSON body (nullptr: none) and a JSON reply.
  Result<nlohmann::json> SendJson(const std::string& method, const std::string& path, const nlohmann::json* body);
  ServerAddress address_;
  std::unique_ptr<httplib::Client> http_;
  bool reached_ = false;
};

}  // namespace perseus::client
