// Tests of the profile checks: each fires on a constructed case, with the
// exact message, and all stay silent on a clean profile.
#include "profiling/profile_checks.h"

#include <gtest/gtest.h>

#include "perseus/gpu_model.h"
#include "profiling/synthetic_windows.h"

namespace perseus::profiling {
namespace {

// A clean A100-like estimate: 1410 down to 855 MHz, time ~ 1/f for 80% of it,
// power falling with the clock, SEs of 0.2%.
StageEstimate Clean() {
  StageEstimate e;
  for (int mhz = 1410; mhz >= 855; mhz -= 15) {
    ClockEstimate c;
    c.clock_mhz = mhz;
    c.forward_measured = c.backward_measured = c.measured = true;
    const double slow = 0.8 * 1410.0 / mhz + 0.2;
    c.forward_time_s = 0.05 * slow;
    c.backward_time_s = 0.1 * slow;
    c.forward_power_w = c.backward_power_w = 240 + 235 * (mhz - 855) / 555.0;
    c.forward_energy_j = c.forward_power_w * c.forward_time_s;
    c.backward_energy_j = c.backward_power_w * c.backward_time_s;
    c.forward_time_se_s = 0.002 * c.forward_time_s;
    c.backward_time_se_s = 0.002 * c.backward_time_s;
    c.forward_power_se_w = c.backward_power_se_w = 0.002 * c.forward_power_w;
    c.forward_energy_se_j = 0.002 * c.forward_energy_j;
    c.backward_energy_se_j = 0.002 * c.backward_energy_j;
    c.total_energy_se_j = 0.002 * (c.forward_energy_j + c.backward_energy_j);
    e.clocks.push_back(c);
  }
  e.blocking_power_w = 84;
  e.blocking_power_se_w = 3;
  return e;
}

std::vector<std::string> Codes(const std::vector<ProfileIssue>& issues) {
  std::vector<std::string> codes;
  for (const ProfileIssue& i : issues) codes.push_back(i.code);
  return codes;
}

TEST(CheckStage, SilentOnACleanProfile) { EXPECT_TRUE(CheckStage(2, Clean(), PlausibilityLimits{}).empty()); }

TEST(CheckStage, ClockWithoutEffect) {
  StageEstimate e = Clean();
  for (ClockEstimate& c : e.clocks) {
    c.forward_time_s = 0.0501;
    c.backward_time_s = 0.1;
  }
  e.clocks.back().forward_time_s = 0.0502;
  const std::vector<ProfileIssue> issues = CheckStage(3, e, PlausibilityLimits{});
  ASSERT_EQ(Codes(issues), std::vector<std::string>{"clock_has_no_effect"});
  EXPECT_EQ(issues[0].stage, 3);
  EXPECT_EQ(issues[0].message,
            "stage 3's time does not depend on the SM clock (1410 MHz: 150.1 ms, 855 MHz: 150.2 ms per forward and "
            "backward): is the job GPU-bound, and is this rank bound to the GPU it names?");
}

TEST(CheckStage, ClockEffectNeedsAWideEnoughRangeOfMeasuredClocks) {
  StageEstimate e = Clean();
  for (ClockEstimate& c : e.clocks) {
    c.forward_time_s = 0.05;
    c.backward_time_s = 0.1;
    c.measured = c.clock_mhz >= 1290;  // 1290 / 1410 > 0.9: too close to tell
  }
  EXPECT_TRUE(Codes(CheckStage(0, e, PlausibilityLimits{})).empty());
}

TEST(CheckStage, TimeThatFallsWithTheClock) {
  StageEstimate e = Clean();
  e.clocks[20].backward_time_s = 0.95 * e.clocks[10].backward_time_s;  // 1110 MHz faster than 1260 MHz
  // The worst pair: 1110 MHz against its faster neighbour.
  const std::vector<ProfileIssue> issues = CheckStage(1, e, PlausibilityLimits{});
  ASSERT_EQ(Codes(issues), std::vector<std::string>{"time_not_monotonic"});
  EXPECT_EQ(issues[0].message,
            "stage 1's backward time falls as the clock falls: 1125 MHz: 120.27 ms, 1110 MHz: 104.05 ms (by more "
            "than 3 standard errors and 1%)");
  // Within the noise: silent.
  e = Clean();
  e.clocks[11].backward_time_s = 0.999 * e.clocks[10].backward_time_s;
  EXPECT_TRUE(CheckStage(1, e, PlausibilityLimits{}).empty());
}

TEST(CheckStage, ImplausiblePowerOrEnergy) {
  StageEstimate e = Clean();
  e.clocks[4].forward_power_w = 1500;
  e.clocks[4].forward_energy_j = 1500 * e.clocks[4].forward_time_s;
  e.clocks[30].backward_energy_j = -1;
  const std::vector<ProfileIssue> issues = CheckStage(0, e, PlausibilityLimits{});
  ASSERT_EQ(Codes(issues), (std::vector<std::string>{"implausible_power", "implausible_power"}));
  EXPECT_EQ(issues[0].message,
            "stage 0's forward power is implausible at 1 of 38 measured clocks (first: 1350 MHz, 1500 W ± 1 W, "
            "77.7 J; plausible: 20-1000 W and a positive energy)");
  EXPECT_NE(
      issues[1].message.find("stage 0's backward power is implausible at 1 of 38 measured clocks (first: 960 MHz"),
      std::string::npos)
      << issues[1].message;
  // An unmeasured clock is not judged.
  e = Clean();
  e.clocks[4].forward_measured = e.clocks[4].measured = false;
  e.clocks[4].forward_power_w = 1500;
  EXPECT_TRUE(CheckStage(0, e, PlausibilityLimits{}).empty());
}

TEST(CheckStage, HighUncertainty) {
  StageEstimate e = Clean();
  e.clocks[7].total_energy_se_j = 0.023 * (e.clocks[7].forward_energy_j + e.clocks[7].backward_energy_j);
  e.clocks[9].total_energy_se_j = 0.015 * (e.clocks[9].forward_energy_j + e.clocks[9].backward_energy_j);
  const std::vector<ProfileIssue> issues = CheckStage(5, e, PlausibilityLimits{});
  ASSERT_EQ(Codes(issues), std::vector<std::string>{"high_uncertainty"});
  EXPECT_EQ(issues[0].message, "stage 5's energy is uncertain at 2 of 38 clocks (worst: 1305 MHz, ±2.3%; target 1.0%)");
}

TEST(CheckStage, ImplausibleBlockingPower) {
  StageEstimate e = Clean();
  e.blocking_power_w = 520;
  std::vector<ProfileIssue> issues = CheckStage(6, e, PlausibilityLimits{});
  ASSERT_EQ(Codes(issues), std::vector<std::string>{"blocking_power_implausible"});
  EXPECT_EQ(issues[0].message,
            "stage 6's blocking power 520 W ± 3 W is implausible (plausible: 20-1000 W and below the highest "
            "computation power, 475 W)");
  e.blocking_power_w = 5;
  EXPECT_EQ(Codes(CheckStage(6, e, PlausibilityLimits{})), std::vector<std::string>{"blocking_power_implausible"});
  e.blocking_power_se_w = 6;  // 5 W +- 18 W reaches 20 W
  EXPECT_TRUE(CheckStage(6, e, PlausibilityLimits{}).empty());
}

// End to end: estimates from synthetic windows of the GPT-3-like example.
std::vector<StageTruth> ModelTruth() {
  Result<Example> ex = FindExample("gpt3-175b-a100");
  EXPECT_TRUE(ex.ok());
  Result<std::vector<StageTruth>> truth = TruthFromProfile(ex->profile, 83.64);
  EXPECT_TRUE(truth.ok());
  return *truth;
}

StageEstimate EstimateFrom(const std::vector<StageTruth>& truth, double noise_sd) {
  SyntheticConditions c;
  c.energy_relative_sd = noise_sd;
  c.drift_fraction = 0.03;
  const auto windows = SimulateWindows(truth, BaseDesign(8, 38), c);
  Result<StageEstimate> e = EstimateStage(truth[0].clocks_mhz, windows[0]);
  EXPECT_TRUE(e.ok()) << e.status().ToString();
  return *e;
}

TEST(CheckStage, EstimatedProfilesPassOrFailAsTheyShould) {
  std::vector<StageTruth> truth = ModelTruth();
  PlausibilityLimits loose;
  loose.target_relative_se = 0.05;
  EXPECT_TRUE(CheckStage(0, EstimateFrom(truth, 0.03), loose).empty());
  // 3% window noise leaves some clocks above a 1% target.
  EXPECT_EQ(Codes(CheckStage(0, EstimateFrom(truth, 0.03), PlausibilityLimits{})),
            std::vector<std::string>{"high_uncertainty"});
  // A job whose time does not depend on the clock (not GPU-bound).
  for (StageTruth& t : truth) {
    for (size_t i = 0; i < t.clocks_mhz.size(); ++i) {
      t.forward_time_s[i] = t.forward_time_s[0];
      t.backward_time_s[i] = t.backward_time_s[0];
    }
  }
  // (Its blocking power is barely identifiable either: every stage waits alike in every window.)
  const std::vector<std::string> codes = Codes(CheckStage(0, EstimateFrom(truth, 0.03), loose));
  ASSERT_FALSE(codes.empty());
  EXPECT_EQ(codes[0], "clock_has_no_effect");
}

}  // namespace
}  // namespace perseus::profiling
