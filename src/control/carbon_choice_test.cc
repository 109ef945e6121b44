#include "control/carbon_choice.h"

#include <gtest/gtest.h>

namespace perseus::control {
namespace {

KnobSet ThreeOptions() {
  KnobSet k;
  k.reference = {"fast", 1.0, 3.6e6};
  k.options = {{"fast", 1.0, 3.6e6}, {"mid", 1.1, 3.0e6}, {"slow", 1.5, 2.5e6}};
  k.pareto = k.options;
  return k;
}

TEST(CarbonChoice, ChoosesByIntensityAndLambda) {
  KnobSet k = ThreeOptions();
  EXPECT_EQ(ChooseOption(k, 0, 1), 0);      // clean grid: time wins
  EXPECT_EQ(ChooseOption(k, 500, 0), 2);    // lambda 0: least energy
  // At 100 g/kWh: costs 100 + 1 L, 83.3 + 1.1 L, 69.4 + 1.5 L.
  EXPECT_EQ(ChooseOption(k, 100, 10), 2);
  EXPECT_EQ(ChooseOption(k, 100, 100), 1);
  EXPECT_EQ(ChooseOption(k, 100, 1000), 0);
}

TEST(CarbonChoice, LambdaMeetsTheWorkAndSlowsDirtyHoursMost) {
  KnobSet k = ThreeOptions();
  std::vector<double> ci = {100, 500, 100, 500, 100, 500, 100, 500, 100, 500};
  // 10 windows, 5% slowdown budget: the work of 10 / 1.05 reference hours.
  LambdaChoice l = LambdaForWork(k, ci, 10 / 1.05);
  ASSERT_TRUE(l.feasible);
  EXPECT_GE(l.planned_work_h, 10 / 1.05);
  int dirty_slow = 0, clean_slow = 0;
  for (size_t w = 0; w < ci.size(); ++w) {
    int o = ChooseOption(k, ci[w], l.lambda_g_per_s);
    (ci[w] > 200 ? dirty_slow : clean_slow) += o > 0;
  }
  EXPECT_GT(dirty_slow, clean_slow);
  EXPECT_FALSE(LambdaForWork(k, ci, 11).feasible);
  EXPECT_EQ(LambdaForWork(k, ci, 1).lambda_g_per_s, 0);  // any plan finishes: pure carbon
}

}  // namespace
}  // namespace perseus::control
