#include "emulator/power_cap_report.h"

#include <gtest/gtest.h>

#include "emulator/test_job.h"

namespace perseus::emulator {
namespace {

TEST(PowerCapReportTest, ThePowerLimitThrottlesOnlyWhatDrawsMore) {
  const Problem problem = SmallProblem(3, 6, 2);
  EXPECT_EQ(PlanForPowerLimit(problem, 1e9), AllMaxPlan(problem));
  for (int option : PlanForPowerLimit(problem, 0)) EXPECT_EQ(option, 3);  // every computation at its lowest clock
}

TEST(PowerCapReportTest, TheFrontierMeetsEveryCapAtNoMoreSlowdownThanTheBaselines) {
  const Problem problem = SmallProblem(4, 8, 1);
  Result<Frontier> frontier = SolveFrontier(problem, {});
  ASSERT_TRUE(frontier.ok()) << frontier.status().ToString();
  const PowerCapReport r = EvaluatePowerCaps(problem, *frontier, std::vector<double>(4, 1.0), "small", 12);
  ASSERT_EQ(r.curves.size(), 3u);
  const CapCurve& perseus = r.curves[0];
  ASSERT_EQ(perseus.points.size(), 12u);
  EXPECT_TRUE(perseus.points.front().reachable);
  EXPECT_LE(perseus.points.front().slowdown, 1e-9) << "no cap binds at all-max power";
  for (size_t i = 0; i < perseus.points.size(); ++i) {
    const CapPoint& p = perseus.points[i];
    if (p.reachable) {
      EXPECT_LE(p.power_w, p.cap_w * (1 + 1e-9));
    }
    for (size_t c = 1; c < r.curves.size(); ++c) {
      const CapPoint& b = r.curves[c].points[i];
      if (!b.reachable) continue;
      ASSERT_TRUE(p.reachable) << "cap " << p.cap_w << " W: " << r.curves[c].name << " reaches it";
      EXPECT_LE(p.slowdown, b.slowdown + 0.005) << "cap " << p.cap_w << " W vs " << r.curves[c].name;
    }
  }
  EXPECT_TRUE(r.curves[0].points.back().reachable || r.curves[1].points.back().reachable ||
              r.curves[2].points.back().reachable);
  EXPECT_NE(PowerCapMarkdown(r).find("| cap (W) |"), std::string::npos);
  EXPECT_NE(PowerCapSvg(r).find("<svg"), std::string::npos);
  EXPECT_EQ(PowerCapCsv(r).rfind("approach,cap_w,reachable,slowdown,power_w\n", 0), 0u);
}

TEST(PowerCapReportTest, AStragglersPeersSaveWithoutACapAndEveryApproachFacesIt) {
  const Problem problem = SmallProblem(4, 8, 1);
  Result<Frontier> frontier = SolveFrontier(problem, {});
  ASSERT_TRUE(frontier.ok()) << frontier.status().ToString();
  const PowerCapReport plain = EvaluatePowerCaps(problem, *frontier, {1, 1}, "small", 5);
  const PowerCapReport straggling = EvaluatePowerCaps(problem, *frontier, {1, 1.15}, "small", 5);
  ASSERT_EQ(straggling.stragglers, (std::vector<std::pair<int, double>>{{1, 1.15}}));
  EXPECT_NEAR(straggling.all_max_time_s, 1.15 * plain.all_max_time_s, 1e-12);
  EXPECT_LT(straggling.all_max_power_w, plain.all_max_power_w);  // the fast pipeline waits at blocking power
  // Uncapped, perseus slows the other pipeline to the straggler's pace: less power at no slowdown.
  const control::CappedPlan free = control::PlanUnderPowerCap(straggling.curves[0].settings, {});
  EXPECT_NEAR(free.IterationTimeS(), straggling.all_max_time_s, 0.02 * straggling.all_max_time_s);
  EXPECT_LT(free.PowerW(), straggling.all_max_power_w);
  EXPECT_NE(PowerCapMarkdown(straggling).find("Pipeline 1 straggles (x1.15)"), std::string::npos);
}

}  // namespace
}  // namespace perseus::emulator
