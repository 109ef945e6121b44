// End-to-end test helpers.
#include "emulate_test_util.h"

#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "common/temp_dir_for_test.h"

namespace perseus::e2e {

CommandResult RunPerseus(const std::vector<std::string>& args) {
  ScopedTempDir dir;
  const std::string out_path = dir.Path("stdout"), err_path = dir.Path("stderr");
  std::vector<std::string> argv_s{PERSEUS_CLI_PATH};
  argv_s.insert(argv_s.end(), args.begin(), args.end());
  std::vector<char*> argv;
  for (std::string& a : argv_s) argv.push_back(a.data());
  argv.push_back(nullptr);
  CommandResult r;
  pid_t pid = fork();
  if (pid == 0) {
    int out = open(out_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    int err = open(err_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    dup2(out, 1);
    dup2(err, 2);
    execv(argv[0], argv.data());
    _exit(127);
  }
  int status = 0;
  waitpid(pid, &status, 0);
  r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  r.out = ReadWholeFile(out_path);
  r.err = ReadWholeFile(err_path);
  return r;
}

std::string ReadWholeFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

std::string Sosp24Dir() {
  std::string dir = std::string(PERSEUS_SHARED_DATA) + "/sosp24";
  return std::filesystem::exists(dir + "/stage_profile") ? dir : "";
}

}  // namespace perseus::e2e
