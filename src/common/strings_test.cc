#include "common/strings.h"

#include <gtest/gtest.h>

namespace perseus {
namespace {

TEST(EscapeControlChars, KeepsPrintableTextAndUtf8) {
  EXPECT_EQ(EscapeControlChars("job-1: running, 3/4 ranks"), "job-1: running, 3/4 ranks");
  EXPECT_EQ(EscapeControlChars("Zürich \xe2\x82\xac"), "Zürich \xe2\x82\xac");  // ü and €: not C1 controls
  EXPECT_EQ(EscapeControlChars(""), "");
}

TEST(EscapeControlChars, ShowsControlCharactersAsEscapes) {
  EXPECT_EQ(EscapeControlChars("a\x1b[2Jb"), "a\\x1b[2Jb");
  EXPECT_EQ(EscapeControlChars("one\ntwo\tthree\r"), "one\\ntwo\\tthree\\x0d");
  EXPECT_EQ(EscapeControlChars(std::string("nul\0del\x7f", 8)), "nul\\x00del\\x7f");
  EXPECT_EQ(EscapeControlChars("csi \xc2\x9b" "31m"), "csi \\u009b31m");  // U+009B: CSI on some terminals
  EXPECT_EQ(EscapeControlChars("cut \xc2"), "cut \\xc2");                // not UTF-8: shown as its byte
  EXPECT_EQ(EscapeControlChars("raw \x9b" "31m"), "raw \\x9b31m");        // a raw C1 byte (a proxy's page)
  EXPECT_EQ(EscapeControlChars("\xff\x80\x80\xf8\x88"), "\\xff\\x80\\x80\\xf8\\x88");  // no UTF-8 lead byte
  EXPECT_EQ(EscapeControlChars("a\\x1b"), "a\\\\x1b");                  // a backslash is doubled
  EXPECT_EQ(EscapeControlChars("abc\xe2\x80\xaegnp.exe"), "abc\\u202egnp.exe");  // right-to-left override
  EXPECT_EQ(EscapeControlChars("\xf0\x9f\x98\x80 \xe2\x82"), "\xf0\x9f\x98\x80 \\xe2\\x82");  // emoji kept; cut one not
}

TEST(CutText, CutsOnACharacterBoundaryAndSaysSo) {
  EXPECT_EQ(CutText("short", 10), "short");
  EXPECT_EQ(CutText("abcdef", 3), "abc...");
  EXPECT_EQ(CutText("ab\xc3\xbc", 3), "ab...");  // not inside the two bytes of ü
  EXPECT_EQ(ShownText("\x1b[2Jabcdef", 6), "\\x1b[2Jab...");  // cut, then escaped
}

TEST(ParseDecimal, TakesDecimalNumbersOnly) {
  EXPECT_EQ(ParseDecimal("1.5"), 1.5);
  EXPECT_EQ(ParseDecimal("-2"), -2.0);
  EXPECT_EQ(ParseDecimal("+2"), 2.0);
  EXPECT_EQ(ParseDecimal("3e-2"), 0.03);
  EXPECT_EQ(ParseDecimal("1E+3"), 1000.0);
  EXPECT_EQ(ParseDecimal(".5"), 0.5);
  // strtod took all of these: hexadecimal, infinity, NaN, spaces, a double sign, overflow.
  for (const char* text : {"", "0x10", "0x1p3", "inf", "-inf", "nan", " 1", "1 ", "+-1", "+", "1e400", "1,5", "1.5.2",
                           "12abc"}) {
    EXPECT_EQ(ParseDecimal(text), std::nullopt) << text;
  }
}

}  // namespace
}  // namespace perseus
