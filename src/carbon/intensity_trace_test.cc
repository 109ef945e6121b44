#include "carbon/intensity_trace.h"

#include <gtest/gtest.h>

#include <cmath>
#include <fstream>

#include "carbon/eia_trace_for_test.h"
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

// Sub-hourly data: an hour is the mean of its values (empty cells left out),
// not its last sample, and a note says so.
TEST(CsvTrace, AveragesSubHourlySamples) {
  ScopedTempDir tmp;
  std::string path = tmp.Write("trace.csv",
                                "timestamp,gco2_per_kwh\n"
                                "2022-01-01T00:00:00Z,100\n"
                                "2022-01-01T00:15:00Z,200\n"
                                "2022-01-01T00:30:00Z,\n"
                                "2022-01-01T00:45:00Z,600\n"
                                "2022-01-01T01:00:00Z,50\n"
                                "2022-01-01T02:10:00Z,\n"
                                "2022-01-01T02:20:00Z,\n"
                                "2022-01-01T03:00:00Z,150\n");
  Result<IntensityTrace> t = LoadCsvTrace(path);
  ASSERT_TRUE(t.ok()) << t.status().ToString();
  ASSERT_EQ(t->size(), 4);
  EXPECT_DOUBLE_EQ(t->carbon_g_per_kwh[0], 300);  // (100 + 200 + 600) / 3
  EXPECT_DOUBLE_EQ(t->carbon_g_per_kwh[1], 50);
  EXPECT_DOUBLE_EQ(t->carbon_g_per_kwh[2], 100);  // rows, but no value: interpolated
  EXPECT_DOUBLE_EQ(t->carbon_g_per_kwh[3], 150);
  ASSERT_EQ(t->notes.size(), 2u);
  EXPECT_EQ(t->notes[0], path + ": averaged 3 values into 1 hour(s) with more than one");
  EXPECT_NE(t->notes[1].find("filled 1 hour(s) by linear interpolation (3 empty value cell(s), 0 hour(s) without a row)"),
            std::string::npos)
      << t->notes[1];
}

