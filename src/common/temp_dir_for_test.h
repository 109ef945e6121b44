// ScopedTempDir: where every C++ test puts the files it creates. A fresh
// directory under testing::TempDir() ($TEST_TMPDIR, else $TMPDIR, else /tmp),
// removed with everything in it when the object goes, also when the test
// fails (an ASSERT returns through the destructor) or a server under test was
// killed: a SQLite database with its -wal, -shm and .lock siblings, a
// server's .port and .log, a browser profile all go with it. Declare it
// before what writes into it (a store, a server process) so that it is
// removed after they stop. scripts/test.sh fails when the suite leaves
// anything in its temporary directory. Test-only: includes gtest.
#pragma once

#include <gtest/gtest.h>
#include <stdlib.h>
#include <sys/mount.h>

#include <cerrno>
#include <filesystem>
#include <fstream>
#include <string>
#include <system_error>
#include <vector>

namespace perseus {

class ScopedTempDir {
 public:
  ScopedTempDir() {
    std::string tmpl = ::testing::TempDir() + "perseus_XXXXXX";
    if (mkdtemp(tmpl.data()) == nullptr) throw std::system_error(errno, std::generic_category(), tmpl);
    path_ = tmpl;
  }
  ~ScopedTempDir() {
    for (const std::string& dir : mounts_) ::umount2(dir.c_str(), MNT_DETACH);
    std::error_code ignored;
    std::filesystem::remove_all(path_, ignored);
  }
  ScopedTempDir(const ScopedTempDir&) = delete;
  ScopedTempDir& operator=(const ScopedTempDir&) = delete;

  const std::string& path() const { return path_; }
  // `name` in the directory (nothing is created).
  std::string Path(const std::string& name) const { return path_ + "/" + name; }
  // Writes `text` to `name` in the directory and returns its path.
  std::string Write(const std::string& name, const std::string& text) const {
    const std::string path = Path(name);
    std::ofstream(path) << text;
    return path;
  }
  // Mounts a tmpfs with `options` ("size=4m") at `name` in the directory,
  // unmounted before the directory goes; false where mounting is not allowed
  // (it needs CAP_SYS_ADMIN).
  bool MountTmpfs(const std::string& name, const std::string& options) {
    const std::string dir = Path(name);
    std::error_code ignored;
    std::filesystem::create_directory(dir, ignored);
    if (::mount("tmpfs", dir.c_str(), "tmpfs", 0, options.c_str()) != 0) return false;
    mounts_.push_back(dir);
    return true;
  }

 private:
  std::string path_;
  std::vector<std::string> mounts_;
};

}  // namespace perseus
