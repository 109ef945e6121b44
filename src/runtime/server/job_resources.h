// What a job spec may make the server read or fetch on its behalf: the files
// it names (`carbon.trace_path`, `power_cap_schedule`) and a carbon source's
// `carbon.base_url`. Without limits any caller who may register a job could
// have the server read any file it can read, or fetch any URL (a confused
// deputy), so `perseus serve` sets them (docs/http_api.md, --job-files):
//
//   * `file_dirs` nullopt: any file (a server with a token: its holders are
//     the operators); otherwise only files whose real path (symbolic links
//     and ".." resolved) lies under one of these folders, none when empty.
//   * `any_url` false: only the source's default base URL.
//
// A refusal names the field and never says whether the file exists.
// Thread safety: pure functions.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "perseus/status.h"

namespace perseus::server {

struct JobResourcePolicy {
  std::optional<std::vector<std::string>> file_dirs;  // real paths of folders
  bool any_url = true;
};

// Ok when `path` (the value of `field`) may be read under `policy`.
Status CheckJobFile(const JobResourcePolicy& policy, const std::string& field, const std::string& path);
// Ok when `url` may be fetched: any under `any_url`, else only `default_url`.
Status CheckJobUrl(const JobResourcePolicy& policy, const std::string& field, const std::string& url,
                   const std::string& default_url);
// The real paths of `dirs` (for JobResourcePolicy::file_dirs), or an error
// naming the first that is not a folder.
Result<std::vector<std::string>> RealFolders(const std::vector<std::string>& dirs);

}  // namespace perseus::server
