// ReadFile refuses what could block or never end (a FIFO without a writer,
// /dev/zero) and files over its bound, naming the path; reads the rest.
// WriteFileAtomic replaces a file whole or not at all.
#include "common/file_util.h"

#include <gtest/gtest.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <csignal>
#include <cstring>
#include <string>

#include "common/temp_dir_for_test.h"

namespace perseus {
namespace {

TEST(ReadFile, ReadsARegularFileWithinTheBound) {
  ScopedTempDir tmp;
  const std::string path = tmp.Path("regular");
  ASSERT_TRUE(WriteFileAtomic(path, "hello\n").ok());
  Result<std::string> text = ReadFile(path);
  ASSERT_TRUE(text.ok()) << text.status().ToString();
  EXPECT_EQ(*text, "hello\n");
  Result<std::string> small = ReadFile(path, 3);
  ASSERT_FALSE(small.ok());
  EXPECT_EQ(small.status().message(), path + ": larger than 3 bytes");
}

TEST(ReadFile, RefusesFifosDevicesAndDirectoriesWithoutBlocking) {
  ScopedTempDir tmp;
  const std::string fifo = tmp.Path("fifo");
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  Result<std::string> r = ReadFile(fifo);  // would block forever in open() without a writer
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().message(), fifo + ": not a regular file");
  EXPECT_EQ(ReadFile("/dev/zero").status().message(), "/dev/zero: not a regular file");
  EXPECT_EQ(ReadFile(tmp.path()).status().message(), tmp.path() + ": not a regular file");
  EXPECT_NE(ReadFile("/nonexistent/x").status().message().find("/nonexistent/x: "), std::string::npos);
}

TEST(WriteFileAtomic, StreamsContentsAndLeavesNothingOnAStreamError) {
  ScopedTempDir tmp;
  const std::string path = tmp.Path("streamed");
  ASSERT_TRUE(WriteFileAtomic(path, [](std::ostream& out) { out << "a" << 1 << '\n'; }).ok());
  EXPECT_EQ(*ReadFile(path), "a1\n");
  Status failed = WriteFileAtomic(path, [](std::ostream& out) {
    out << "partial";
    out.setstate(std::ios::badbit);
  });
  EXPECT_EQ(failed.message(), path + ": write failed");
  EXPECT_EQ(*ReadFile(path), "a1\n");  // the old file stays whole
  EXPECT_FALSE(ReadFile(path + ".tmp." + std::to_string(::getpid())).ok());
}

// A full disk named only the file (a review, 2026-11-28). The file size
// limit fails write(2) the same way ENOSPC does, without a full disk.
TEST(WriteFileAtomic, AFailedWriteSaysWhyAndLeavesTheOldFileWhole) {
  ScopedTempDir tmp;
  const std::string path = tmp.Path("big");
  ASSERT_TRUE(WriteFileAtomic(path, "old").ok());
  rlimit before{};
  ASSERT_EQ(::getrlimit(RLIMIT_FSIZE, &before), 0);
  void (*handler)(int) = std::signal(SIGXFSZ, SIG_IGN);
  rlimit small = before;
  small.rlim_cur = 4096;
  ASSERT_EQ(::setrlimit(RLIMIT_FSIZE, &small), 0);
  Status failed = WriteFileAtomic(path, [](std::ostream& out) {
    for (int i = 0; i < 100000; ++i) out << "0123456789";
  });
  ::setrlimit(RLIMIT_FSIZE, &before);
  std::signal(SIGXFSZ, handler);
  EXPECT_EQ(failed.message(), path + ": write failed: " + std::strerror(EFBIG));
  EXPECT_EQ(*ReadFile(path), "old");
  EXPECT_FALSE(ReadFile(path + ".tmp." + std::to_string(::getpid())).ok());
  Status no_dir = WriteFileAtomic(tmp.Path("missing/out.json"), "x");
  EXPECT_EQ(no_dir.message().rfind(tmp.Path("missing/out.json") + ": cannot create ", 0), 0u) << no_dir.message();
  EXPECT_NE(no_dir.message().find("No such file or directory"), std::string::npos) << no_dir.message();
}

TEST(CheckCanCreate, NamesAFolderThatIsMissingOrNotAFolder) {
  ScopedTempDir tmp;
  EXPECT_TRUE(CheckCanCreate(tmp.Path("out.json")).ok());
  EXPECT_TRUE(CheckCanCreate("relative-name").ok());  // the working directory
  EXPECT_EQ(CheckCanCreate(tmp.Path("missing/out.json")).message(),
            tmp.Path("missing/out.json") + ": folder " + tmp.Path("missing") + ": No such file or directory");
  ASSERT_TRUE(WriteFileAtomic(tmp.Path("file"), "x").ok());
  EXPECT_EQ(CheckCanCreate(tmp.Path("file/out.json")).message(),
            tmp.Path("file/out.json") + ": " + tmp.Path("file") + " is not a folder");
}

}  // namespace
}  // namespace perseus
