#include "carbon/knob_options.h"

#include <gtest/gtest.h>

#include "perseus/gpu_model.h"

namespace perseus::carbon {
namespace {

TEST(KnobOptions, HullDropsDominatedAndNonConvexPoints) {
  std::vector<KnobOption> opts = {{"a", 1.0, 10}, {"b", 1.1, 9.9}, {"c", 1.2, 8}, {"d", 1.3, 9}, {"e", 2.0, 7}};
  std::vector<KnobOption> pareto = ParetoFront(opts);
  ASSERT_EQ(pareto.size(), 4u);  // d is dominated by c
  std::vector<KnobOption> hull = LowerConvexHull(opts);
  ASSERT_EQ(hull.size(), 3u);    // b is above the chord a-c
  EXPECT_EQ(hull[0].label, "a");
  EXPECT_EQ(hull[1].label, "c");
  EXPECT_EQ(hull[2].label, "e");
}

TEST(KnobOptions, FrontierAndGlobalClockOnTheBundledExample) {
  Result<Example> ex = FindExample("gpt3-xl-a100");
  ASSERT_TRUE(ex.ok());
  Result<Problem> problem = BuildProblem(ex->profile, ex->spec);
  ASSERT_TRUE(problem.ok());
  KnobSet clocks = GlobalClockKnobs(*problem);
  ASSERT_FALSE(clocks.options.empty());
  EXPECT_NEAR(clocks.options.front().time_s, clocks.reference.time_s, 1e-12);
  for (size_t i = 1; i < clocks.options.size(); ++i) {
    EXPECT_GT(clocks.options[i].time_s, clocks.options[i - 1].time_s);
    EXPECT_LT(clocks.options[i].energy_j, clocks.options[i - 1].energy_j);
  }
  PlanChoice c = PlanForGlobalClock(*problem, 1000);
  for (size_t i = 0; i < c.size(); ++i) EXPECT_LE(problem->nodes[i].options[c[i]].freq_mhz, 1000);
  FrontierOptions fo;
  fo.lower_bound_samples = 0;
  Result<Frontier> f = SolveFrontier(*problem, fo);
  ASSERT_TRUE(f.ok());
  KnobSet fk = FrontierKnobs(*f);
  EXPECT_LE(fk.options[fk.NoSlowdownIndex()].time_s, fk.reference.time_s * (1 + 1e-9));
}

}  // namespace
}  // namespace perseus::carbon
