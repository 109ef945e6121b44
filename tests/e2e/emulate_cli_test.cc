// End to end: `perseus emulate` on bundled examples and the shared profile,
// the files it writes, and its exact error messages (nothing written on error).
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "common/temp_dir_for_test.h"
#include "emulate_test_util.h"

namespace perseus::e2e {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

const char* const kFiles[] = {"report.md",          "report.json",  "energy_per_gpu.csv",  "savings_vs_straggler.svg",
                              "energy_per_gpu.svg", "policies.svg", "timeline_allmax.svg", "timeline_perseus.svg"};

json Policy(const json& report, const std::string& name) {
  for (const json& p : report["policies"]) {
    if (p["name"] == name) return p;
  }
  ADD_FAILURE() << "no policy " << name;
  return json::object();
}

TEST(EmulateCli, ExampleWithStragglerAndThrottleWritesTheReport) {
  ScopedTempDir tmp;
  std::string out = tmp.Path("out");
  CommandResult r = RunPerseus({"emulate", "--example", "gpt3-xl-a100", "--pipelines", "4", "--iterations", "20",
                                "--straggler", "factor=1.2,pipeline=1,iterations=5-10", "--throttle",
                                "pipeline=2,stage=1,gpu=0,freq=1110,iterations=12-", "--out", out});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("perseus-intrinsic"), std::string::npos) << r.out;
  for (const char* f : kFiles) EXPECT_TRUE(fs::exists(out + "/" + f)) << f;
  json report = json::parse(ReadWholeFile(out + "/report.json"));
  EXPECT_EQ(report["schema"], "perseus.emulation/v1");
  EXPECT_EQ(report["job"]["gpus"], 16);
  EXPECT_EQ(report["job"]["iterations"], 20);
  ASSERT_EQ(report["policies"].size(), 6u);
  EXPECT_EQ(Policy(report, "allmax")["savings_vs_allmax"], 0.0);
  EXPECT_GT(Policy(report, "perseus")["savings_vs_allmax"].get<double>(),
            Policy(report, "perseus-intrinsic")["savings_vs_allmax"].get<double>());
  EXPECT_LE(Policy(report, "perseus")["slowdown_vs_allmax"].get<double>(), 1e-9);
  EXPECT_EQ(Policy(report, "perseus")["iteration_times_s"].size(), 20u);
  EXPECT_NE(ReadWholeFile(out + "/report.md").find("pipeline 1 slowed x1.200 in iterations 5-9"), std::string::npos);
}

TEST(EmulateCli, ClosedLoopIsReportedNextToTheIdealisedPolicy) {
  ScopedTempDir tmp;
  std::string out = tmp.Path("out");
  CommandResult r = RunPerseus({"emulate", "--example", "gpt3-xl-a100", "--pipelines", "4", "--iterations", "3000",
                                "--straggler", "factor=1.2,pipeline=1,iterations=1500-2000", "--closed-loop",
                                "--profiling-s", "600", "--optimization-s", "2", "--out", out});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  json report = json::parse(ReadWholeFile(out + "/report.json"));
  ASSERT_EQ(report["policies"].size(), 7u);
  const json loop = Policy(report, "perseus-closed-loop");
  EXPECT_LT(loop["savings_vs_allmax"].get<double>(), Policy(report, "perseus")["savings_vs_allmax"].get<double>());
  EXPECT_GT(loop["savings_vs_allmax"].get<double>(), 0.0);
  const json& c = report["closed_loop"];
  EXPECT_EQ(c["options"]["profiling_s"], 600.0);
  EXPECT_EQ(c["options"]["optimization_s"], 2.0);
  EXPECT_EQ(c["options"]["clock_latency_s"], 0.005);
  EXPECT_GT(c["profiling_iterations"].get<int>(), 0);
  EXPECT_GE(c["detections"].get<int>(), 2);
  EXPECT_GT(c["without_profiling"]["savings_vs_allmax"].get<double>(), 0.0);
  EXPECT_NE(ReadWholeFile(out + "/report.md").find("## Closed loop"), std::string::npos);
  // With a limit on clock changes, fewer of them and less of the latency's cost.
  std::string limited = tmp.Path("limited");
  CommandResult l = RunPerseus({"emulate", "--example", "gpt3-xl-a100", "--pipelines", "4", "--iterations", "3000",
                                "--straggler", "factor=1.2,pipeline=1,iterations=1500-2000", "--closed-loop",
                                "--profiling-s", "600", "--optimization-s", "2", "--max-clock-changes", "4",
                                "--out", limited});
  ASSERT_EQ(l.exit_code, 0) << l.err;
  json lr = json::parse(ReadWholeFile(limited + "/report.json"));
  EXPECT_EQ(lr["job"]["max_clock_changes_per_gpu"], 4);
  EXPECT_LE(lr["closed_loop"]["clock_changes_per_gpu_iteration"].get<double>(), 4.0);
  EXPECT_LT(lr["closed_loop"]["clock_changes_per_gpu_iteration"].get<double>(),
            c["clock_changes_per_gpu_iteration"].get<double>());
}

