// Shared CLI helpers.
#include "cli/cli_util.h"

#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <iostream>

#include "common/file_util.h"

namespace perseus::cli {

int ReportError(const Status& status) {
  std::cerr << "perseus: error: " << status.message() << std::endl;
  return 1;
}

Status WriteOutputs(const std::string& dir, const std::vector<std::pair<std::string, std::string>>& files) {
  PERSEUS_RETURN_IF_ERROR(MakeDirs(dir));
  const std::string suffix = ".partial." + std::to_string(::getpid());
  std::vector<std::string> written;
  auto cleanup = [&] {
    for (const std::string& p : written) std::remove((p + suffix).c_str());
  };
  for (const auto& [name, contents] : files) {
    std::string path = dir + "/" + name;
    std::error_code ec;
    std::filesystem::create_directories(std::filesystem::path(path).parent_path(), ec);
    Status st = WriteFileAtomic(path + suffix, contents);
    if (!st.ok()) {
      cleanup();
      return st;
    }
    written.push_back(path);
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

}  // namespace perseus::cli
