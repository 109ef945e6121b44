// Tests of profile parsing: the Zeus CSV format, its validation and the exact
// error texts users see ("x.csv:3: column 'time': ...").
#include "perseus/profile.h"

#include <gtest/gtest.h>

#include <string>

#include "common/temp_dir_for_test.h"

namespace perseus {
namespace {

constexpr char kHeader[] = "stage,instruction,frequency,time,energy\n";

// The message of a parse that must fail.
std::string ParseError(const std::string& text, int expected_stages = -1) {
  Result<Profile> p = ParseProfileCsv(text, "x.csv", expected_stages);
  if (p.ok()) return "<parsed without error>";
  EXPECT_EQ(p.status().code(), Status::Code::kInvalidArgument) << p.status().ToString();
  return p.status().message();
}

// A complete two-stage profile: line numbers 2..9.
std::string TwoStageText() {
  return std::string(kHeader) +
         "0,forward,1410,0.010,2.0\n"   // line 2
         "0,forward,1200,0.012,1.8\n"   // line 3
         "0,backward,1410,0.020,4.0\n"  // line 4
         "0,backward,1200,0.024,3.6\n"  // line 5
         "1,forward,1410,0.011,2.2\n"   // line 6
         "1,forward,1200,0.013,2.0\n"   // line 7
         "1,backward,1410,0.022,4.4\n"  // line 8
         "1,backward,1200,0.026,4.0\n";  // line 9
}

TEST(ProfileParse, ParsesAValidProfile) {
  Result<Profile> p = ParseProfileCsv(TwoStageText(), "x.csv", 2);
  ASSERT_TRUE(p.ok()) << p.status().ToString();
  ASSERT_EQ(p->num_stages(), 2);
  const auto& fwd0 = p->stages[0].at(Instruction::kForward);
  ASSERT_EQ(fwd0.size(), 2u);
  EXPECT_EQ(fwd0[0].freq_mhz, 1410);
  EXPECT_DOUBLE_EQ(fwd0[0].time_s, 0.010);
  EXPECT_DOUBLE_EQ(fwd0[0].energy_j, 2.0);
  EXPECT_EQ(fwd0[1].freq_mhz, 1200);
  EXPECT_DOUBLE_EQ(fwd0[1].time_s, 0.012);
  EXPECT_DOUBLE_EQ(fwd0[1].energy_j, 1.8);
  const auto& bwd1 = p->stages[1].at(Instruction::kBackward);
  ASSERT_EQ(bwd1.size(), 2u);
  EXPECT_EQ(bwd1[1].freq_mhz, 1200);
  EXPECT_DOUBLE_EQ(bwd1[1].time_s, 0.026);
  EXPECT_DOUBLE_EQ(bwd1[1].energy_j, 4.0);
  EXPECT_EQ(p->MaxFreqPoint(1, Instruction::kBackward).freq_mhz, 1410);
  EXPECT_DOUBLE_EQ(p->MaxFreqPoint(1, Instruction::kBackward).time_s, 0.022);
}

TEST(ProfileParse, InfersTheStageCountWhenNotGiven) {
  for (int expected : {0, -1}) {
    Result<Profile> p = ParseProfileCsv(TwoStageText(), "x.csv", expected);
    ASSERT_TRUE(p.ok()) << p.status().ToString();
    EXPECT_EQ(p->num_stages(), 2);
  }
}

TEST(ProfileParse, IgnoresExtraColumnsInAnyOrder) {
  const std::string text =
      "note,energy,time,gpu,frequency,instruction,stage\n"
      "a,2.0,0.010,A100,1410,forward,0\n"
      "b,4.0,0.020,A100,1410,backward,0\n";
  Result<Profile> p = ParseProfileCsv(text, "x.csv", 1);
  ASSERT_TRUE(p.ok()) << p.status().ToString();
  ASSERT_EQ(p->num_stages(), 1);
  EXPECT_EQ(p->stages[0].at(Instruction::kForward)[0].freq_mhz, 1410);
  EXPECT_DOUBLE_EQ(p->stages[0].at(Instruction::kForward)[0].time_s, 0.010);
  EXPECT_DOUBLE_EQ(p->stages[0].at(Instruction::kBackward)[0].energy_j, 4.0);
}

TEST(ProfileParse, SortsEachListByFrequencyDescending) {
  const std::string text = std::string(kHeader) +
                           "0,forward,900,0.03,1.5\n"
                           "0,backward,1100,0.05,3.0\n"
                           "0,forward,1410,0.01,2.0\n"
                           "0,backward,1410,0.04,3.5\n"
                           "0,forward,1200,0.02,1.7\n"
                           "0,backward,600,0.09,2.8\n";
  Result<Profile> p = ParseProfileCsv(text, "x.csv", 1);
  ASSERT_TRUE(p.ok()) << p.status().ToString();
  const auto& f = p->stages[0].at(Instruction::kForward);
  ASSERT_EQ(f.size(), 3u);
  EXPECT_EQ(f[0].freq_mhz, 1410);
  EXPECT_EQ(f[1].freq_mhz, 1200);
  EXPECT_EQ(f[2].freq_mhz, 900);
  EXPECT_DOUBLE_EQ(f[1].time_s, 0.02);  // values travel with their frequency
  const auto& b = p->stages[0].at(Instruction::kBackward);
  ASSERT_EQ(b.size(), 3u);
  EXPECT_EQ(b[0].freq_mhz, 1410);
  EXPECT_EQ(b[1].freq_mhz, 1100);
  EXPECT_EQ(b[2].freq_mhz, 600);
  EXPECT_DOUBLE_EQ(b[2].energy_j, 2.8);
}

TEST(ProfileParse, StagesMayListDifferentFrequencies) {
  const std::string text = std::string(kHeader) +
                           "0,forward,1410,0.01,2.0\n"
                           "0,backward,1410,0.02,4.0\n"
                           "1,forward,1980,0.01,2.5\n"
                           "1,forward,1500,0.013,2.1\n"
                           "1,forward,1005,0.02,1.9\n"
                           "1,backward,1755,0.02,4.5\n";
  Result<Profile> p = ParseProfileCsv(text, "x.csv", 2);
  ASSERT_TRUE(p.ok()) << p.status().ToString();
  EXPECT_EQ(p->stages[0].at(Instruction::kForward).size(), 1u);
  ASSERT_EQ(p->stages[1].at(Instruction::kForward).size(), 3u);
  EXPECT_EQ(p->stages[1].at(Instruction::kForward)[2].freq_mhz, 1005);
  EXPECT_EQ(p->MaxFreqPoint(0, Instruction::kForward).freq_mhz, 1410);
  EXPECT_EQ(p->MaxFreqPoint(1, Instruction::kForward).freq_mhz, 1980);
  EXPECT_EQ(p->MaxFreqPoint(1, Instruction::kBackward).freq_mhz, 1755);
}

TEST(ProfileParse, AcceptsCrlfBomBlankLinesAndPadding) {
  const std::string text =
      "\xEF\xBB\xBFstage, instruction ,frequency,time,energy\r\n"
      "\r\n"
      " 0 , forward , 1410 , 0.01 , 2\r\n"
      "0,backward,1410,0.02,4\r\n";
  Result<Profile> p = ParseProfileCsv(text, "x.csv", 1);
  ASSERT_TRUE(p.ok()) << p.status().ToString();
  EXPECT_EQ(p->stages[0].at(Instruction::kForward)[0].freq_mhz, 1410);
  EXPECT_DOUBLE_EQ(p->stages[0].at(Instruction::kBackward)[0].time_s, 0.02);
}

TEST(ProfileParse, MissingColumn) {
  EXPECT_EQ(ParseError("stage,instruction,frequency,time\n0,forward,1410,0.01\n"), "x.csv:1: missing column 'energy'");
  EXPECT_EQ(ParseError("stage,instruction,time,energy\n0,forward,0.01,2\n"), "x.csv:1: missing column 'frequency'");
  // Column names are case-sensitive.
  EXPECT_EQ(ParseError("Stage,instruction,frequency,time,energy\n0,forward,1410,0.01,2\n"),
            "x.csv:1: missing column 'stage'");
}

TEST(ProfileParse, MissingColumnNamesTheHeaderLine) {
  // Blank lines before the header are skipped, so the header is on line 3.
  EXPECT_EQ(ParseError("\n\nstage,instruction,frequency,time\n0,forward,1410,0.01\n"),
            "x.csv:3: missing column 'energy'");
}

TEST(ProfileParse, NonNumericValue) {
  const std::string text = std::string(kHeader) +
                           "0,forward,1410,0.01,2.0\n"
                           "0,forward,1200,abc,1.8\n";
  EXPECT_EQ(ParseError(text), "x.csv:3: column 'time': expected a number, got 'abc'");
  EXPECT_EQ(ParseError(std::string(kHeader) + "0,forward,1410,0.01,2.0J\n"),
            "x.csv:2: column 'energy': expected a number, got '2.0J'");
  EXPECT_EQ(ParseError(std::string(kHeader) + "0,forward,1410,inf,2.0\n"),
            "x.csv:2: column 'time': expected a number, got 'inf'");
  EXPECT_EQ(ParseError(std::string(kHeader) + "0,forward,1410,nan,2.0\n"),
            "x.csv:2: column 'time': expected a number, got 'nan'");
  EXPECT_EQ(ParseError(std::string(kHeader) + "zero,forward,1410,0.01,2.0\n"),
            "x.csv:2: column 'stage': expected a number, got 'zero'");
}

TEST(ProfileParse, MissingValue) {
  // A short row is the CSV reader's error; an empty cell the column's.
  EXPECT_EQ(ParseError(std::string(kHeader) + "0,forward,1410,0.01\n"), "x.csv:2: expected 5 fields (as the header), got 4");
  EXPECT_EQ(ParseError(std::string(kHeader) + "0,forward,1410,,2.0\n"), "x.csv:2: column 'time': missing value");
  EXPECT_EQ(ParseError(std::string(kHeader) + "0,forward,1410,0.01,\n"), "x.csv:2: column 'energy': missing value");
  EXPECT_EQ(ParseError(std::string(kHeader) + "0,,1410,0.01,2.0\n"),
            "x.csv:2: column 'instruction': expected 'forward', 'backward', 'backward_input' or 'backward_weight', got ''");
  // So is a long one (a thousands separator once shifted a row's values silently).
  EXPECT_EQ(ParseError(std::string(kHeader) + "0,forward,1,200,0.055,21\n"), "x.csv:2: expected 5 fields (as the header), got 6");
}

// Energy in millijoules made powercap report "all-max clocks draw 2327056 W"
// (a review, 2026-11-29): each row's power must be one a GPU can draw.
TEST(ProfileParse, APowerNoGpuDrawsIsRefused) {
  EXPECT_EQ(ParseError(std::string(kHeader) + "0,forward,1410,0.05,20000\n0,backward,1410,0.1,40\n"),
            "x.csv:2: column 'energy': 20000 J in 0.05 s at 1410 MHz is 400000 W on one GPU: expected 5 to 3000 W "
            "(joules, not millijoules?)");
  EXPECT_EQ(ParseError(std::string(kHeader) + "0,forward,1410,0.05,20\n0,backward,1410,0.1,0.011\n"),
            "x.csv:3: column 'energy': 0.011 J in 0.1 s at 1410 MHz is 0.11 W on one GPU: expected 5 to 3000 W "
            "(joules, not kilojoules or watt-hours? seconds, not milliseconds?)");
  // A tensor-parallel group's summed energy is named as a possible cause; a value near a bound is not rounded onto it.
  EXPECT_EQ(ParseError(std::string(kHeader) + "0,forward,1410,0.05,400\n0,backward,1410,0.1,40\n"),
            "x.csv:2: column 'energy': 400 J in 0.05 s at 1410 MHz is 8000 W on one GPU: expected 5 to 3000 W "
            "(one GPU's energy, not its tensor-parallel group's? joules, not millijoules?)");
  EXPECT_EQ(ParseError(std::string(kHeader) + "0,forward,1410,1,4.9996\n0,backward,1410,2,400\n"),
            "x.csv:2: column 'energy': 4.9996 J in 1 s at 1410 MHz is 4.9996 W on one GPU: expected 5 to 3000 W "
            "(joules, not kilojoules or watt-hours? seconds, not milliseconds?)");
  // A measured profile is checked by the profiler's own warnings instead.
  EXPECT_TRUE(ParseProfileCsv(std::string(kHeader) + "0,forward,1410,0.05,20000\n0,backward,1410,0.1,40\n", "x.csv", 1,
                              ProfileOrigin::kMeasured)
                  .ok());
}

// One row in milliseconds among seconds looked like a very slow, cheap option
// and stretched the frontier to 1,000 s (a review, 2026-11-28).
TEST(ProfileParse, ATimeNoClockCouldGiveIsRefused) {
  const std::string rows = std::string(kHeader) + "0,forward,1410,0.05,20\n0,backward,1410,0.1,40\n";
  EXPECT_EQ(ParseError(rows + "0,forward,1200,50,18\n"),
            "x.csv:4: column 'time': 50 s at 1200 MHz is implausible next to stage 0 forward's 0.05 s at 1410 MHz "
            "(line 2): expected 0.025 to 0.1175 s (seconds, not milliseconds?)");
  EXPECT_EQ(ParseError(rows + "0,backward,1200,0.00009,18\n"),
            "x.csv:4: column 'time': 9e-05 s at 1200 MHz is implausible next to stage 0 backward's 0.1 s at 1410 MHz "
            "(line 3): expected 0.05 to 0.235 s (seconds, not milliseconds?)");
  // Memory-bound work barely slows, compute-bound work slows with the clock: both fine.
  EXPECT_TRUE(ParseProfileCsv(rows + "0,forward,705,0.051,12\n0,backward,705,0.2,25\n", "x.csv", 1).ok());
}

TEST(ProfileParse, NonPositiveTimeOrEnergy) {
  EXPECT_EQ(ParseError(std::string(kHeader) + "0,forward,1410,0,2.0\n"),
            "x.csv:2: column 'time': expected a positive number, got '0'");
  EXPECT_EQ(ParseError(std::string(kHeader) + "0,forward,1410,-0.01,2.0\n"),
            "x.csv:2: column 'time': expected a positive number, got '-0.01'");
  EXPECT_EQ(ParseError(std::string(kHeader) + "0,forward,1410,0.01,0.0\n"),
            "x.csv:2: column 'energy': expected a positive number, got '0.0'");
  EXPECT_EQ(ParseError(std::string(kHeader) + "0,forward,1410,0.01,-3\n"),
            "x.csv:2: column 'energy': expected a positive number, got '-3'");
}

TEST(ProfileParse, NonIntegerFrequencyOrStage) {
  EXPECT_EQ(ParseError(std::string(kHeader) + "0,forward,1410.5,0.01,2.0\n"),
            "x.csv:2: column 'frequency': expected a positive integer, got '1410.5'");
  EXPECT_EQ(ParseError(std::string(kHeader) + "0,forward,0,0.01,2.0\n"),
            "x.csv:2: column 'frequency': expected a positive integer, got '0'");
  EXPECT_EQ(ParseError(std::string(kHeader) + "0,forward,-1410,0.01,2.0\n"),
            "x.csv:2: column 'frequency': expected a positive integer, got '-1410'");
  EXPECT_EQ(ParseError(std::string(kHeader) + "0.5,forward,1410,0.01,2.0\n"),
            "x.csv:2: column 'stage': expected a non-negative integer, got '0.5'");
  EXPECT_EQ(ParseError(std::string(kHeader) + "-1,forward,1410,0.01,2.0\n"),
            "x.csv:2: column 'stage': expected a non-negative integer, got '-1'");
}

TEST(ProfileParse, UnknownInstruction) {
  EXPECT_EQ(ParseError(std::string(kHeader) + "0,forward,1410,0.01,2.0\n0,fwd,1410,0.01,2.0\n"),
            "x.csv:3: column 'instruction': expected 'forward', 'backward', 'backward_input' or 'backward_weight', got 'fwd'");
  EXPECT_EQ(ParseError(std::string(kHeader) + "0,Forward,1410,0.01,2.0\n"),
            "x.csv:2: column 'instruction': expected 'forward', 'backward', 'backward_input' or 'backward_weight', got 'Forward'");
}

TEST(ProfileParse, HugeStageIndexIsRejectedNotAllocated) {
  Result<Profile> p = ParseProfileCsv(std::string(kHeader) + "1000000000,forward,1410,0.01,2.0\n", "x.csv", -1);
  ASSERT_FALSE(p.ok());
  EXPECT_EQ(p.status().message().rfind("x.csv:2: column 'stage': stage 1000000000 is out of range", 0), 0u)
      << p.status().message();
}

TEST(ProfileParse, DuplicateRowNamesBothLines) {
  const std::string text = std::string(kHeader) +
                           "0,forward,1410,0.01,2.0\n"    // line 2
                           "0,backward,1410,0.02,4.0\n"   // line 3
                           "\n"                           // line 4 (blank)
                           "0,forward,1410,0.011,2.1\n";  // line 5
  EXPECT_EQ(ParseError(text), "x.csv:5: duplicate row for stage 0 forward at 1410 MHz (first at line 2)");
  // The same frequency for the other instruction or stage is not a duplicate.
  const std::string ok = std::string(kHeader) +
                         "0,forward,1410,0.01,2.0\n"
                         "0,backward,1410,0.02,4.0\n"
                         "1,forward,1410,0.01,2.0\n"
                         "1,backward,1410,0.02,4.0\n";
  EXPECT_TRUE(ParseProfileCsv(ok, "x.csv", 2).ok());
}

TEST(ProfileParse, StageOutOfRange) {
  const std::string text = std::string(kHeader) +
                           "0,forward,1410,0.01,2.0\n"
                           "0,backward,1410,0.02,4.0\n"
                           "2,forward,1410,0.01,2.0\n";
  EXPECT_EQ(ParseError(text, 2),
            "x.csv:4: column 'stage': stage 2 is out of range (the pipeline has 2 stages, 0..1)");
  EXPECT_EQ(ParseError(text, 1),
            "x.csv:4: column 'stage': stage 2 is out of range (the pipeline has 1 stages, 0..0)");
}

TEST(ProfileParse, StageMissingEntirely) {
  // Expected three stages, the file has two.
  EXPECT_EQ(ParseError(TwoStageText(), 3), "x.csv: its highest stage is 1, but the pipeline has 3 stages (0..2)");
  // Inferred count: stage 2 present, stage 1 absent.
  const std::string gap = std::string(kHeader) +
                          "0,forward,1410,0.01,2.0\n"
                          "0,backward,1410,0.02,4.0\n"
                          "2,forward,1410,0.01,2.0\n"
                          "2,backward,1410,0.02,4.0\n";
  EXPECT_EQ(ParseError(gap), "x.csv: stage 1: no 'forward' rows");
}

TEST(ProfileParse, InstructionMissingForAStage) {
  const std::string no_backward = std::string(kHeader) +
                                  "0,forward,1410,0.01,2.0\n"
                                  "1,forward,1410,0.01,2.0\n"
                                  "1,backward,1410,0.02,4.0\n";
  EXPECT_EQ(ParseError(no_backward, 2), "x.csv: stage 0: no 'backward' rows");
  const std::string no_forward = std::string(kHeader) +
                                 "0,forward,1410,0.01,2.0\n"
                                 "0,backward,1410,0.02,4.0\n"
                                 "1,backward,1410,0.02,4.0\n";
  EXPECT_EQ(ParseError(no_forward, 2), "x.csv: stage 1: no 'forward' rows");
}

TEST(ProfileParse, EmptyFileAndHeaderOnly) {
  EXPECT_EQ(ParseError(""), "x.csv: empty file, expected a header row");
  EXPECT_EQ(ParseError("\n\n  \n"), "x.csv: empty file, expected a header row");
  EXPECT_EQ(ParseError(kHeader), "x.csv: no data rows");
  EXPECT_EQ(ParseError(std::string(kHeader) + "\n\n"), "x.csv: no data rows");
  // An empty file is reported as such, not as a missing column.
  EXPECT_EQ(ParseError("", 4), "x.csv: empty file, expected a header row");
}

TEST(ProfileParse, UsesTheSourceNameInEveryMessage) {
  Result<Profile> p = ParseProfileCsv(std::string(kHeader) + "0,forward,1410,abc,2.0\n", "/data/run 7/prof.csv", 1);
  ASSERT_FALSE(p.ok());
  EXPECT_EQ(p.status().message(), "/data/run 7/prof.csv:2: column 'time': expected a number, got 'abc'");
}

TEST(ProfileLoad, MissingFileIsAnIoErrorNamingThePath) {
  const std::string path = "/nonexistent-perseus-dir/profile.csv";
  Result<Profile> p = LoadProfileCsv(path, 2);
  ASSERT_FALSE(p.ok());
  EXPECT_EQ(p.status().code(), Status::Code::kIoError);
  EXPECT_EQ(p.status().message(), path + ": No such file or directory");
}

TEST(ProfileLoad, ReadsAFileAndNamesItInErrors) {
  ScopedTempDir dir;
  const std::string path = dir.Write("p.csv", TwoStageText());
  Result<Profile> p = LoadProfileCsv(path, 2);
  ASSERT_TRUE(p.ok()) << p.status().ToString();
  EXPECT_EQ(p->num_stages(), 2);
  dir.Write("p.csv", std::string(kHeader) + "0,forward,1410,0.01,2.0\n0,backward,1410,x,4.0\n");
  p = LoadProfileCsv(path, 1);
  ASSERT_FALSE(p.ok());
  EXPECT_EQ(p.status().message(), path + ":3: column 'time': expected a number, got 'x'");
}

TEST(ProfileToCsv, WritesTheZeusFormatInStageInstructionFrequencyOrder) {
  Result<Profile> p = ParseProfileCsv(std::string(kHeader) +
                                          "0,backward,1200,0.5,3\n"
                                          "0,forward,1200,0.25,1.5\n"
                                          "0,forward,1410,0.125,2\n"
                                          "0,backward,1410,0.375,4\n",
                                      "x.csv", 1);
  ASSERT_TRUE(p.ok()) << p.status().ToString();
  EXPECT_EQ(ProfileToCsv(*p),
            "stage,instruction,frequency,time,energy\n"
            "0,forward,1410,0.125,2\n"
            "0,forward,1200,0.25,1.5\n"
            "0,backward,1410,0.375,4\n"
            "0,backward,1200,0.5,3\n");
}

TEST(ProfileToCsv, RoundTripsExactly) {
  Profile profile;
  profile.stages.resize(3);
  for (int s = 0; s < 3; ++s) {
    for (int i = 0; i < kNumInstructions; ++i) {
      for (int k = 0; k < 4; ++k) {
        // Values without a short decimal form, to check no precision is lost.
        profile.stages[s].points[i].push_back(
            FreqPoint{1410 - 105 * k - s, (0.1 + 0.2) * (1 + 0.1 * k) / 3.0 + s * 1e-7 + i, 100.0 / 3.0 * (5 + k + s + i)});
      }
    }
  }
  const std::string csv = ProfileToCsv(profile);
  Result<Profile> back = ParseProfileCsv(csv, "round.csv", 3);
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  ASSERT_EQ(back->num_stages(), 3);
  for (int s = 0; s < 3; ++s) {
    for (int i = 0; i < kNumInstructions; ++i) {
      const auto& want = profile.stages[s].points[i];
      const auto& got = back->stages[s].points[i];
      ASSERT_EQ(got.size(), want.size());
      for (size_t k = 0; k < want.size(); ++k) {
        EXPECT_EQ(got[k].freq_mhz, want[k].freq_mhz);
        EXPECT_EQ(got[k].time_s, want[k].time_s);  // bit-exact
        EXPECT_EQ(got[k].energy_j, want[k].energy_j);
      }
    }
  }
  EXPECT_EQ(ProfileToCsv(*back), csv);
}

TEST(Profile, InstructionNames) {
  EXPECT_STREQ(InstructionName(Instruction::kForward), "forward");
  EXPECT_STREQ(InstructionName(Instruction::kBackward), "backward");
  EXPECT_STREQ(InstructionName(Instruction::kBackwardInput), "backward_input");
  EXPECT_STREQ(InstructionName(Instruction::kBackwardWeight), "backward_weight");
  for (int i = 0; i < kNumInstructions; ++i) {
    const Instruction ins = static_cast<Instruction>(i);
    EXPECT_EQ(*ParseInstruction(InstructionName(ins)), ins);
  }
  EXPECT_STREQ(InstructionSymbol(Instruction::kBackwardInput), "Bi");
  EXPECT_STREQ(InstructionSymbol(Instruction::kBackwardWeight), "W");
}

// The zero-bubble extension: backward_input and backward_weight rows.
TEST(ProfileParse, SplitBackwardRowsAreKeptAndTheWholeBackwardDerivedFromThem) {
  const std::string text = std::string(kHeader) +
                           "0,forward,1410,0.010,2.0\n"
                           "0,backward_input,1410,0.009,1.9\n"
                           "0,backward_weight,1410,0.011,2.1\n"
                           "0,backward_input,1200,0.011,1.7\n"
                           "0,backward_weight,1200,0.013,1.9\n"
                           "0,backward_weight,1000,0.016,1.8\n";  // no input half at 1000 MHz
  Result<Profile> p = ParseProfileCsv(text, "x.csv", 1);
  ASSERT_TRUE(p.ok()) << p.status().ToString();
  const auto& whole = p->stages[0].at(Instruction::kBackward);
  ASSERT_EQ(whole.size(), 2u);  // only the clocks both halves list
  EXPECT_EQ(whole[0].freq_mhz, 1410);
  EXPECT_DOUBLE_EQ(whole[0].time_s, 0.020);
  EXPECT_DOUBLE_EQ(whole[0].energy_j, 4.0);
  EXPECT_EQ(whole[1].freq_mhz, 1200);
  EXPECT_DOUBLE_EQ(whole[1].time_s, 0.024);
  EXPECT_DOUBLE_EQ(whole[1].energy_j, 3.6);
  EXPECT_EQ(p->stages[0].at(Instruction::kBackwardWeight).size(), 3u);
  EXPECT_EQ(p->stages[0].at(Instruction::kBackwardInput).front().freq_mhz, 1410);
  // Written back with the derived rows, it reads the same.
  Result<Profile> again = ParseProfileCsv(ProfileToCsv(*p), "y.csv", 1);
  ASSERT_TRUE(again.ok()) << again.status().ToString();
  EXPECT_EQ(ProfileToCsv(*again), ProfileToCsv(*p));
}

TEST(ProfileParse, ListedBackwardRowsWinOverTheHalves) {
  const std::string text = std::string(kHeader) +
                           "0,forward,1410,0.010,2.0\n"
                           "0,backward,1410,0.019,3.5\n"
                           "0,backward_input,1410,0.009,1.9\n"
                           "0,backward_weight,1410,0.011,2.1\n";
  Result<Profile> p = ParseProfileCsv(text, "x.csv", 1);
  ASSERT_TRUE(p.ok()) << p.status().ToString();
  EXPECT_DOUBLE_EQ(p->stages[0].at(Instruction::kBackward)[0].time_s, 0.019);
}

TEST(ProfileParse, SplitBackwardErrorsNameTheStage) {
  EXPECT_EQ(ParseError(std::string(kHeader) + "0,forward,1410,0.01,2\n0,backward_input,1410,0.01,2\n"),
            "x.csv: stage 0: 'backward_input' rows without 'backward_weight' rows (list both halves of the "
            "backward, or neither)");
  EXPECT_EQ(ParseError(std::string(kHeader) + "0,forward,1410,0.01,2\n0,backward,1410,0.02,4\n"
                                              "0,backward_weight,1410,0.01,2\n"),
            "x.csv: stage 0: 'backward_weight' rows without 'backward_input' rows (list both halves of the "
            "backward, or neither)");
  EXPECT_EQ(ParseError(std::string(kHeader) + "0,forward,1410,0.01,2\n0,backward_input,1410,0.01,2\n"
                                              "0,backward_weight,1200,0.01,2\n"),
            "x.csv: stage 0: no 'backward' rows, and its 'backward_input' and 'backward_weight' rows share no "
            "frequency to derive them from");
}

}  // namespace
}  // namespace perseus
