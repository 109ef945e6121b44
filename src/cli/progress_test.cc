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
    p.Finish();
  }
  const std::string err = testing::internal::GetCapturedStderr();
  EXPECT_EQ(err.rfind("perseus: solving the frontier: 42 sweep steps (", 0), 0u) << err;
  EXPECT_NE(err.find(" s)\nperseus: solving the frontier: 42 sweep steps ("), std::string::npos) << "a line a second: " << err;
  EXPECT_NE(err.find("\nperseus: done in "), std::string::npos) << err;
}

// Work that failed stops without "done" (its error follows), and a detail
// cleared by DetailScope is never called once the object it reads is gone.
TEST(Progress, FailedWorkEndsWithoutDoneAndAScopedDetailIsDropped) {
  testing::internal::CaptureStderr();
  {
    Progress p(false);
    {
      auto steps = std::make_unique<int>(7);
      DetailScope scope(p);
      p.Phase("solving", [&steps] { return std::to_string(*steps) + " steps"; });
      std::this_thread::sleep_for(std::chrono::milliseconds(3000));  // the first line comes at 2 s
    }  // scope clears the detail before `steps` goes
    std::this_thread::sleep_for(std::chrono::milliseconds(2500));  // a line a second: at least one more
  }  // destroyed without Finish: the work failed
  const std::string err = testing::internal::GetCapturedStderr();
  EXPECT_EQ(err.rfind("perseus: solving: 7 steps (", 0), 0u) << err;
  EXPECT_NE(err.find("\nperseus: solving ("), std::string::npos) << "no line without the cleared detail: " << err;
  EXPECT_EQ(err.find("done"), std::string::npos) << err;
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

TEST(DescribeFrontierProgress, SweepShareThenPlans) {
  FrontierProgress p;
  EXPECT_EQ(DescribeFrontierProgress(p), "sweep 0% of the time range (0 steps)");
  p.sweep_steps = 1200;
  p.sweep_fraction = 0.374;
  EXPECT_EQ(DescribeFrontierProgress(p), "sweep 37% of the time range (1200 steps)");
  p.record_times = 9124;
  p.plans_recorded = 812;
  EXPECT_EQ(DescribeFrontierProgress(p), "1200 sweep steps, 812 plans made (at most 9124)");
}

// A real solve fills it in: all the range swept, every plan within the record times.
TEST(DescribeFrontierProgress, FilledInBySolveFrontier) {
  Profile profile;
  profile.stages.resize(2);
  for (auto& s : profile.stages) {
    s.points[0] = {{1410, 0.010, 3}, {1000, 0.014, 2.4}};
    s.points[1] = {{1410, 0.020, 6}, {1000, 0.028, 4.9}};
  }
  ProblemSpec spec;
  spec.schedule = {ScheduleKind::k1F1B, 2, 4, 1};
  spec.blocking_power_w = 50;
  Result<Problem> problem = BuildProblem(profile, spec);
  ASSERT_TRUE(problem.ok()) << problem.status().ToString();
  FrontierProgress p;
  FrontierOptions options;
  options.progress = &p;
  ASSERT_TRUE(SolveFrontier(*problem, options).ok());
  EXPECT_GT(p.sweep_steps.load(), 0);
  EXPECT_DOUBLE_EQ(p.sweep_fraction.load(), 1.0);
  EXPECT_GT(p.record_times.load(), 0);
  EXPECT_GT(p.plans_recorded.load(), 0);
  EXPECT_LE(p.plans_recorded.load(), p.record_times.load());
}

}  // namespace
}  // namespace perseus::cli