// The command line of the issue, on the measured GPT-3 profile: 8,192 GPUs.
TEST(EmulateCli, SharedProfileAtEightThousandGpus) {
  if (Sosp24Dir().empty()) GTEST_SKIP() << "shared data (PERSEUS_SHARED_DATA/sosp24) not found; skipping";
  ScopedTempDir tmp;
  std::string out = tmp.Path("out");
  CommandResult r = RunPerseus({"emulate", Sosp24Dir() + "/stage_profile/gpt3-175b+a100_sxm_bf16.csv", "--stages", "8",
                                "--microbatches", "12", "--pipelines", "128", "--gpus-per-stage", "8",
                                "--blocking-power", "83.64", "--straggler", "1.2", "--out", out});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  json report = json::parse(ReadWholeFile(out + "/report.json"));
  EXPECT_EQ(report["job"]["gpus"], 8192);
  const double intrinsic = Policy(report, "perseus-intrinsic")["savings_vs_allmax"].get<double>();
  const double perseus = Policy(report, "perseus")["savings_vs_allmax"].get<double>();
  const double envpipe = Policy(report, "envpipe")["savings_vs_allmax"].get<double>();
  EXPECT_GT(intrinsic, envpipe);
  EXPECT_GT(perseus, intrinsic + 0.05) << "the straggler's extrinsic bloat is removed";
  ASSERT_TRUE(report["lower_bound"].is_object());
  EXPECT_GE(report["lower_bound"]["savings_vs_allmax"].get<double>(), perseus - 1e-9);
  EXPECT_EQ(report["straggler_sweep"].size(), 11u);
}

struct BadInput {
  std::string name;  // of the test case
  std::vector<std::string> args;
  std::string message;  // after "perseus: error: "
};

void PrintTo(const BadInput& b, std::ostream* os) { *os << b.name; }

class EmulateCliErrors : public ::testing::TestWithParam<BadInput> {};

TEST_P(EmulateCliErrors, ExactMessageNonZeroExitAndNoOutput) {
  ScopedTempDir tmp;
  const std::string& parent = tmp.path();
  std::string out = tmp.Path("out");
  std::vector<std::string> args{"emulate"};
  for (const std::string& a : GetParam().args) args.push_back(a == "BADCSV" ? parent + "/bad.csv" : a);
  {
    std::ofstream csv(parent + "/bad.csv");
    csv << "stage,instruction,frequency,time,energy\n0,forward,1410,0.05,abc\n";
  }
  args.push_back("--out");
  args.push_back(out);
  CommandResult r = RunPerseus(args);
  EXPECT_NE(r.exit_code, 0);
  std::string expected = GetParam().message;
  size_t at = expected.find("BADCSV");
  if (at != std::string::npos) expected.replace(at, 6, parent + "/bad.csv");
  EXPECT_EQ(r.err, "perseus: error: " + expected + "\n");
  EXPECT_FALSE(fs::exists(out)) << "nothing may be written on error";
}

INSTANTIATE_TEST_SUITE_P(
    Messages, EmulateCliErrors,
    ::testing::Values(BadInput{"StragglerNotANumber",
                               {"--example", "gpt3-xl-a100", "--straggler", "abc"},
                               "--straggler 'abc': factor: expected a number in [1, 100], got 'abc'"},
                      BadInput{
                          "StragglerPipelineOutOfRange",
                          {"--example", "gpt3-xl-a100", "--straggler", "factor=1.2,pipelines=3-9", "--pipelines", "4"},
                          "--straggler #1: pipeline 9 is outside 0..3 (--pipelines 4)"},
                      BadInput{"ThrottleStageOutOfRange",
                               {"--example", "gpt3-xl-a100", "--throttle", "stage=9,freq=1100"},
                               "--throttle #1: stage 9 is outside 0..3"},
                      BadInput{"ThrottleClockBelowProfile",
                               {"--example", "gpt3-xl-a100", "--throttle", "stage=1,freq=300"},
                               "--throttle #1: freq 300 MHz is below the lowest profiled clock of stage 1 (855 MHz)"},
                      BadInput{"StragglerAfterLastIteration",
                               {"--example", "gpt3-xl-a100", "--straggler", "factor=1.1,iterations=200-300"},
                               "--straggler #1: starts at iteration 200 but --iterations is 100"},
                      BadInput{"ZeroPipelines",
                               {"--example", "gpt3-xl-a100", "--pipelines", "0"},
                               "--pipelines: expected at least 1, got 0"},
                      BadInput{"BudgetAboveOne",
                               {"--example", "gpt3-xl-a100", "--slowdown-budget", "2"},
                               "--slowdown-budget: expected a fraction in [0, 1]"},
                      BadInput{"ClockLatencyNegative",
                               {"--example", "gpt3-xl-a100", "--closed-loop", "--clock-latency-ms", "-1"},
                               "--clock-latency-ms: expected ms in [0, 10000]"},
                      BadInput{"MaxClockChangesBelowMinusOne",
                               {"--example", "gpt3-xl-a100", "--max-clock-changes", "-3"},
                               "--max-clock-changes: expected -1 (no limit) or a count >= 0"},
                      BadInput{"NoProfileNoExample", {}, "give exactly one of PROFILE.csv or --example NAME"},
                      BadInput{"ProfileWithoutStages", {"BADCSV"}, "--stages is required with a profile"},
                      BadInput{"ProfileBadNumber",
                               {"BADCSV", "--stages", "1", "--microbatches", "4", "--blocking-power", "80"},
                               "BADCSV:2: column 'energy': expected a number, got 'abc'"},
                      BadInput{"ReproduceWithExample",
                               {"--reproduce-paper", "--example", "gpt3-xl-a100"},
                               "--reproduce-paper takes no PROFILE.csv or --example"}),
    [](const ::testing::TestParamInfo<BadInput>& info) { return info.param.name; });

