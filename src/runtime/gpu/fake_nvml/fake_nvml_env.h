// FakeNvmlEnvTest: a GoogleTest fixture for tests that load the fake
// libnvidia-ml (FAKE_NVML_PATH, defined by the test's CMake target).
//
// SetUp gives every test a fresh state file in a new temporary directory
// (removed with the fixture), two fake GPUs and none of the other knobs (so
// the fake's defaults: a counter stepping every 100 ms, no clock latency, no
// cap); TearDown clears the knobs. Tests change knobs with setenv before the call they
// affect. Test-only: includes gtest.
// Thread safety: setenv is not thread-safe; change knobs only while no other
// thread of the test process calls the fake.
#pragma once

#include <gtest/gtest.h>
#include <stdlib.h>

#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "common/temp_dir_for_test.h"
#include "runtime/gpu/fake_nvml/fake_nvml_state.h"

namespace perseus::runtime {

class FakeNvmlEnvTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ClearKnobs();
    state_path_ = dir_ + "/fake_nvml_state";
    setenv("FAKE_NVML_STATE", state_path_.c_str(), 1);
    setenv("FAKE_NVML_GPUS", "2", 1);
  }

  void TearDown() override { ClearKnobs(); }

  static void ClearKnobs() {
    for (const char* name : kFakeNvmlKnobs) unsetenv(name);
    unsetenv("PERSEUS_NVML_LIBRARY");
  }

  // The fake's state file; empty before the first clock or energy call.
  std::vector<FakeNvmlGpuState> ReadState() const {
    std::ifstream in(state_path_);
    std::stringstream text;
    text << in.rdbuf();
    return ParseFakeNvmlState(text.str());
  }

  ScopedTempDir tmp_;
  const std::string dir_ = tmp_.path();
  std::string state_path_;
};

}  // namespace perseus::runtime
