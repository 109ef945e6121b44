#include "runtime/server/job_resources.h"

#include <filesystem>
#include <system_error>

#include "common/json_fields.h"

namespace perseus::server {

namespace {

std::optional<std::string> RealPath(const std::string& path) {
  std::error_code ec;
  std::filesystem::path real = std::filesystem::canonical(path, ec);
  if (ec) return std::nullopt;
  return real.string();
}

// The real path `path` names, or would name once created (its folder real):
// a missing file under an allowed folder still gets the loader's own error.
std::optional<std::string> RealTarget(const std::string& path) {
  if (std::optional<std::string> real = RealPath(path)) return real;
  const std::filesystem::path p(path);
  std::optional<std::string> dir = RealPath(p.has_parent_path() ? p.parent_path().string() : ".");
  if (!dir || !p.has_filename() || p.filename() == "." || p.filename() == "..") return std::nullopt;
  return *dir + "/" + p.filename().string();
}

bool IsUnder(const std::string& real, const std::string& dir) {
  if (dir == "/") return true;
  return real.size() > dir.size() && real.compare(0, dir.size(), dir) == 0 && real[dir.size()] == '/';
}

std::string Joined(const std::vector<std::string>& dirs) {
  std::string out;
  for (const std::string& d : dirs) out += (out.empty() ? "" : ", ") + d;
  return out;
}

}  // namespace

Status CheckJobFile(const JobResourcePolicy& policy, const std::string& field, const std::string& path) {
  if (!policy.file_dirs) return Status::Ok();
  const std::vector<std::string>& dirs = *policy.file_dirs;
  if (dirs.empty()) {
    return FieldError(field, "this server reads no files a job names: start it with --job-files DIR (the folder "
                             "to read them from) or with a token (--token-file)");
  }
  if (std::optional<std::string> real = RealTarget(path)) {
    for (const std::string& dir : dirs) {
      if (IsUnder(*real, dir)) return Status::Ok();
    }
  }
  return FieldError(field, "this server reads the files a job names only under " + Joined(dirs) + " (--job-files)");
}

Status CheckJobUrl(const JobResourcePolicy& policy, const std::string& field, const std::string& url,
                   const std::string& default_url) {
  if (policy.any_url || url == default_url) return Status::Ok();
  return FieldError(field, "only a server with a token (--token-file) fetches a URL a job names; without one, " +
                               default_url + " (the default)");
}

Result<std::vector<std::string>> RealFolders(const std::vector<std::string>& dirs) {
  std::vector<std::string> real;
  for (const std::string& dir : dirs) {
    std::error_code ec;
    const std::filesystem::path r = std::filesystem::canonical(dir, ec);
    if (ec) return Status::InvalidArgument(dir + ": " + ec.message());
    if (!std::filesystem::is_directory(r)) return Status::InvalidArgument(dir + ": not a folder");
    real.push_back(r.string());
  }
  return real;
}

}  // namespace perseus::server
