// Helpers for the `perseus emulate` end-to-end tests: run the real binary
// (PERSEUS_CLI_PATH) with arguments, capturing its exit code, stdout and
// stderr; whole-file reads. Temporary folders: ScopedTempDir
// (common/temp_dir_for_test.h).
#pragma once

#include <string>
#include <vector>

namespace perseus::e2e {

struct CommandResult {
  int exit_code = -1;
  std::string out, err;
};

// Runs `perseus args...` and waits for it.
CommandResult RunPerseus(const std::vector<std::string>& args);

// The file's contents, or "" if it cannot be read.
std::string ReadWholeFile(const std::string& path);

// The shared data's sosp24 folder, or "" when it is absent.
std::string Sosp24Dir();

}  // namespace perseus::e2e
