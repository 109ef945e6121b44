// The version is set in one place (project() in CMakeLists.txt, through the
// generated perseus/version.h): `perseus --version` and `perseusd --version`
// print it, and the newest CHANGELOG.md entry names it.
#include <gtest/gtest.h>

#include <cstdio>
#include <fstream>
#include <string>

#include "perseus/version.h"

namespace perseus {
namespace {

std::string Output(const std::string& command) {
  std::string out;
  if (FILE* p = popen((command + " 2>&1").c_str(), "r")) {
    char buf[256];
    while (fgets(buf, sizeof buf, p) != nullptr) out += buf;
    pclose(p);
  }
  return out;
}

TEST(Version, EveryBinaryPrintsTheProjectVersion) {
  EXPECT_EQ(Output(std::string(PERSEUS_CLI_PATH) + " --version"), std::string("perseus ") + kVersion + "\n");
  EXPECT_EQ(Output(std::string(PERSEUSD_PATH) + " --version"), std::string("perseusd ") + kVersion + "\n");
}

TEST(Version, TheNewestChangelogEntryNamesIt) {
  std::ifstream in(std::string(PERSEUS_SOURCE_DIR) + "/CHANGELOG.md");
  ASSERT_TRUE(in) << "CHANGELOG.md is missing";
  std::string newest;
  for (std::string line; std::getline(in, line);) {
    if (line.rfind("## [", 0) == 0) {
      newest = line.substr(4, line.find(']') - 4);
      break;
    }
  }
  EXPECT_EQ(newest, kVersion) << "add a CHANGELOG.md entry for the version in CMakeLists.txt";
}

}  // namespace
}  // namespace perseus
