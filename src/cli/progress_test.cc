// Progress: silent on short work and with --quiet; after two seconds, lines
// naming the phase and its detail, then the total.
#include "cli/progress.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <string>
#include <thread>

namespace perseus::cli {
namespace {

TEST(Progress, ShortWorkPrintsNothing) {
  testing::internal::CaptureStderr();
  {
    Progress p(false);
    p.Phase("solving", [] { return std::string("1 step"); });
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    p.Finish();
  }
  EXPECT_EQ(testing::internal::GetCapturedStderr(), "");
}

TEST(Progress, LongWorkPrintsPhaseLinesThenTheTotal) {
  std::atomic<int> steps{0};
  testing::internal::CaptureStderr();
  {
    Progress p(false);
    p.Phase("solving the frontier", [&steps] { return std::to_string(steps.load()) + " sweep steps"; });
    steps = 42;
    std::this_thread::sleep_for(std::chrono::milliseconds(3500));
  }  // the destructor finishes
  const std::string err = testing::internal::GetCapturedStderr();
  EXPECT_EQ(err.rfind("perseus: solving the frontier: 42 sweep steps (", 0), 0u) << err;
  EXPECT_NE(err.find(" s)\nperseus: solving the frontier: 42 sweep steps ("), std::string::npos) << "a line a second: " << err;
  EXPECT_NE(err.find("\nperseus: done in "), std::string::npos) << err;
}

TEST(Progress, QuietPrintsNothing) {
  testing::internal::CaptureStderr();
  {
    Progress p(true);
    p.Phase("solving");
    std::this_thread::sleep_for(std::chrono::milliseconds(2300));
    p.Finish();
  }
  EXPECT_EQ(testing::internal::GetCapturedStderr(), "");
}

}  // namespace
}  // namespace perseus::cli
