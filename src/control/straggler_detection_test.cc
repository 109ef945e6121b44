#include "control/straggler_detection.h"

#include <gtest/gtest.h>

#include "common/stats.h"

namespace perseus::control {
namespace {

TEST(StragglerDetection, NormalisesByPredictedTime) {
  // Pipeline 1 runs a plan predicted 20% slower on purpose: not a straggler.
  std::vector<PipelineSamples> p = {
      {{1.0, 1.0, 1.0}, 1.0}, {{1.2, 1.2, 1.2}, 1.2}, {{1.1, 1.1, 1.1}, 1.0}, {{9.0, 1.0, 1.0, 1.0}, 1.0}};
  std::vector<std::optional<double>> s = EstimateSlowdowns(p, 3);
  EXPECT_NEAR(*s[0], 1.0, 1e-12);
  EXPECT_NEAR(*s[1], 1.0, 1e-12);
  EXPECT_NEAR(*s[2], 1.1, 1e-12);
  EXPECT_NEAR(*s[3], 1.0, 1e-12);  // only the last `window` samples count
  bool changed = false;
  StragglerOptions o;
  std::vector<Straggler> out = UpdateDetectedStragglers({}, s, o, &changed);
  EXPECT_TRUE(changed);
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].pipeline, 2);
  EXPECT_TRUE(out[0].detected);
}

TEST(StragglerDetection, NeedsAFullWindow) {
  std::vector<PipelineSamples> p = {{{1.0, 1.0}, 1.0}, {{2.0, 2.0, 2.0}, 1.0}};
  std::vector<std::optional<double>> s = EstimateSlowdowns(p, 3);
  EXPECT_FALSE(s[0].has_value());
  EXPECT_FALSE(s[1].has_value());  // no other pipeline to compare with
}

TEST(StragglerDetection, RecoversWithHysteresisAndKeepsApiStragglers) {
  StragglerOptions o;  // threshold 1.05, recovery below 1.025
  bool changed = true;
  std::vector<Straggler> cur = {{0, 1.2, true}, {1, 1.5, false}};
  // 1.03 is above the recovery bound 1.025: still a straggler, with the new slowdown.
  std::vector<Straggler> out = UpdateDetectedStragglers(cur, {1.03, 1.0, 1.0}, o, &changed);
  EXPECT_TRUE(changed);
  ASSERT_EQ(out.size(), 2u);
  EXPECT_DOUBLE_EQ(out[0].slowdown, 1.03);
  EXPECT_DOUBLE_EQ(out[1].slowdown, 1.5);
}

TEST(StragglerDetection, UpdatesAndClears) {
  StragglerOptions o;
  bool changed = false;
  std::vector<Straggler> cur = {{0, 1.2, true}, {1, 1.5, false}};
  std::vector<Straggler> out = UpdateDetectedStragglers(cur, {1.01, 1.0}, o, &changed);
  EXPECT_TRUE(changed);
  ASSERT_EQ(out.size(), 1u);  // pipeline 0 recovered; the API straggler stays
  EXPECT_EQ(out[0].pipeline, 1);
  out = UpdateDetectedStragglers(cur, {1.3, std::nullopt}, o, &changed);
  EXPECT_TRUE(changed);
  EXPECT_DOUBLE_EQ(out[0].slowdown, 1.3);
  out = UpdateDetectedStragglers(cur, {1.21, std::nullopt}, o, &changed);
  EXPECT_FALSE(changed);
}

TEST(MedianTest, EvenAndOdd) {
  EXPECT_DOUBLE_EQ(Median({3, 1, 2}), 2);
  EXPECT_DOUBLE_EQ(Median({4, 1, 3, 2}), 2.5);
  EXPECT_DOUBLE_EQ(Median({}), 0);
}

}  // namespace
}  // namespace perseus::control
