// Tests of the CSV reader: quoting, line tracking and error texts.
#include "common/csv_reader.h"

#include <gtest/gtest.h>

namespace perseus {
namespace {

TEST(CsvReader, ParsesHeaderRowsAndLines) {
  Result<CsvTable> t = ParseCsv("a,b\n1,2\n\n3,\"x,y\"\n", "t.csv");
  ASSERT_TRUE(t.ok()) << t.status().ToString();
  ASSERT_EQ(t->rows.size(), 2u);
  EXPECT_EQ(t->rows[0].line, 2);
  EXPECT_EQ(t->rows[1].line, 4);
  EXPECT_EQ(t->rows[1].fields[1], "x,y");
  EXPECT_EQ(t->Column("b"), 1);
  EXPECT_EQ(t->Column("c"), -1);
}

TEST(CsvReader, HandlesCrlfAndEscapedQuotes) {
  Result<CsvTable> t = ParseCsv("a,b\r\n\"he said \"\"hi\"\"\",2\r\n", "t.csv");
  ASSERT_TRUE(t.ok());
  EXPECT_EQ(t->rows[0].fields[0], "he said \"hi\"");
  EXPECT_EQ(t->rows[0].fields[1], "2");
}

TEST(CsvReader, NumberErrorsSayWhere) {
  Result<CsvTable> t = ParseCsv("a,b\n1,abc\n", "t.csv");
  ASSERT_TRUE(t.ok());
  Result<double> v = t->Number(t->rows[0], 1);
  ASSERT_FALSE(v.ok());
  EXPECT_EQ(v.status().message(), "t.csv:2: column 'b': expected a number, got 'abc'");
  EXPECT_FALSE(t->Number(t->rows[0], 0).ok() == false);
  // strtod took hexadecimal; a number is decimal (ParseDecimal). Fields are trimmed, so " 5" is 5.
  t = ParseCsv("a,b\n0x10, 5\n", "t.csv");
  ASSERT_TRUE(t.ok());
  EXPECT_EQ(t->Number(t->rows[0], 0).status().message(), "t.csv:2: column 'a': expected a number, got '0x10'");
  EXPECT_EQ(*t->Number(t->rows[0], 1), 5);
}

TEST(CsvReader, RejectsEmptyAndUnterminated) {
  EXPECT_EQ(ParseCsv("", "e.csv").status().message(), "e.csv: empty file, expected a header row");
  EXPECT_EQ(ParseCsv("a\n\"x\n", "u.csv").status().message(), "u.csv:2: unterminated quoted field");
  EXPECT_EQ(ParseCsv("a\n1\n", "m.csv")->RequireColumn("z").status().message(), "m.csv:1: missing column 'z'");
}

// A NUL byte cut a field short where C string functions read it ("1\0" + "9"
// read as 1): any NUL is refused, with its line.
TEST(CsvReader, ANulByteIsRefusedWithItsLine) {
  EXPECT_EQ(ParseCsv(std::string("a,b\n1,2\n3,4\0" "9\n", 14), "n.csv").status().message(),
            "n.csv:3: a NUL byte; expected a text file (is it binary or UTF-16?)");
  EXPECT_FALSE(ParseCsv(std::string("\xff\xfe" "a\0,\0b\0", 9), "utf16.csv").ok());
}

TEST(CsvReader, RowsHaveTheHeadersFieldsAndTheHeaderNoNameTwice) {
  // A thousands separator shifts a row: rejected, not read as other values.
  EXPECT_EQ(ParseCsv("a,b,c\n1,2,3\n1,200,0.5,21\n", "x.csv").status().message(),
            "x.csv:3: expected 3 fields (as the header), got 4");
  EXPECT_EQ(ParseCsv("a,b,c\n1,2\n", "s.csv").status().message(), "s.csv:2: expected 3 fields (as the header), got 2");
  // Trailing commas on the header or the rows are harmless.
  Result<CsvTable> t = ParseCsv("a,b,\n1,2,\n3,4\n5,6,,\n", "t.csv");
  ASSERT_TRUE(t.ok()) << t.status().ToString();
  EXPECT_EQ(t->header.size(), 2u);
  EXPECT_EQ(t->rows.size(), 3u);
  EXPECT_EQ(ParseCsv("time,energy,time\n1,2,3\n", "d.csv").status().message(),
            "d.csv:1: column 'time' appears twice in the header (columns 1 and 3)");
  EXPECT_EQ(ParseCsv("a,,b\n1,2,3\n", "n.csv").status().message(), "n.csv:1: column 2 of the header has no name");
}

TEST(CsvReader, ALoneCarriageReturnEndsALine) {
  Result<CsvTable> t = ParseCsv("a,b\r1,2\r3,4\r", "mac.csv");
  ASSERT_TRUE(t.ok()) << t.status().ToString();
  ASSERT_EQ(t->rows.size(), 2u);
  EXPECT_EQ(t->rows[1].line, 3);
  EXPECT_EQ(t->rows[1].fields[1], "4");
}

}  // namespace
}  // namespace perseus
