// Test helper shared by the carbon tests: writes a small input file into the
// test's temporary directory and returns its path.
#pragma once

#include <gtest/gtest.h>

#include <fstream>
#include <string>

namespace perseus::carbon {

inline std::string WriteTemp(const std::string& name, const std::string& text) {
  std::string path = testing::TempDir() + "/" + name;
  std::ofstream(path) << text;
  return path;
}

}  // namespace perseus::carbon