// Half-hourly EIA rows with every cell given: averaged, and no note claims
// the fuel mix had cells filled (it did, for any note at all).
TEST(EiaTrace, SubHourlyRowsAreAveragedWithoutAFilledCellsNote) {
  ScopedTempDir tmp;
  std::string text = "timestamp,WND,SUN,WAT,OIL,NG,COL,NUC,OTH,avg_CI\n";
  for (int h = 0; h < 3; ++h) {
    for (int half = 0; half < 2; ++half) {
      text += "2022-01-01 0" + std::to_string(h) + (half ? ":30" : ":00") + ":00+00:00,100,0,0,0,100,0,0,0," +
              std::to_string(200 + 100 * half) + "\n";
    }
  }
  Result<IntensityTrace> t = LoadEiaTrace(tmp.Write("eia.csv", text));
  ASSERT_TRUE(t.ok()) << t.status().ToString();
  ASSERT_EQ(t->size(), 3);
  EXPECT_DOUBLE_EQ(t->carbon_g_per_kwh[1], 250);
  for (const std::string& note : t->notes) EXPECT_EQ(note.find("fuel mix"), std::string::npos) << note;
  EXPECT_EQ(t->generation.size(), kEiaFuelCount);
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

TEST(CsvTrace, RejectsMistypedYearsAndImpossibleIntensities) {
  ScopedTempDir tmp;
  const std::string head = "timestamp,gco2_per_kwh\n2022-01-01T00:00:00Z,100\n2022-01-01T01:00:00Z,110\n";
  // A mistyped year was a span of centuries, filled hour by hour until memory ran out.
  std::string far = tmp.Write("far.csv", head + "2202-01-01T00:00:00Z,300\n");
  EXPECT_EQ(LoadCsvTrace(far).status().message(),
            far + ":4: timestamp 2202-01-01T00:00:00Z is 1577831 hours after the previous row's 2022-01-01T01:00:00Z; "
                  "a trace may skip at most 744 hours (a mistyped date?)");
  // A long span in steps of a month is refused as a whole.
  std::string steps = "timestamp,gco2_per_kwh\n";
  for (int year = 2000; year <= 2012; ++year) {
    for (int month = 1; month <= 12; ++month) steps += std::to_string(year) + "-" + (month < 10 ? "0" : "") + std::to_string(month) + "-01T00:00:00Z,100\n";
  }
  std::string span = tmp.Write("span.csv", steps);
  EXPECT_EQ(LoadCsvTrace(span).status().message().substr(0, span.size() + 20), span + ": spans 113233 hours");
  std::string neg = tmp.Write("neg.csv", head + "2022-01-01T02:00:00Z,-5\n");
  EXPECT_EQ(LoadCsvTrace(neg).status().message(), neg + ":4: column 'gco2_per_kwh': must be >= 0, got -5");
  std::string huge = tmp.Write("huge.csv", head + "2022-01-01T02:00:00Z,1e100\n");
  EXPECT_EQ(LoadCsvTrace(huge).status().message(), huge + ":4: column 'gco2_per_kwh': carbon intensity 1e+100 gCO2/kWh: expected 0 to 10000");
  // A month without rows is still read, and noted as filled.
  std::string month = tmp.Write("month.csv", head + "2022-01-31T01:00:00Z,120\n");
  Result<IntensityTrace> t = LoadCsvTrace(month);
  ASSERT_TRUE(t.ok()) << t.status().ToString();
  EXPECT_EQ(t->carbon_g_per_kwh.size(), 30u * 24 + 2);
}

TEST(EiaTrace, ReadsTheFuelMix) {
  ScopedTempDir tmp;
  const std::string header = "timestamp,WND,SUN,WAT,OIL,NG,COL,NUC,OTH,avg_CI\n";
  std::string path = tmp.Write("eia.csv", header +
                                              "2022-01-01 00:00:00+00:00,100,0,0,0,100,0,0,0,250.5\n"
                                              "2022-01-01 01:00:00+00:00,,0,0,0,100,0,0,0,250.5\n"
                                              "2022-01-01 02:00:00+00:00,300,0,0,0,100,0,0,0,130.75\n");
  Result<IntensityTrace> t = LoadEiaTrace(path);
  ASSERT_TRUE(t.ok()) << t.status().ToString();
  ASSERT_EQ(t->generation.size(), 8u);
  EXPECT_EQ(t->generation[0].fuel, "WND");
  EXPECT_DOUBLE_EQ(t->generation[4].lifecycle_g_per_kwh, 490);
  EXPECT_DOUBLE_EQ(t->generation[0].mw[1], 200);  // the empty cell, interpolated and noted
  ASSERT_FALSE(t->notes.empty());
  EXPECT_NE(t->notes.back().find("column(s) WND"), std::string::npos) << t->notes.back();
  std::vector<double> mw, factors;
  for (const FuelGeneration& g : t->generation) {
    mw.push_back(g.mw[0]);
    factors.push_back(g.lifecycle_g_per_kwh);
  }
  EXPECT_DOUBLE_EQ(MixIntensity(mw, factors), 250.5);

  // Without every fuel column: intensity only, with a note naming the missing ones.
  std::string partial = tmp.Write("partial.csv", "timestamp,WND,GAS,avg_CI\n2022-01-01 00:00:00+00:00,1,2,200\n");
  t = LoadEiaTrace(partial);
  ASSERT_TRUE(t.ok()) << t.status().ToString();
  EXPECT_TRUE(t->generation.empty());
  ASSERT_EQ(t->notes.size(), 1u);
  EXPECT_EQ(t->notes[0], "fuel mix not used: " + partial + ": no column 'SUN', 'WAT', 'OIL', 'NG', 'COL', 'NUC', 'OTH'");
  // With none of them: intensity only, nothing to say.
  t = LoadEiaTrace(tmp.Write("ci_only.csv", "timestamp,avg_CI\n2022-01-01 00:00:00+00:00,200\n"));
  ASSERT_TRUE(t.ok()) << t.status().ToString();
  EXPECT_TRUE(t->generation.empty());
  EXPECT_TRUE(t->notes.empty());

  // A fuel cell the forecasts cannot use costs the mix, not the trace; the
  // note names the file, line and column.
  std::string bad = tmp.Write("bad.csv", header + "2022-01-01 00:00:00+00:00,1,0,0,0,-5,0,0,0,200\n");
  t = LoadEiaTrace(bad);
  ASSERT_TRUE(t.ok()) << t.status().ToString();
  EXPECT_TRUE(t->generation.empty());
  ASSERT_FALSE(t->notes.empty());
  EXPECT_NE(t->notes.back().find("fuel mix not used: " + bad + ":2: column 'NG': must be >= 0"), std::string::npos)
      << t->notes.back();
  // A bad avg_CI cell still fails the load.
  std::string bad_ci = tmp.Write("bad_ci.csv", header + "2022-01-01 00:00:00+00:00,1,0,0,0,5,0,0,0,-1\n");
  EXPECT_EQ(LoadEiaTrace(bad_ci).status().message().find(bad_ci + ":2: column 'avg_CI'"), 0u);
}

// The emission factors are those the files' avg_CI is computed from.
TEST(EiaTrace, TheFuelMixReproducesAvgCi) {
  for (const char* region : {"CISO", "NYIS"}) {
    std::optional<IntensityTrace> t = SharedEiaTrace(region);
    if (!t) GTEST_SKIP() << "shared data absent or unreadable: " << region;
    ASSERT_EQ(t->generation.size(), 8u);
    std::vector<double> factors;
    for (const FuelGeneration& g : t->generation) factors.push_back(g.lifecycle_g_per_kwh);
    int checked = 0;
    for (int h = 0; h < t->size(); ++h) {
      std::vector<double> mw;
      for (const FuelGeneration& g : t->generation) mw.push_back(g.mw[h]);
      // Hours with an interpolated cell are not exact: skip the few around them.
      if (std::fabs(MixIntensity(mw, factors) - t->carbon_g_per_kwh[h]) < 1e-6) ++checked;
    }
    EXPECT_GT(checked, t->size() - 40) << region;
  }
}

TEST(EiaTrace, FillsTheThreeEmptyCisoCells) {
  std::optional<IntensityTrace> t = SharedEiaTrace("CISO");
  if (!t) GTEST_SKIP() << "shared data absent or unreadable: CISO";
  EXPECT_EQ(t->size(), 8760);
  EXPECT_EQ(t->start_unix_s, 1640995200);
  ASSERT_EQ(t->notes.size(), 2u);
  EXPECT_NE(t->notes[0].find("filled 3 hour(s) by linear interpolation (3 empty value cell(s)"), std::string::npos);
  // The same three rows have no fuel mix either: one note for all columns.
  EXPECT_NE(t->notes[1].find("fuel mix: filled empty cells by linear interpolation in column(s) WND, SUN,"),
            std::string::npos) << t->notes[1];
  for (double v : t->carbon_g_per_kwh) ASSERT_TRUE(std::isfinite(v));
  // 2022-01-05 10:00 (row 108, window 106) lies between its neighbours.
  EXPECT_DOUBLE_EQ(t->carbon_g_per_kwh[106], 0.5 * (t->carbon_g_per_kwh[105] + t->carbon_g_per_kwh[107]));
  EXPECT_EQ(*EiaTracePath("/d", "NYIS"), "/d/carbon/eia2022_NYIS_hourly_ci.csv");
  EXPECT_FALSE(EiaTracePath("/d", "ERCO").ok());
}

// One reader for a trace file of either kind, chosen by its header.
TEST(TraceFile, ReadsEitherKindAndNamesBothColumnsWhenNeitherIsThere) {
  ScopedTempDir tmp;
  const std::string eia = tmp.Write("eia.csv", "timestamp,WND,SUN,WAT,OIL,NG,COL,NUC,OTH,avg_CI\n"
                                               "2022-01-01 00:00:00+00:00,100,0,0,0,100,0,0,0,250.5\n"
                                               "2022-01-01 01:00:00+00:00,300,0,0,0,100,0,0,0,130.75\n");
  Result<IntensityTrace> t = LoadTraceFile(eia);
  ASSERT_TRUE(t.ok()) << t.status().ToString();
  EXPECT_EQ(t->carbon_g_per_kwh, (std::vector<double>{250.5, 130.75}));
  EXPECT_EQ(EiaMixAt(*t, 1), (std::vector<double>{300, 0, 0, 0, 100, 0, 0, 0}));
  EXPECT_DOUBLE_EQ(MixIntensity(EiaMixAt(*t, 1), EiaLifecycleFactors()), 130.75);
  // The fuels must be kEiaFuels in their order, else there is no mix to carry.
  IntensityTrace reordered = *t;
  std::swap(reordered.generation[0], reordered.generation[1]);
  EXPECT_TRUE(EiaMixAt(reordered, 0).empty());

  const std::string csv = tmp.Write("trace.csv", "timestamp,gco2_per_kwh\n2022-01-01T00:00:00Z,300\n");
  t = LoadTraceFile(csv);
  ASSERT_TRUE(t.ok()) << t.status().ToString();
  EXPECT_EQ(t->carbon_g_per_kwh, (std::vector<double>{300}));
  EXPECT_TRUE(EiaMixAt(*t, 0).empty());

  const std::string neither = tmp.Write("neither.csv", "timestamp,ci\n2022-01-01T00:00:00Z,300\n");
  EXPECT_EQ(LoadTraceFile(neither).status().message(),
            neither + ":1: missing column 'gco2_per_kwh' (a CSV trace) or 'avg_CI' (an EIA file)");
  EXPECT_FALSE(LoadTraceFile(tmp.Path("absent.csv")).ok());
  // A bad cell in an EIA file is located as LoadEiaTrace locates it.
  const std::string bad = tmp.Write("bad.csv", "timestamp,avg_CI\n2022-01-01T00:00:00Z,-3\n");
  EXPECT_EQ(LoadTraceFile(bad).status().message().find(bad + ":2: column 'avg_CI'"), 0u);
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
  EXPECT_TRUE(s.Current(7200).mix_mw.empty());  // a trace without a fuel mix
}

// With an EIA trace, each reading carries the fuel mix of the hour it reads.
TEST(TraceSource, ReadsTheFuelMixOfTheSameHour) {
  IntensityTrace t;
  t.start_unix_s = 3600;
  t.carbon_g_per_kwh = {10, 20};
  for (const EiaFuel& fuel : kEiaFuels) t.generation.push_back({fuel.column, fuel.lifecycle_g_per_kwh, {1, 2}});
  t.generation[4].mw = {5, 6};
  TraceIntensitySource s(t);
  EXPECT_EQ(s.Current(7200 + 60).mix_mw, (std::vector<double>{1, 1, 1, 1, 5, 1, 1, 1}));  // hour 0's
  EXPECT_EQ(s.Current(10800).mix_mw, (std::vector<double>{2, 2, 2, 2, 6, 2, 2, 2}));      // hour 1's
  EXPECT_EQ(s.Current(0).mix_mw, s.Current(7200).mix_mw);                                 // before: the first
  EXPECT_EQ(s.Current(99999).mix_mw, s.Current(10800).mix_mw);                            // after: the last
}

// A job's first decision starts from the hours a reader polling every hour
// would have read: the trace's hours before the one containing now, the last
// of them what Current reads, at most max_hours of them.
TEST(TraceSource, HistoryIsWhatHourlyReadsWouldHaveGiven) {
  IntensityTrace t;
  t.start_unix_s = 3600;
  t.carbon_g_per_kwh = {10, 20, 30, 40};
  for (const EiaFuel& fuel : kEiaFuels) t.generation.push_back({fuel.column, fuel.lifecycle_g_per_kwh, {1, 2, 3, 4}});
  TraceIntensitySource s(t);
  auto values = [](const std::vector<IntensityReading>& h) {
    std::vector<double> out;
    for (const IntensityReading& r : h) out.push_back(r.carbon_g_per_kwh);
    return out;
  };
  const int64_t hour3 = 3600 + 3 * 3600 + 1234;  // within the trace's hour 3
  const std::vector<IntensityReading> h = s.History(hour3, 24);
  EXPECT_EQ(values(h), (std::vector<double>{10, 20, 30}));
  EXPECT_EQ(h.back().unix_s, s.Current(hour3).unix_s);  // the last is what Current reads
  EXPECT_DOUBLE_EQ(h.back().carbon_g_per_kwh, s.Current(hour3).carbon_g_per_kwh);
  for (size_t i = 0; i < h.size(); ++i) {
    EXPECT_EQ(h[i].unix_s, 3600 + static_cast<int64_t>(i) * 3600);
    EXPECT_FALSE(h[i].stale);
    EXPECT_EQ(h[i].mix_mw, std::vector<double>(kEiaFuelCount, static_cast<double>(i + 1)));
  }
  EXPECT_EQ(values(s.History(hour3, 2)), (std::vector<double>{20, 30}));  // the last max_hours
  EXPECT_TRUE(s.History(3600 + 60, 24).empty());                         // the first hour: nothing before it
  EXPECT_TRUE(s.History(0, 24).empty());                                 // before the trace
  EXPECT_EQ(values(s.History(3600 + 10 * 3600, 24)), (std::vector<double>{10, 20, 30, 40}));  // after it: all of it
  EXPECT_EQ(values(s.History(3600 + 10 * 3600, 7)), (std::vector<double>{40}));  // the hours since are not in it
  EXPECT_TRUE(FixedIntensitySource(42).History(hour3, 24).empty());
}

}  // namespace
}  // namespace perseus::carbon
