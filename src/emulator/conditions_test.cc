// Grouping pipelines into condition classes.
#include "emulator/conditions.h"

#include <gtest/gtest.h>

namespace perseus::emulator {
namespace {

TEST(ConditionsAt, NoEventsIsOneNominalClass) {
  JobConditions c = ConditionsAt(5, {}, {}, 0);
  ASSERT_EQ(c.classes.size(), 1u);
  EXPECT_TRUE(c.classes[0].nominal());
  EXPECT_EQ(c.pipeline_count[0], 5);
  EXPECT_EQ(c.class_of, std::vector<int>(5, 0));
}

TEST(ConditionsAt, StragglersWithTheSameFactorShareAClass) {
  std::vector<SlowPipelineEvent> s{{1.2, 1, 2, 0, -1}, {1.2, 4, 4, 0, -1}};
  JobConditions c = ConditionsAt(6, s, {}, 3);
  ASSERT_EQ(c.classes.size(), 2u);
  EXPECT_DOUBLE_EQ(c.classes[1].slowdown, 1.2);
  EXPECT_EQ(c.pipeline_count, (std::vector<int>{3, 3}));
  EXPECT_EQ(c.class_of, (std::vector<int>{0, 1, 1, 0, 1, 0}));
}

TEST(ConditionsAt, EventsApplyOnlyInsideTheirIterations) {
  std::vector<SlowPipelineEvent> s{{1.5, 0, 0, 10, 20}};
  EXPECT_EQ(ConditionsAt(2, s, {}, 9).classes.size(), 1u);
  EXPECT_EQ(ConditionsAt(2, s, {}, 10).classes.size(), 2u);
  EXPECT_EQ(ConditionsAt(2, s, {}, 19).classes.size(), 2u);
  EXPECT_EQ(ConditionsAt(2, s, {}, 20).classes.size(), 1u);
}

TEST(ConditionsAt, OverlappingEventsMultiplyFactorsAndKeepTheLowestCap) {
  std::vector<SlowPipelineEvent> s{{1.2, 0, 1, 0, -1}, {1.5, 1, 1, 0, -1}};
  std::vector<GpuCapEvent> t{{1, 2, 3, 1200, 0, -1}, {1, 2, 3, 1100, 0, -1}, {1, 0, 0, 1300, 0, -1}};
  JobConditions c = ConditionsAt(3, s, t, 0);
  const PipelineConditions& p1 = c.classes[c.class_of[1]];
  EXPECT_NEAR(p1.slowdown, 1.8, 1e-12);
  ASSERT_EQ(p1.caps.size(), 2u);
  EXPECT_EQ(p1.caps[0], (GpuCap{0, 0, 1300}));  // sorted by (stage, gpu)
  EXPECT_EQ(p1.caps[1], (GpuCap{2, 3, 1100}));
  EXPECT_EQ(p1.Key().substr(p1.Key().find('|')), "|cap 0.0@1300|cap 2.3@1100");
}

TEST(ConditionsAt, EveryPipelineStragglingLeavesTheNominalClassEmpty) {
  JobConditions c = ConditionsAt(2, {{2.0, 0, 1, 0, -1}}, {}, 0);
  EXPECT_EQ(c.pipeline_count, (std::vector<int>{0, 2}));
}

TEST(ActiveEvents, ListsStragglersThenThrottles) {
  std::vector<SlowPipelineEvent> s{{1.2, 0, 0, 0, 5}, {1.2, 0, 0, 3, -1}};
  std::vector<GpuCapEvent> t{{0, 0, 0, 1000, 4, 6}};
  EXPECT_EQ(ActiveEvents(s, t, 0), (std::vector<int>{0}));
  EXPECT_EQ(ActiveEvents(s, t, 4), (std::vector<int>{0, 1, 2}));
  EXPECT_EQ(ActiveEvents(s, t, 7), (std::vector<int>{1}));
}

TEST(JobConditionsKey, DiffersWhenCountsDiffer) {
  EXPECT_NE(ConditionsAt(3, {{1.2, 0, 0, 0, -1}}, {}, 0).Key(), ConditionsAt(3, {{1.2, 0, 1, 0, -1}}, {}, 0).Key());
}

}  // namespace
}  // namespace perseus::emulator
