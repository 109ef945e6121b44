#include "runtime/protocol/job_requests.h"

#include <gtest/gtest.h>

#include "runtime/protocol/job_spec.h"

namespace perseus::protocol {
namespace {

TEST(StragglerDeclarationTest, RoundTripsAndNamesBadFields) {
  const StragglerDeclaration d{3, 1.25};
  Result<StragglerDeclaration> back = ParseStragglerDeclaration(StragglerDeclarationToJson(d));
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  EXPECT_EQ(*back, d);
  EXPECT_EQ(ParseStragglerDeclaration(Json::parse(R"({"pipeline":1,"slowdown":0.5})")).status().message(),
            "field 'slowdown': expected a number in [1, 100], got 0.5");
  EXPECT_EQ(ParseStragglerDeclaration(Json::parse(R"({"slowdown":1.5})")).status().message(),
            "field 'pipeline': missing");
  EXPECT_EQ(ParseStragglerDeclaration(Json::parse("[1]")).status().message(), "expected a JSON object, got [1]");
}

// The spec the Python module checks and sends is the one the server parses.
TEST(JobSpecTest, TheCanonicalFormParsesBackToTheSameSpec) {
  Result<JobSpec> spec = ParseJobSpec(Json::parse(
      R"({"id":"gpt3","dp":2,"pp":4,"tp":2,"schedule":"1f1b","microbatches":8,"max_clock_changes_per_gpu":16,
          "carbon":{"source":"fixed","value_g_per_kwh":300,"slowdown_budget":0.025}})"));
  ASSERT_TRUE(spec.ok()) << spec.status().ToString();
  Result<JobSpec> back = ParseJobSpec(JobSpecToJson(*spec));
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  EXPECT_EQ(JobSpecToJson(*back), JobSpecToJson(*spec));
  EXPECT_EQ(back->world_size(), 16);
  EXPECT_EQ(ParseJobSpec(Json::parse(R"({"id":"gpt3","dp":2,"pp":0})")).status().message(),
            "field 'pp': expected an integer in [1, 65536], got 0");
}

// A misspelt field was ignored and its default used (a review, 2026-11-28):
// now a request names it; a stored spec of an older release still loads.
TEST(JobSpecTest, UnknownFieldsAreNamedInRequestsAndIgnoredInStoredSpecs) {
  auto error = [](const char* body) { return ParseJobSpec(Json::parse(body)).status().message(); };
  EXPECT_EQ(error(R"({"id":"j","microbatches":4,"schedual":"gpipe"})"), "field 'schedual': unknown field");
  EXPECT_EQ(error(R"({"id":"j","microbatches":4,"straggler":{"treshold":1.5}})"),
            "field 'straggler.treshold': unknown field");
  EXPECT_EQ(error(R"({"id":"j","microbatches":4,"profiling":{"warmup_iteration":5}})"),
            "field 'profiling.warmup_iteration': unknown field");
  EXPECT_EQ(error(R"({"id":"j","microbatches":4,"power_cap":{"average_w":500,"windows_s":10}})"),
            "field 'power_cap.windows_s': unknown field");
  const Json stored = Json::parse(R"({"id":"j","microbatches":4,"retired_field":1,"straggler":{"old":2}})");
  EXPECT_FALSE(ParseJobSpec(stored).ok());
  EXPECT_TRUE(ParseJobSpec(stored, UnknownFields::kIgnore).ok());
  // Every field the canonical form writes is known.
  Result<JobSpec> full = ParseJobSpec(Json::parse(
      R"({"id":"j","microbatches":4,"blocking_power_w":80,"power_cap":{"average_w":500,"peak_w":600,"window_s":10},
          "carbon":{"source":"electricitymaps","zone":"Z","job_hours":10,"pause":"release","restart_s":60,"restart_power_w":100}})"));
  ASSERT_TRUE(full.ok()) << full.status().ToString();
  EXPECT_TRUE(ParseJobSpec(JobSpecToJson(*full)).ok()) << ParseJobSpec(JobSpecToJson(*full)).status().ToString();
  EXPECT_EQ(ParsePowerCapRequest(Json::parse(R"({"average_w":600,"peak":700})"), "").status().message(),
            "field 'peak': unknown field");
  EXPECT_EQ(ParseStragglerDeclaration(Json::parse(R"({"pipeline":1,"slowdown":1.5,"slow":2})")).status().message(),
            "field 'slow': unknown field");
}

// cpp-httplib takes no path: a base URL with one is refused at registration.
// A job stored by a release with the looser check still loads.
TEST(JobSpecTest, ACarbonBaseUrlIsAnAddressAloneAtRegistration) {
  const Json body = Json::parse(
      R"({"id":"j","microbatches":4,"carbon":{"source":"electricitymaps","zone":"Z","base_url":"https://em.example/"}})");
  EXPECT_EQ(ParseJobSpec(body).status().message(),
            "field 'carbon.base_url': 'https://em.example/' ends in '/'; give the address alone (expected e.g. "
            "http://127.0.0.1:7787)");
  EXPECT_TRUE(ParseJobSpec(body, UnknownFields::kIgnore).ok());
}

TEST(JobSpecTest, SingleClockWindowsIsABooleanDefaultTrueThatRoundTrips) {
  Result<JobSpec> spec = ParseJobSpec(
      Json::parse(R"({"id":"j","microbatches":4,"profiling":{"single_clock_windows":false}})"));
  ASSERT_TRUE(spec.ok()) << spec.status().ToString();
  EXPECT_FALSE(spec->profiling.single_clock_windows);
  Result<JobSpec> back = ParseJobSpec(JobSpecToJson(*spec));
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  EXPECT_FALSE(back->profiling.single_clock_windows);
  EXPECT_TRUE(ParseJobSpec(Json::parse(R"({"id":"j","microbatches":4})"))->profiling.single_clock_windows);
  Status bad = ParseJobSpec(Json::parse(R"({"id":"j","microbatches":4,"profiling":{"single_clock_windows":1}})"))
                   .status();
  EXPECT_NE(bad.message().find("profiling.single_clock_windows"), std::string::npos) << bad.ToString();
}

}  // namespace
}  // namespace perseus::protocol
