// ReadFile refuses what could block or never end (a FIFO without a writer,
// /dev/zero) and files over its bound, naming the path; reads the rest.
// WriteFileAtomic replaces a file whole or not at all.
#include "common/file_util.h"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

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

}  // namespace
}  // namespace perseus
