// ReadFile refuses what could block or never end (a FIFO without a writer,
// /dev/zero) and files over its bound, naming the path; reads the rest.
// WriteFileAtomic replaces a file whole or not at all.
#include "common/file_util.h"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>
#include <string>

namespace perseus {
namespace {

std::string Temp(const std::string& name) { return "/tmp/perseus_file_util_" + name + "_" + std::to_string(::getpid()); }

TEST(ReadFile, ReadsARegularFileWithinTheBound) {
  const std::string path = Temp("regular");
  ASSERT_TRUE(WriteFileAtomic(path, "hello\n").ok());
  Result<std::string> text = ReadFile(path);
  ASSERT_TRUE(text.ok()) << text.status().ToString();
  EXPECT_EQ(*text, "hello\n");
  Result<std::string> small = ReadFile(path, 3);
  ASSERT_FALSE(small.ok());
  EXPECT_EQ(small.status().message(), path + ": larger than 3 bytes");
  std::remove(path.c_str());
}

TEST(ReadFile, RefusesFifosDevicesAndDirectoriesWithoutBlocking) {
  const std::string fifo = Temp("fifo");
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  Result<std::string> r = ReadFile(fifo);  // would block forever in open() without a writer
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().message(), fifo + ": not a regular file");
  std::remove(fifo.c_str());
  EXPECT_EQ(ReadFile("/dev/zero").status().message(), "/dev/zero: not a regular file");
  EXPECT_EQ(ReadFile("/tmp").status().message(), "/tmp: not a regular file");
  EXPECT_NE(ReadFile("/nonexistent/x").status().message().find("/nonexistent/x: "), std::string::npos);
}

TEST(WriteFileAtomic, StreamsContentsAndLeavesNothingOnAStreamError) {
  const std::string path = Temp("streamed");
  ASSERT_TRUE(WriteFileAtomic(path, [](std::ostream& out) { out << "a" << 1 << '\n'; }).ok());
  EXPECT_EQ(*ReadFile(path), "a1\n");
  Status failed = WriteFileAtomic(path, [](std::ostream& out) {
    out << "partial";
    out.setstate(std::ios::badbit);
  });
  EXPECT_EQ(failed.message(), path + ": write failed");
  EXPECT_EQ(*ReadFile(path), "a1\n");  // the old file stays whole
  EXPECT_FALSE(ReadFile(path + ".tmp." + std::to_string(::getpid())).ok());
  std::remove(path.c_str());
}

}  // namespace
}  // namespace perseus
