#include "carbon/intensity_trace.h"

#include <gtest/gtest.h>

#include <cmath>
#include <fstream>

#include "carbon/intensity_source.h"

#include "common/temp_dir_for_test.h"

namespace perseus::carbon {
namespace {

TEST(CsvTrace, ReadsAndResamplesToHours) {
  ScopedTempDir tmp;
  std::string path = tmp.Write("trace.csv",
                                "timestamp,gco2_per_kwh\n"
                                "2022-01-01T00:00:00Z,100\n"
                                "2022-01-01T01:30:00Z,200\n"
                                "2022-01-01T03:00:00Z,400\n");
  Result<IntensityTrace> t = LoadCsvTrace(path);
  ASSERT_TRUE(t.ok()) << t.status().ToString();
  EXPECT_EQ(t->start_unix_s, 1640995200);
  ASSERT_EQ(t->size(), 4);
  EXPECT_DOUBLE_EQ(t->carbon_g_per_kwh[0], 100);
  EXPECT_DOUBLE_EQ(t->carbon_g_per_kwh[1], 200);
  EXPECT_DOUBLE_EQ(t->carbon_g_per_kwh[2], 300);  // no row in this hour: interpolated
  EXPECT_DOUBLE_EQ(t->carbon_g_per_kwh[3], 400);
  ASSERT_EQ(t->notes.size(), 1u);
  EXPECT_NE(t->notes[0].find("filled 1 hour(s)"), std::string::npos);
}

TEST(CsvTrace, ErrorsNameFileAndLine) {
  ScopedTempDir tmp;
  std::string bad =
      tmp.Write("bad.csv", "timestamp,gco2_per_kwh\n2022-01-01T00:00:00Z,100\n2022-01-01T01:00:00Z,abc\n");
  Result<IntensityTrace> t = LoadCsvTrace(bad);
  ASSERT_FALSE(t.ok());
  EXPECT_EQ(t.status().message().substr(0, bad.size() + 3), bad + ":3:");
  EXPECT_NE(t.status().message().find("gco2_per_kwh"), std::string::npos);

  std::string back = tmp.Write("back.csv", "timestamp,gco2_per_kwh\n2022-01-01T05:00:00Z,1\n2022-01-01T01:00:00Z,2\n");
  t = LoadCsvTrace(back);
  ASSERT_FALSE(t.ok());
  EXPECT_EQ(t.status().message(), back + ":3: timestamp 2022-01-01T01:00:00Z is not after the previous row's "
                                         "2022-01-01T05:00:00Z");

  std::string ts = tmp.Write("ts.csv", "timestamp,gco2_per_kwh\nnoon,1\n");
  t = LoadCsvTrace(ts);
  ASSERT_FALSE(t.ok());
  EXPECT_EQ(t.status().message(), ts + ":2: column 'timestamp': expected an ISO-8601 UTC timestamp, got 'noon'");

  std::string col = tmp.Write("col.csv", "time,ci\n2022-01-01T00:00:00Z,1\n");
  EXPECT_FALSE(LoadCsvTrace(col).ok());
}

TEST(EiaTrace, FillsTheThreeEmptyCisoCells) {
  const std::string path = std::string(PERSEUS_SHARED_DATA) + "/carbon/eia2022_CISO_hourly_ci.csv";
  if (!std::ifstream(path)) GTEST_SKIP() << "shared data absent: " << path;
  Result<IntensityTrace> t = LoadEiaTrace(path);
  ASSERT_TRUE(t.ok()) << t.status().ToString();
  EXPECT_EQ(t->size(), 8760);
  EXPECT_EQ(t->start_unix_s, 1640995200);
  ASSERT_EQ(t->notes.size(), 1u);
  EXPECT_NE(t->notes[0].find("filled 3 hour(s) by linear interpolation (3 empty value cell(s)"), std::string::npos);
  for (double v : t->carbon_g_per_kwh) ASSERT_TRUE(std::isfinite(v));
  // 2022-01-05 10:00 (row 108, window 106) lies between its neighbours.
  EXPECT_DOUBLE_EQ(t->carbon_g_per_kwh[106], 0.5 * (t->carbon_g_per_kwh[105] + t->carbon_g_per_kwh[107]));
  EXPECT_EQ(*EiaTracePath("/d", "NYIS"), "/d/carbon/eia2022_NYIS_hourly_ci.csv");
  EXPECT_FALSE(EiaTracePath("/d", "ERCO").ok());
}

// No look-ahead: an hour's value is read once the hour is over.
TEST(TraceSource, ReadsTheHourBeforeAndClampsOutside) {
  IntensityTrace t;
  t.start_unix_s = 3600;
  t.carbon_g_per_kwh = {10, 20};
  TraceIntensitySource s(t);
  EXPECT_DOUBLE_EQ(s.Current(3600 + 3599).carbon_g_per_kwh, 10);  // the first hour: nothing before it
  EXPECT_TRUE(s.Current(3600 + 3599).stale);
  EXPECT_DOUBLE_EQ(s.Current(7200).carbon_g_per_kwh, 10);  // hour 1 reads hour 0
  EXPECT_FALSE(s.Current(7200).stale);
  EXPECT_EQ(s.Current(7200 + 1800).unix_s, 3600);
  EXPECT_DOUBLE_EQ(s.Current(10800).carbon_g_per_kwh, 20);  // just after the trace: its last hour, complete
  EXPECT_FALSE(s.Current(10800).stale);
  EXPECT_TRUE(s.Current(0).stale);
  EXPECT_TRUE(s.Current(99999).stale);
  EXPECT_DOUBLE_EQ(FixedIntensitySource(42).Current(5).carbon_g_per_kwh, 42);
}

}  // namespace
}  // namespace perseus::carbon
