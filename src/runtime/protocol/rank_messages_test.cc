#include "runtime/protocol/rank_messages.h"

#include <gtest/gtest.h>

namespace perseus::protocol {
namespace {

WindowReport Sample() {
  WindowReport r;
  r.window = 3;
  r.forward_clock_mhz = 1410;
  r.backward_clock_mhz = 1200;
  r.iterations = 2;
  r.cycle_time_s = 1.5;
  r.energy_j = 600;
  r.forward.Add(0.1);
  r.forward.Add(0.2);
  r.backward.Add(0.4);
  r.late_clocks = 1;
  r.achieved_clock_mhz = 1395;
  r.mid_s = 12.5;
  r.clock_switch_latency_s = 0.1;
  r.durations = "framework";
  return r;
}

TEST(RankMessages, AWindowReportSurvivesTheWire) {
  const WindowReport sent = Sample();
  Result<WindowReport> got = ParseWindowReport(WindowReportToJson(sent));
  ASSERT_TRUE(got.ok()) << got.status().ToString();
  EXPECT_EQ(got->window, 3);
  EXPECT_EQ(got->forward.count, 2);
  EXPECT_DOUBLE_EQ(got->forward.time_sq_s2, 0.1 * 0.1 + 0.2 * 0.2);
  EXPECT_EQ(got->achieved_clock_mhz, 1395);
  EXPECT_EQ(got->durations, "framework");
  EXPECT_DOUBLE_EQ(got->clock_switch_latency_s, 0.1);
  EXPECT_EQ(WindowReportToJson(*got), WindowReportToJson(sent));
  Json slow = WindowReportToJson(sent);
  slow["clock_switch_latency_s"] = -0.5;
  EXPECT_EQ(ParseWindowReport(slow).status().message(),
            "field 'clock_switch_latency_s': expected a number in [0, 60], got -0.5");
  slow.erase("clock_switch_latency_s");
  EXPECT_LT(ParseWindowReport(slow)->clock_switch_latency_s, 0);  // not measured
  // Unmeasured energy and unknown clocks are left out, and read back as such.
  WindowReport unmeasured = sent;
  unmeasured.energy_j = -1;
  unmeasured.achieved_clock_mhz = 0;
  const Json j = WindowReportToJson(unmeasured);
  EXPECT_FALSE(j.contains("energy_j"));
  EXPECT_FALSE(j.contains("achieved_clock_mhz"));
  EXPECT_EQ(ParseWindowReport(j)->energy_j, -1);
}

TEST(RankMessages, BadWindowFieldsAreNamed) {
  Json j = WindowReportToJson(Sample());
  j["forward"]["count"] = 0;
  EXPECT_EQ(ParseWindowReport(j).status().message(), "field 'forward.count': expected an integer in [1, 1000000], got 0");
  j = WindowReportToJson(Sample());
  j["energy_j"] = 1e9;
  EXPECT_EQ(ParseWindowReport(j).status().message().rfind("field 'energy_j': expected a number in [0, ", 0), 0u);
  j = WindowReportToJson(Sample());
  j["durations"] = "guessed";
  EXPECT_EQ(ParseWindowReport(j).status().message(),
            "field 'durations': expected \"hooks\" or \"framework\", got \"guessed\"");
}

TEST(RankMessages, IterationReportsSurviveTheWireAndCarryTheRank) {
  std::vector<IterationReport> sent(2);
  sent[0] = {0, 7, 0.5, 120, 3, 0};
  sent[1] = {0, 8, 0.51, 0, 3, 4};
  const Json j = IterationReportsToJson(sent);
  EXPECT_FALSE(j["iterations"][0].contains("schedule_mismatches"));
  EXPECT_FALSE(j.contains("session"));
  Result<IterationReports> parsed = ParseIterationReports(j, 5);
  ASSERT_TRUE(parsed.ok()) << parsed.status().ToString();
  const std::vector<IterationReport>* got = &parsed->reports;
  ASSERT_EQ(got->size(), 2u);
  EXPECT_EQ((*got)[1].rank, 5);
  EXPECT_EQ((*got)[1].iteration, 8);
  EXPECT_EQ((*got)[1].schedule_mismatches, 4);
  EXPECT_EQ((*got)[0].energy_j, 120);
  EXPECT_EQ(ParseIterationReports(IterationReportsToJson(sent, "9f0c"), 5)->session, "9f0c");
  Json bad = j;
  bad["iterations"][1]["compute_time_s"] = 0;
  EXPECT_EQ(ParseIterationReports(bad, 5).status().message().rfind("field 'iterations[1].compute_time_s': ", 0), 0u);
  // One iteration twice in one report was accepted as two and stored once.
  bad = j;
  bad["iterations"][1]["iteration"] = 7;
  EXPECT_EQ(ParseIterationReports(bad, 5).status().message(),
            "field 'iterations[1].iteration': iteration 7 is reported twice (also at iterations[0])");
  bad = j;
  bad["iterations"] = Json::array();
  for (size_t i = 0; i <= kMaxIterationsPerReport; ++i) bad["iterations"].push_back(j["iterations"][0]);
  EXPECT_EQ(ParseIterationReports(bad, 5).status().message().rfind("field 'iterations': expected an array of at most 1000", 0),
            0u);
}

// The session travels; the server's iteration base does not (the server
// assigns it); a session of more than 64 bytes or not a string is named.
TEST(RankMessages, ARegistrationCarriesItsSession) {
  RankRegistration sent{5, 0, 1, 1, "A100", "GPU-5", {1410, 1395}, "9f0c2a7e", 12345};
  Result<RankRegistration> got = ParseRankRegistration(RankRegistrationToJson(sent));
  ASSERT_TRUE(got.ok()) << got.status().ToString();
  EXPECT_EQ(got->session, "9f0c2a7e");
  EXPECT_EQ(got->iteration_base, 0);
  EXPECT_TRUE(SameRankAndGpu(*got, sent));
  sent.session.clear();
  EXPECT_FALSE(RankRegistrationToJson(sent).contains("session"));  // optional: older servers never see it
  Json j = RankRegistrationToJson(sent);
  j["session"] = std::string(65, 'a');
  EXPECT_EQ(ParseRankRegistration(j).status().message().rfind("field 'session': ", 0), 0u)
      << ParseRankRegistration(j).status().message();
  j["session"] = 7;
  EXPECT_EQ(ParseRankRegistration(j).status().message().rfind("field 'session': ", 0), 0u);
  RankRegistration other = sent;
  other.gpu_uuid = "GPU-6";
  EXPECT_FALSE(SameRankAndGpu(other, sent));
}

}  // namespace
}  // namespace perseus::protocol