// Closed-loop settings without --closed-loop were silently ignored (a
// review, 2026-11-28), while --chunks without a schedule that takes them was
// refused: now they are refused too.
TEST(EmulateCli, ClosedLoopSettingsNeedTheClosedLoop) {
  ScopedTempDir tmp;
  for (const char* flag : {"--power-cap", "--plan-delivery-s", "--iteration-jitter", "--seed"}) {
    CommandResult r = RunPerseus({"emulate", "--example", "gpt3-xl-a100", flag, "1", "--out", tmp.Path("out")});
    EXPECT_NE(r.exit_code, 0) << flag;
    EXPECT_NE(r.err.find(std::string(flag) + " requires --closed-loop"), std::string::npos) << r.err;
    EXPECT_FALSE(fs::exists(tmp.Path("out")));
  }
}

// A closed-loop run too short for a cap window reported a 0 W worst window
// (a review, 2026-11-28); one that never ran past profiling, 0 W running.
TEST(EmulateCli, APowerCapOnARunTooShortToJudgeSaysSo) {
  ScopedTempDir tmp;
  for (const char* iterations : {"6", "2"}) {
    const std::string out = tmp.Path(std::string("out") + iterations);
    CommandResult r = RunPerseus({"emulate", "--example", "gpt3-xl-a100", "--pipelines", "2", "--iterations", iterations,
                                  "--closed-loop", "--power-cap", "3000", "--profiling-s", "5", "--out", out});
    ASSERT_EQ(r.exit_code, 0) << r.err;
    const json cap = json::parse(ReadWholeFile(out + "/report.json"))["closed_loop"]["power_cap"];
    EXPECT_EQ(cap["windows"], 0);
    EXPECT_TRUE(cap["worst_window_power_w"].is_null()) << cap.dump();
    const std::string md = ReadWholeFile(out + "/report.md");
    EXPECT_NE(md.find("no window ran long enough to judge"), std::string::npos) << md;
    EXPECT_EQ(md.find("worst complete window 0 W"), std::string::npos) << md;
    if (std::string(iterations) == "2") {
      EXPECT_TRUE(cap["running_power_w"].is_null()) << cap.dump();
      EXPECT_NE(md.find("no iteration ran under a plan"), std::string::npos) << md;
    } else {
      EXPECT_GT(cap["running_power_w"].get<double>(), 0) << cap.dump();
    }
  }
}

