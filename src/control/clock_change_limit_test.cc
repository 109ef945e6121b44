#include "control/clock_change_limit.h"

#include <gtest/gtest.h>

namespace perseus::control {
namespace {

TEST(ClockChangeLimit, TheSpecsLimitWins) {
  EXPECT_EQ(ClockChangeLimit(8, 0.1, 10), 8);
  EXPECT_EQ(ClockChangeLimit(0, 0.1, 10), 0);
}

TEST(ClockChangeLimit, FastOrUnmeasuredSwitchesLeavePlansFree) {
  EXPECT_EQ(ClockChangeLimit(-1, -1, 10), -1);
  EXPECT_EQ(ClockChangeLimit(-1, 0.005, 10), -1);
  EXPECT_EQ(ClockChangeLimit(-1, 0.1, 0), -1);
}

TEST(ClockChangeLimit, SlowSwitchesLeaveAtMostFivePercentAtAPreviousClock) {
  EXPECT_EQ(ClockChangeLimit(-1, 0.1, 18.0), 9);   // an 18 s iteration on an H200: one per 2 s
  EXPECT_EQ(ClockChangeLimit(-1, 0.1, 2.5), 1);    // 1.25 changes: one
  EXPECT_EQ(ClockChangeLimit(-1, 0.1, 0.75), 1);   // never below one
  EXPECT_EQ(ClockChangeLimit(-1, 0.02, 18.0), 45);
}

TEST(IsSlowClockSwitch, AboveTenMsAndAQuarterOfAComputation) {
  EXPECT_TRUE(IsSlowClockSwitch(0.1, 0.017));
  EXPECT_FALSE(IsSlowClockSwitch(0.008, 0.001));  // under 10 ms
  EXPECT_FALSE(IsSlowClockSwitch(0.03, 0.2));     // short next to 200-ms computations
  EXPECT_TRUE(IsSlowClockSwitch(0.06, 0.2));
}

}  // namespace
}  // namespace perseus::control
