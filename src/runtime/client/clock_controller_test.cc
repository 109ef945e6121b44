#include "runtime/client/clock_controller.h"

#include <gtest/gtest.h>

#include <chrono>
#include <thread>

#include "runtime/gpu/fake_gpu.h"

namespace perseus::client {
namespace {

void WaitSettled(const ClockController& c) {
  for (int i = 0; i < 5000 && !c.Settled(); ++i) std::this_thread::sleep_for(std::chrono::microseconds(200));
}

TEST(ClockControllerTest, AppliesTheLatestRequestAndUnlocksAtTheEnd) {
  auto gpu = std::make_shared<runtime::FakeGpu>(0);
  {
    ClockController c(gpu);
    EXPECT_EQ(c.applied(), ClockController::kNone);
    c.Request(1200);
    WaitSettled(c);
    EXPECT_EQ(gpu->LockedSmClockMhz(), 1200);
    c.Request(1200);  // unchanged: nothing to do
    for (int mhz : {1005, 1095, 990}) c.Request(mhz);
    WaitSettled(c);
    EXPECT_EQ(gpu->LockedSmClockMhz(), 990);
    EXPECT_LE(gpu->SetCount(), 4);
  }
  EXPECT_EQ(gpu->LockedSmClockMhz(), 0);
  EXPECT_EQ(gpu->ResetCount(), 1);
}

TEST(ClockControllerTest, RecordsErrorsWithoutRetrying) {
  auto gpu = std::make_shared<runtime::FakeGpu>(0);
  ClockController c(gpu);
  c.Request(1412);
  WaitSettled(c);
  EXPECT_EQ(c.errors(), 1);
  EXPECT_NE(c.last_error().find("1412 MHz is not a supported SM clock"), std::string::npos) << c.last_error();
  EXPECT_EQ(gpu->LockedSmClockMhz(), 0);
}

TEST(ClockControllerTest, RestoreUnlocksNow) {
  auto gpu = std::make_shared<runtime::FakeGpu>(0);
  ClockController c(gpu);
  c.Request(1200);
  WaitSettled(c);
  c.Restore();
  EXPECT_EQ(gpu->LockedSmClockMhz(), 0);
  c.Request(1305);  // later requests apply again
  WaitSettled(c);
  EXPECT_EQ(gpu->LockedSmClockMhz(), 1305);
}

}  // namespace
}  // namespace perseus::client