// `perseus powercap`'s straggler flags: a pipeline given twice took the
// last value (a review, 2026-11-28); now refused, as a malformed one is.
TEST(PowerCapCli, StragglerFlagsAreCheckedAndEachPipelineGivenOnce) {
  ScopedTempDir tmp;
  const std::string out = tmp.Path("out");
  CommandResult r = RunPerseus({"powercap", "--example", "gpt3-xl-a100", "--pipelines", "4", "--straggler", "1:1.2",
                                "--straggler", "1:1.3", "--out", out});
  EXPECT_NE(r.exit_code, 0);
  EXPECT_NE(r.err.find("--straggler 1:1.3: pipeline 1 is already given (--straggler 1:1.2)"), std::string::npos) << r.err;
  r = RunPerseus({"powercap", "--example", "gpt3-xl-a100", "--pipelines", "4", "--straggler", "4:1.2", "--out", out});
  EXPECT_NE(r.exit_code, 0);
  EXPECT_NE(r.err.find("--straggler 4:1.2: expected PIPELINE:SLOWDOWN with PIPELINE in [0, 3]"), std::string::npos) << r.err;
  // strtol read ":1.5" as pipeline 0 (no digits) and took " 0", "-0" and "+0".
  // strtod took hexadecimal ("0x1.2p0") and leading spaces.
  for (const char* bad : {":1.5", " 0:1.2", "-0:1.2", "+1:1.2", "1:0x1.2p0", "1: 1.2"}) {
    r = RunPerseus({"powercap", "--example", "gpt3-xl-a100", "--pipelines", "4", "--straggler", bad, "--out", out});
    EXPECT_NE(r.exit_code, 0) << bad;
    EXPECT_NE(r.err.find("expected PIPELINE:SLOWDOWN"), std::string::npos) << bad << ": " << r.err;
  }
  // The same in emulate: decimal only there too, ranges left to the spec's own messages.
  for (const auto& [flag, value] : {std::pair<std::string, std::string>{"--pipelines", "0x2"}, {"--iterations", "0x10"},
                                    {"--scale", "0x1"}, {"--sweep", "0x1,1.1"}}) {
    r = RunPerseus({"emulate", "--example", "gpt3-xl-a100", flag, value, "--out", out});
    EXPECT_EQ(r.exit_code, 2) << flag;
    EXPECT_EQ(r.err.rfind("perseus: error: " + flag + ": expected a ", 0), 0u) << r.err;
  }
  // CLI11 read integers with base 0: "0x10" was 16 pipelines and "010" eight.
  for (const char* bad : {"0x10", "1e3", "4.0"}) {
    r = RunPerseus({"powercap", "--example", "gpt3-xl-a100", "--pipelines", bad, "--out", out});
    EXPECT_EQ(r.exit_code, 2) << bad;
    EXPECT_EQ(r.err.rfind(std::string("perseus: error: --pipelines: expected a whole number in [1, 100000], got ") + bad,
                          0),
              0u)
        << r.err;
  }
  EXPECT_FALSE(fs::exists(out));
  r = RunPerseus({"powercap", "--example", "gpt3-xl-a100", "--pipelines", "010", "--straggler", "1:1.2",
                  "--straggler", "2:1.1", "--caps", "4", "--out", out});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(fs::exists(out + "/power_cap.csv"));
  EXPECT_NE(r.out.find("10 pipeline(s);"), std::string::npos) << r.out;  // ten, not octal eight
}

// --out through a dangling link said "File exists", and a file said the same.
TEST(PowerCapCli, AnOutFolderThatCannotBeIsNamed) {
  ScopedTempDir tmp;
  const std::string link = tmp.Path("link"), file = tmp.Path("file");
  fs::create_symlink(tmp.Path("gone"), link);
  { std::ofstream(file) << "x"; }
  CommandResult r = RunPerseus({"powercap", "--example", "gpt3-xl-a100", "--caps", "4", "--out", link});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_EQ(r.err, "perseus: error: --out " + link + ": a symbolic link to " + tmp.Path("gone") + ", which does not exist\n");
  r = RunPerseus({"powercap", "--example", "gpt3-xl-a100", "--caps", "4", "--out", file});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_EQ(r.err, "perseus: error: --out " + file + ": not a folder\n");
  // A trailing '/' changes nothing; a folder under a file is refused before any work (was after all of it).
  r = RunPerseus({"powercap", "--example", "gpt3-xl-a100", "--caps", "4", "--out", link + "/"});
  EXPECT_EQ(r.err, "perseus: error: --out " + link + "/: a symbolic link to " + tmp.Path("gone") + ", which does not exist\n");
  r = RunPerseus({"powercap", "--example", "gpt3-xl-a100", "--pipelines", "100000", "--out", link + "/sub"});
  EXPECT_EQ(r.err, "perseus: error: --out " + link + "/sub: " + link + " is a symbolic link to " + tmp.Path("gone") +
                       ", which does not exist\n");
  r = RunPerseus({"powercap", "--example", "gpt3-xl-a100", "--pipelines", "100000", "--out", file + "/sub"});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_EQ(r.err, "perseus: error: --out " + file + "/sub: " + file + " is not a folder\n");
  EXPECT_FALSE(fs::exists(tmp.Path("gone")));
}

TEST(EmulateCli, MissingProfileNamesTheFile) {
  ScopedTempDir tmp;
  std::string out = tmp.Path("out");
  CommandResult r = RunPerseus({"emulate", "/nonexistent/profile.csv", "--stages", "2", "--microbatches", "4",
                                "--blocking-power", "80", "--out", out});
  EXPECT_NE(r.exit_code, 0);
  EXPECT_EQ(r.err.rfind("perseus: error: ", 0), 0u) << r.err;
  EXPECT_NE(r.err.find("/nonexistent/profile.csv"), std::string::npos) << r.err;
  EXPECT_FALSE(fs::exists(out));
}

}  // namespace
}  // namespace perseus::e2e
