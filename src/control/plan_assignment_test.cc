#include "control/plan_assignment.h"

#include <gtest/gtest.h>

#include <random>

namespace perseus::control {
namespace {

// A frontier of `n` plans: times 1, 1 + d, ... ascending, energies descending.
Frontier RandomFrontier(std::mt19937& rng, int n) {
  std::uniform_real_distribution<double> step(0.001, 0.2);
  Frontier f;
  double t = 1, e = 100;
  for (int i = 0; i < n; ++i) {
    FrontierPlan p;
    p.time_s = t;
    p.energy_j = e;
    f.plans.push_back(p);
    t += step(rng);
    e -= step(rng);
  }
  f.all_max = f.plans.front();
  return f;
}

// By definition: the least-energy plan (the largest index) whose time,
// stretched by the pipeline's own slowdown, does not exceed the slowest
// pipeline's time at the fastest plan, nor T*; then at least the floor.
int BruteForcePlan(const Frontier& f, const std::vector<PipelinePace>& paces, size_t p, int floor) {
  double job_s = f.plans[0].time_s;
  for (const PipelinePace& q : paces) job_s = std::max(job_s, f.plans[0].time_s * q.slowdown);
  const double own = std::max(1.0, paces[p].slowdown);
  int best = 0;
  for (size_t i = 0; i < f.plans.size(); ++i) {
    if (f.plans[i].time_s * own <= job_s * (1 + 1e-9) && f.plans[i].time_s <= f.plans.back().time_s) {
      best = static_cast<int>(i);
    }
  }
  return std::max(best, floor);
}

TEST(PlanAssignment, NoStragglersRunTheFastestPlanOrTheFloor) {
  std::mt19937 rng(1);
  Frontier f = RandomFrontier(rng, 10);
  EXPECT_EQ(AssignPipelinePlans(f, std::vector<PipelinePace>(3)), (std::vector<int>{0, 0, 0}));
  EXPECT_EQ(AssignPipelinePlans(f, std::vector<PipelinePace>(2), 4), (std::vector<int>{4, 4}));
  EXPECT_EQ(AssignPipelinePlans(f, std::vector<PipelinePace>(1), 99), (std::vector<int>{9}));  // clamped
}

TEST(PlanAssignment, OthersSlowToMeetTheStragglerButNeverPastTStar) {
  Frontier f;
  for (double t : {1.0, 1.1, 1.2, 1.3}) {
    FrontierPlan p;
    p.time_s = t;
    p.energy_j = 10 - t;
    f.plans.push_back(p);
  }
  // The straggler keeps the fastest plan; the others run the plan of time 1.2.
  EXPECT_EQ(AssignPipelinePlans(f, {{1.0, false}, {1.2, false}, {1.0, false}}), (std::vector<int>{2, 0, 2}));
  // A straggler x3: everyone else stops at T* (the last plan).
  EXPECT_EQ(AssignPipelinePlans(f, {{3.0, false}, {1.0, false}}), (std::vector<int>{0, 3}));
  // A pipeline slowed x1.1 itself meets x1.2 with the plan of time 1.2 / 1.1 (1.0909: the fastest).
  EXPECT_EQ(AssignPipelinePlans(f, {{1.2, false}, {1.1, false}, {1.0, false}}), (std::vector<int>{0, 0, 2}));
  // Pinned pipelines count towards the straggler time and get nothing.
  EXPECT_EQ(AssignPipelinePlans(f, {{1.1, true}, {1.0, false}}), (std::vector<int>{kPinnedPipeline, 1}));
  // The floor applies to the straggler too.
  EXPECT_EQ(AssignPipelinePlans(f, {{1.2, false}, {1.0, false}}, 1), (std::vector<int>{1, 2}));
}

TEST(PlanAssignment, MatchesTheDefinitionOnRandomInstances) {
  std::mt19937 rng(7);
  std::uniform_real_distribution<double> slow(1.0, 1.6);
  for (int trial = 0; trial < 2000; ++trial) {
    Frontier f = RandomFrontier(rng, 1 + trial % 17);
    std::vector<PipelinePace> paces(1 + trial % 6);
    for (PipelinePace& p : paces) p.slowdown = rng() % 3 == 0 ? slow(rng) : 1.0;
    const int floor = static_cast<int>(rng() % f.plans.size());
    const int use_floor = trial % 2 ? floor : 0;
    const std::vector<int> got = AssignPipelinePlans(f, paces, use_floor);
    ASSERT_EQ(got.size(), paces.size());
    for (size_t p = 0; p < paces.size(); ++p) {
      ASSERT_EQ(got[p], BruteForcePlan(f, paces, p, use_floor)) << "trial " << trial << " pipeline " << p;
    }
  }
}

}  // namespace
}  // namespace perseus::control
