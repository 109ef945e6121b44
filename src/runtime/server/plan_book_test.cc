// The plan book and the stored frontier: the delta encoding reads back to the
// same plans (and the older full form still reads), damaged rows are errors
// and not crashes, thinning keeps the plans users ask for by name, and a
// stage's list, built on demand, is the plan as perseus optimize writes it.
#include "runtime/server/plan_book.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "perseus/frontier_io.h"
#include "runtime/server/synthetic_job.h"

namespace perseus::server {
namespace {

JobSpec Spec(int pp, int microbatches) {
  JobSpec spec;
  spec.id = "j";
  spec.dp = 1;
  spec.pp = pp;
  spec.tp = 1;
  spec.schedule = {ScheduleKind::k1F1B, pp, microbatches, 1};
  return spec;
}

Profile SyntheticProfile(int pp) {
  Profile profile;
  profile.stages.resize(pp);
  for (int s = 0; s < pp; ++s) {
    for (int mhz : testing::kClocks) {
      profile.stages[s].points[0].push_back(testing::SyntheticPoint(s, true, mhz));
      profile.stages[s].points[1].push_back(testing::SyntheticPoint(s, false, mhz));
    }
  }
  return profile;
}

class PlanBookTest : public ::testing::Test {
 protected:
  void SetUp() override {
    spec_ = Spec(4, 8);
    profile_ = SyntheticProfile(4);
    Result<Problem> problem = BuildProblem(profile_, JobProblemSpec(spec_, 60));
    ASSERT_TRUE(problem.ok()) << problem.status().ToString();
    problem_ = std::move(*problem);
    FrontierOptions options;
    options.unit_time_s = 1e-4;
    Result<Frontier> f = SolveFrontier(problem_, options);
    ASSERT_TRUE(f.ok()) << f.status().ToString();
    frontier_ = std::move(*f);
    ASSERT_GT(frontier_.plans.size(), 20u);
  }
  JobSpec spec_;
  Profile profile_;
  Problem problem_;
  Frontier frontier_;
};

void ExpectSamePlans(const Frontier& a, const Frontier& b) {
  ASSERT_EQ(a.plans.size(), b.plans.size());
  for (size_t k = 0; k < a.plans.size(); ++k) {
    EXPECT_EQ(a.plans[k].choice, b.plans[k].choice) << "plan " << k;
    EXPECT_EQ(a.plans[k].time_s, b.plans[k].time_s) << "plan " << k;
    EXPECT_EQ(a.plans[k].energy_j, b.plans[k].energy_j) << "plan " << k;
    EXPECT_EQ(a.plans[k].lower_bound_j, b.plans[k].lower_bound_j) << "plan " << k;
  }
  EXPECT_EQ(a.all_max.choice, b.all_max.choice);
  EXPECT_EQ(a.stats.sweep_steps, b.stats.sweep_steps);
}

TEST_F(PlanBookTest, StoredFrontierReadsBackTheSamePlansFromChangesOnly) {
  const Json stored = StoredFrontierJson(frontier_);
  ASSERT_TRUE(stored["plans"][0].contains("choice"));
  for (size_t k = 1; k < stored["plans"].size(); ++k) {
    EXPECT_FALSE(stored["plans"][k].contains("choice")) << k;
    EXPECT_LT(stored["plans"][k]["changes"].size(), frontier_.plans[k].choice.size()) << k;
  }
  Result<Frontier> back = FrontierFromJson(Json::parse(stored.dump()));
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  ExpectSamePlans(frontier_, *back);
}

TEST_F(PlanBookTest, TheOlderFormWithEveryPlansFullChoiceStillReads) {
  Json stored = StoredFrontierJson(frontier_);
  for (size_t k = 1; k < stored["plans"].size(); ++k) {
    stored["plans"][k].erase("changes");
    stored["plans"][k]["choice"] = frontier_.plans[k].choice;
  }
  Result<Frontier> back = FrontierFromJson(stored);
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  ExpectSamePlans(frontier_, *back);
}

TEST_F(PlanBookTest, ADamagedChangeIsAnErrorNotACrash) {
  Json stored = StoredFrontierJson(frontier_);
  stored["plans"][1]["changes"] = Json::array({Json::array({1000000, 0})});
  Result<Frontier> back = FrontierFromJson(stored);
  ASSERT_FALSE(back.ok());
  EXPECT_NE(back.status().message().find("computation 1000000"), std::string::npos) << back.status().message();
  stored["plans"][1].erase("changes");
  back = FrontierFromJson(stored);
  ASSERT_FALSE(back.ok());
  EXPECT_NE(back.status().message().find("stored frontier"), std::string::npos) << back.status().message();
}

TEST_F(PlanBookTest, ThinningKeepsTheFastestNoSlowdownAndMinimumEnergyPlans) {
  const size_t before = frontier_.plans.size();
  Frontier thin = ThinFrontier(frontier_, 10);
  ASSERT_EQ(thin.plans.size(), 10u);
  EXPECT_EQ(thin.plans.front().time_s, frontier_.plans.front().time_s);
  EXPECT_EQ(thin.MinEnergyPlan().energy_j, frontier_.MinEnergyPlan().energy_j);
  ASSERT_NE(thin.NoSlowdownPlan(), nullptr);
  EXPECT_EQ(thin.NoSlowdownPlan()->energy_j, frontier_.NoSlowdownPlan()->energy_j);
  EXPECT_EQ(ThinFrontier(frontier_, 0).plans.size(), before);
  EXPECT_EQ(ThinFrontier(frontier_, before + 5).plans.size(), before);
}

TEST_F(PlanBookTest, AStagesListIsThePlanAsOptimizeWritesItAndIsBuiltOnce) {
  Result<std::shared_ptr<const PlanBook>> book = PlanBook::Create(spec_, profile_, 60, frontier_);
  ASSERT_TRUE(book.ok()) << book.status().ToString();
  for (int k = 0; k < (*book)->num_plans(); k += 7) {
    const StagePlan expected = PlanByStage(problem_, frontier_.plans[k].choice);
    for (int s = 0; s < 4; ++s) {
      std::shared_ptr<const std::string> text = (*book)->StagePlanJson(k, s);
      const Json list = Json::parse(*text);
      ASSERT_EQ(list.size(), expected[s].size());
      for (size_t i = 0; i < list.size(); ++i) {
        EXPECT_EQ(list[i]["instruction"], InstructionName(expected[s][i].instruction));
        EXPECT_EQ(list[i]["microbatch"], expected[s][i].microbatch);
        EXPECT_EQ(list[i]["sm_clock_mhz"], expected[s][i].freq_mhz) << "plan " << k << " stage " << s << " #" << i;
      }
      EXPECT_EQ((*book)->StagePlanJson(k, s).get(), text.get()) << "built again instead of cached";
    }
  }
}

TEST_F(PlanBookTest, APlanThatDoesNotFitTheJobIsRefused) {
  Frontier bad = frontier_;
  bad.plans[3].choice.pop_back();
  Result<std::shared_ptr<const PlanBook>> book = PlanBook::Create(spec_, profile_, 60, bad);
  ASSERT_FALSE(book.ok());
  EXPECT_NE(book.status().message().find("choices for"), std::string::npos) << book.status().message();
}

}  // namespace
}  // namespace perseus::server
