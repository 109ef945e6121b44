#include "carbon/iso_time.h"

#include <gtest/gtest.h>

namespace perseus::carbon {
namespace {

TEST(IsoTime, ParsesTheFormatsOfOurSources) {
  EXPECT_EQ(*ParseIsoUtc("1970-01-01T00:00:00Z"), 0);
  EXPECT_EQ(*ParseIsoUtc("2022-01-01 00:00:00+00:00"), 1640995200);
  EXPECT_EQ(*ParseIsoUtc("2022-01-01T00:00:00Z"), 1640995200);
  EXPECT_EQ(*ParseIsoUtc("2024-11-30T06:00:00.000Z"), 1732946400);
  EXPECT_EQ(*ParseIsoUtc("2022-01-01T01:00:00+01:00"), 1640995200);
  EXPECT_EQ(*ParseIsoUtc("2022-01-01T00:00"), 1640995200);
}

TEST(IsoTime, RejectsGarbageWithTheText) {
  Result<int64_t> r = ParseIsoUtc("yesterday");
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().message(), "expected an ISO-8601 UTC timestamp, got 'yesterday'");
  EXPECT_FALSE(ParseIsoUtc("2022-13-01T00:00:00Z").ok());
  EXPECT_FALSE(ParseIsoUtc("2022-01-01T00:00:00Zjunk").ok());
  // Days a month does not have are not rolled into the next month.
  EXPECT_EQ(ParseIsoUtc("2022-02-29T00:00:00Z").status().message(),
            "no such date: 2022-02-29 in '2022-02-29T00:00:00Z'");
  EXPECT_FALSE(ParseIsoUtc("2022-04-31T00:00:00Z").ok());
  EXPECT_FALSE(ParseIsoUtc("1900-02-29T00:00:00Z").ok());
  EXPECT_TRUE(ParseIsoUtc("2024-02-29T00:00:00Z").ok());
  EXPECT_TRUE(ParseIsoUtc("2000-02-29T00:00:00Z").ok());
}

TEST(IsoTime, FormatsAndRoundTrips) {
  EXPECT_EQ(FormatIsoUtc(1640995200), "2022-01-01T00:00:00Z");
  for (int64_t t : {0LL, 951782400LL, 1709164800LL, 1732946400LL + 3599}) EXPECT_EQ(*ParseIsoUtc(FormatIsoUtc(t)), t);
  EXPECT_EQ(HourOfDayUtc(1640995200 + 5 * 3600 + 59), 5);
}

TEST(IsoTime, HourOfWeekCountsFromMondayMidnight) {
  EXPECT_EQ(HourOfWeekUtc(*ParseIsoUtc("2022-01-03T00:00:00Z")), 0);  // a Monday
  EXPECT_EQ(HourOfWeekUtc(*ParseIsoUtc("2022-01-01T05:00:59Z")), 5 * 24 + 5);  // a Saturday
  EXPECT_EQ(HourOfWeekUtc(*ParseIsoUtc("2022-01-09T23:59:59Z")), 167);  // a Sunday
  EXPECT_EQ(HourOfWeekUtc(0), 3 * 24);  // 1970-01-01, a Thursday
  EXPECT_EQ(HourOfWeekUtc(-1), 2 * 24 + 23);
}

}  // namespace
}  // namespace perseus::carbon
