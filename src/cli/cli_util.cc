// Shared CLI helpers.
#include "cli/cli_util.h"

#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <iostream>
#include <memory>

#include "common/file_util.h"
#include "common/http_url.h"

namespace perseus::cli {

int ReportError(const Status& status) {
  std::cerr << "perseus: error: " << status.message() << std::endl;
  return 1;
}

Status CheckOutDir(const std::string& dir) {
  namespace fs = std::filesystem;
  if (dir.empty()) return Status::InvalidArgument("--out: expected a folder, got an empty path");
  std::string path = dir;
  while (path.size() > 1 && path.back() == '/') path.pop_back();
  std::error_code ec;
  if (fs::is_symlink(fs::symlink_status(path, ec)) && !fs::exists(path, ec)) {
    return Status::IoError("--out " + dir + ": a symbolic link to " + fs::read_symlink(path, ec).string() +
                           ", which does not exist");
  }
  if (fs::exists(path, ec)) {
    if (!fs::is_directory(path, ec)) return Status::IoError("--out " + dir + ": not a folder");
    return Status::Ok();
  }
  // Missing: the nearest part that exists must be a folder, to make it in.
  for (fs::path up = fs::path(path).parent_path(); !up.empty(); up = up.parent_path()) {
    if (fs::is_symlink(fs::symlink_status(up, ec)) && !fs::exists(up, ec)) {
      return Status::IoError("--out " + dir + ": " + up.string() + " is a symbolic link to " +
                             fs::read_symlink(up, ec).string() + ", which does not exist");
    }
    if (fs::exists(up, ec)) {
      if (!fs::is_directory(up, ec)) return Status::IoError("--out " + dir + ": " + up.string() + " is not a folder");
      break;
    }
    if (up == up.parent_path()) break;
  }
  return Status::Ok();
}

Status WriteOutputs(const std::string& dir, const std::vector<OutputFile>& files) {
  PERSEUS_RETURN_IF_ERROR(CheckOutDir(dir));
  std::error_code ec;
  PERSEUS_RETURN_IF_ERROR(MakeDirs(dir));
  const std::string suffix = ".partial." + std::to_string(::getpid());
  std::vector<std::string> written;
  auto cleanup = [&] {
    for (const std::string& p : written) std::remove((p + suffix).c_str());
  };
  for (const auto& [name, write] : files) {
    std::string path = dir + "/" + name;
    std::filesystem::create_directories(std::filesystem::path(path).parent_path(), ec);
    Status st = WriteFileAtomic(path + suffix, write, path);
    if (!st.ok()) {
      cleanup();
      return st;
    }
    written.push_back(path);
  }
  // Every file is written before any replaces its old version; a name taken
  // by a folder would fail its rename halfway through, leaving new files
  // beside old ones: refused first.
  for (const std::string& p : written) {
    std::error_code ec;
    if (std::filesystem::is_directory(p, ec)) {
      cleanup();
      return Status::IoError(p + ": is a folder; nothing in " + dir + " was replaced");
    }
  }
  for (const std::string& p : written) {
    if (std::rename((p + suffix).c_str(), p.c_str()) != 0) {
      std::string err = std::strerror(errno);
      cleanup();
      return Status::IoError(p + ": " + err);
    }
  }
  return Status::Ok();
}

Result<std::string> ReadToken(const std::string& token_file, const std::string& flag) {
  if (token_file.empty()) {
    const char* env = std::getenv("PERSEUS_TOKEN");
    return std::string(env ? env : "");
  }
  Result<std::string> text = ReadFile(token_file);
  if (!text.ok()) return text.status();
  std::string token = *text;
  while (!token.empty() && (token.back() == '\n' || token.back() == '\r' || token.back() == ' ')) token.pop_back();
  if (token.empty()) return Status::InvalidArgument(flag + " " + token_file + ": empty");
  PERSEUS_RETURN_IF_ERROR(CheckHeaderValue(token, flag + " " + token_file));
  return token;
}

OutputFile TextOutput(std::string name, std::string contents) {
  auto text = std::make_shared<const std::string>(std::move(contents));
  return {std::move(name), [text](std::ostream& out) {
            out.write(text->data(), static_cast<std::streamsize>(text->size()));
          }};
}

Status WriteOutputs(const std::string& dir, const std::vector<std::pair<std::string, std::string>>& files) {
  std::vector<OutputFile> outputs;
  for (const auto& [name, contents] : files) outputs.push_back(TextOutput(name, contents));
  return WriteOutputs(dir, outputs);
}

}  // namespace perseus::cli
