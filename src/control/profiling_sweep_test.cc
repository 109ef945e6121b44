#include "control/profiling_sweep.h"

#include <gtest/gtest.h>

namespace perseus::control {
namespace {

TEST(SweepClocks, IntersectsStridesAndKeepsLowest) {
  const std::vector<int> a = {1410, 1395, 1380, 1365, 1350, 1335}, b = {1395, 1380, 1365, 1350, 1335, 1320};
  ProfilingOptions o;
  o.clock_stride = 2;
  EXPECT_EQ(SweepClocks({a, b}, o), (std::vector<int>{1395, 1365, 1335}));
  o.clock_stride = 3;
  EXPECT_EQ(SweepClocks({a, b}, o), (std::vector<int>{1395, 1350, 1335}));
  o.min_clock_mhz = 1360;
  EXPECT_EQ(SweepClocks({a, b}, o), (std::vector<int>{1395, 1365}));
  EXPECT_TRUE(SweepClocks({a, {900}}, ProfilingOptions{}).empty());
  EXPECT_TRUE(SweepClocks({}, ProfilingOptions{}).empty());
}

TEST(SweepClocks, KeepsAtMostMaxClocks) {
  std::vector<int> many;
  for (int mhz = 1410; mhz >= 210; mhz -= 15) many.push_back(mhz);
  ProfilingOptions o;
  o.max_clocks = 20;
  const std::vector<int> got = SweepClocks({many}, o);
  EXPECT_LE(got.size(), 21u);  // the lowest is always added
  EXPECT_EQ(got.front(), 1410);
  EXPECT_EQ(got.back(), 210);
}

TEST(CommonLengthClocks, CutsLongerListsKeepingEnds) {
  std::vector<std::vector<int>> c = CommonLengthClocks({{7, 6, 5, 4, 3, 2, 1}, {9, 8, 7}});
  EXPECT_EQ(c[0], (std::vector<int>{7, 4, 1}));
  EXPECT_EQ(c[1], (std::vector<int>{9, 8, 7}));
}

TEST(ProfilingSweep, RunsItsWindowsThenRepeatsWithinRoundsAndBudget) {
  ProfilingOptions o;
  o.max_repeat_rounds = 1;
  ProfilingState p = StartSweep({{1410, 1200, 1000}, {1410, 1300, 1200, 1000}}, o);
  EXPECT_EQ(p.clocks_mhz[1].size(), 3u);  // cut to a common length
  ASSERT_GT(p.windows.size(), 2u);
  for (const ProfilingWindowPlan& w : p.windows) EXPECT_EQ(w.stages.size(), 2u);
  const size_t base = p.windows.size();
  double t = 0;
  while (!CloseWindow(&p, t += 10)) OpenWindow(&p, t);
  EXPECT_EQ(p.current, static_cast<int>(base));
  EXPECT_EQ(p.windows[0].closed_s, 10);
  // Nothing above the target: done.
  EXPECT_EQ(AddRepeatRound(&p, {{}, {}}, o, t), 0);
  // Clock 1 of stage 0 too uncertain: a round of repeat windows, then no more rounds.
  const int added = AddRepeatRound(&p, {{1}, {}}, o, t);
  EXPECT_GT(added, 0);
  EXPECT_EQ(p.rounds, 1);
  EXPECT_TRUE(p.active());
  EXPECT_EQ(p.windows.back().purpose.empty(), false);
  EXPECT_EQ(AddRepeatRound(&p, {{1}, {}}, o, t), 0);  // max_repeat_rounds reached
}

TEST(ProfilingSweep, SingleClockWindowsNeverSwitchInsideAWindow) {
  ProfilingOptions o;
  o.single_clock_windows = true;
  ProfilingState p = StartSweep({{1410, 1200, 1000, 800}, {1410, 1200, 1000, 800}}, o);
  ASSERT_GT(p.windows.size(), 4u);
  for (const ProfilingWindowPlan& w : p.windows) {
    for (const auto& [forward, backward] : w.stages) EXPECT_EQ(forward, backward) << w.purpose;
  }
  o.single_clock_windows = false;
  bool any_cross = false;
  for (const ProfilingWindowPlan& w : StartSweep({{1410, 1200, 1000, 800}}, o).windows) {
    any_cross = any_cross || w.stages[0].first != w.stages[0].second;
  }
  EXPECT_TRUE(any_cross);
}

TEST(ProfilingSweep, RepeatWindowsStopAtTheTimeBudget) {
  ProfilingOptions o;
  o.time_budget_s = 100;
  ProfilingState p = StartSweep({{1410, 1200, 1000}}, o);
  double t = 0;
  while (!CloseWindow(&p, t += 10)) OpenWindow(&p, t);
  const int done = p.current;
  // Spent 10 s per window so far; the budget allows (100 - spent) / 10 more.
  o.time_budget_s = 10.0 * done + 20;  // room for two more windows of 10 s
  const int added = AddRepeatRound(&p, {{0, 1, 2}}, o, 10.0 * done);
  EXPECT_EQ(added, 2);
  ProfilingState full = p;
  o.time_budget_s = 10.0 * done;  // no room at all
  EXPECT_EQ(AddRepeatRound(&full, {{0, 1, 2}}, o, 10.0 * done), 0);
  o.time_budget_s = 0;  // no limit
  ProfilingState q = StartSweep({{1410, 1200, 1000}}, o);
  t = 0;
  while (!CloseWindow(&q, t += 10)) OpenWindow(&q, t);
  EXPECT_GT(AddRepeatRound(&q, {{0, 1, 2}}, o, 1e9), 0);
}

}  // namespace
}  // namespace perseus::control
