// The web dashboard: its page at / and its script and style at
// /dashboard/{file}, from the bytes embedded at build time (dashboard_files.h).
// The files hold no job data: the page reads the JSON API with fetch().
// A strict Content-Security-Policy lets the page run only its own script and
// connect only to this server, and no other site may frame it.
#include <string_view>

#include "runtime/server/dashboard_files.h"
#include "runtime/server/http_util.h"

namespace perseus::server {

namespace {

constexpr char kContentSecurityPolicy[] =
    "default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; img-src 'self'; "
    "base-uri 'none'; form-action 'none'; frame-ancestors 'none'";

const char* ContentTypeOf(std::string_view name) {
  if (name.ends_with(".html")) return "text/html; charset=utf-8";
  if (name.ends_with(".js")) return "text/javascript; charset=utf-8";
  if (name.ends_with(".css")) return "text/css; charset=utf-8";
  return "application/octet-stream";
}

const EmbeddedFile* FindFile(std::string_view name) {
  for (const EmbeddedFile& f : DashboardFiles()) {
    if (name == f.name) return &f;
  }
  return nullptr;
}

void SendFile(httplib::Response& res, const std::string& name) {
  const EmbeddedFile* file = FindFile(name);
  if (file == nullptr) {
    return SendJson(res, 404, ErrorBody("not_found", "no dashboard file '" + name.substr(0, 100) + "'"));
  }
  res.status = 200;
  res.set_content(reinterpret_cast<const char*>(file->data), file->size, ContentTypeOf(name));
  res.set_header("Content-Security-Policy", kContentSecurityPolicy);
  res.set_header("X-Content-Type-Options", "nosniff");
  res.set_header("Referrer-Policy", "no-referrer");
  res.set_header("Cache-Control", "no-cache");  // a new server binary may bring new files
}

}  // namespace

void AddDashboardRoutes(httplib::Server& server) {
  server.Get("/", [](const httplib::Request&, httplib::Response& res) { SendFile(res, "index.html"); });
  server.Get(R"(/dashboard/([^/]+))",
             [](const httplib::Request& req, httplib::Response& res) { SendFile(res, req.matches[1]); });
}

}  // namespace perseus::server
