// End-to-end tests of `perseus optimize`: runs the real binary (PERSEUS_CLI_PATH)
// in a fresh temporary directory and checks its exit code, its output files
// and the exact error texts it prints.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "common/temp_dir_for_test.h"
#include "perseus/frontier_io.h"

#ifndef PERSEUS_CLI_PATH
#error "PERSEUS_CLI_PATH must name the perseus binary"
#endif

namespace {

namespace fs = std::filesystem;
using nlohmann::json;
using perseus::PlannedComputation;
using perseus::PlansFile;
using perseus::PlansFilePlan;
using perseus::ReadPlansJson;
using perseus::Result;
using perseus::ScopedTempDir;

std::string ReadText(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

void WriteText(const fs::path& path, const std::string& text) {
  std::ofstream out(path, std::ios::binary);
  out << text;
}

std::string Quote(const std::string& s) {
  std::string out = "'";
  for (char c : s) {
    if (c == '\'') out += "'\\''";
    else out += c;
  }
  return out + "'";
}

struct CliRun {
  int exit_code = -1;
  std::string out, err;
};

// Every file under `dir`, relative to it.
std::vector<std::string> FilesUnder(const fs::path& dir) {
  std::vector<std::string> files;
  std::error_code ec;
  if (!fs::exists(dir, ec)) return files;
  for (const auto& e : fs::recursive_directory_iterator(dir)) {
    if (!e.is_directory()) files.push_back(fs::relative(e.path(), dir).string());
  }
  return files;
}

// A two-stage profile with three clocks; times in the tens of milliseconds.
std::string SmallProfile() {
  std::string text = "stage,instruction,frequency,time,energy,gpu\n";
  const int freqs[] = {1410, 1200, 1000};
  for (int s = 0; s < 2; ++s) {
    for (int ins = 0; ins < 2; ++ins) {
      for (int f : freqs) {
        const double t = (ins == 0 ? 0.010 : 0.021) * (1 + 0.1 * s) * 1410.0 / f;
        const double power_w = 280.0 * (f / 1410.0) * (f / 1410.0);
        char row[160];
        std::snprintf(row, sizeof row, "%d,%s,%d,%.6f,%.6f,A100\n", s, ins == 0 ? "forward" : "backward", f, t,
                      t * power_w);
        text += row;
      }
    }
  }
  return text;
}

class OptimizeCli : public ::testing::Test {
 protected:
  CliRun Perseus(const std::vector<std::string>& args) {
    std::string cmd = Quote(PERSEUS_CLI_PATH);
    for (const std::string& a : args) cmd += " " + Quote(a);
    const fs::path out_file = dir_ / "stdout.txt", err_file = dir_ / "stderr.txt";
    cmd += " >" + Quote(out_file.string()) + " 2>" + Quote(err_file.string());
    CliRun r;
    int status = std::system(cmd.c_str());
    r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    r.out = ReadText(out_file);
    r.err = ReadText(err_file);
    fs::remove(out_file);
    fs::remove(err_file);
    return r;
  }

  std::string WriteProfile(const std::string& name, const std::string& text) {
    const fs::path p = dir_ / name;
    WriteText(p, text);
    return p.string();
  }

  // Checks the outputs every successful run writes; returns plans.json.
  json ExpectOutputs() {
    for (const char* f : {"plans.json", "frontier.csv", "frontier.svg", "timeline.svg"}) {
      EXPECT_TRUE(fs::is_regular_file(out_ / f)) << f;
      EXPECT_GT(fs::file_size(out_ / f), 0u) << f;
    }
    for (const std::string& f : FilesUnder(out_)) EXPECT_EQ(f.find(".partial."), std::string::npos) << f;
    json j = json::parse(ReadText(out_ / "plans.json"), nullptr, false);
    EXPECT_FALSE(j.is_discarded()) << "plans.json is not valid JSON";
    if (j.is_discarded()) return j;
    EXPECT_EQ(j["schema"], "perseus.frontier/v2");
    const json& plans = j["plans"];
    EXPECT_TRUE(plans.is_array() && !plans.empty());
    for (size_t i = 1; i < plans.size(); ++i) {
      EXPECT_LT(plans[i - 1]["time_s"].get<double>(), plans[i]["time_s"].get<double>()) << i;
    }
    if (!plans.empty()) {
      EXPECT_LE(plans[0]["time_s"].get<double>(), j["all_max"]["time_s"].get<double>() * (1 + 1e-12));
    }
    EXPECT_EQ(ReadText(out_ / "frontier.csv").rfind("time_s,energy_j,lower_bound_j,savings_vs_all_max\n", 0), 0u);
    EXPECT_EQ(ReadText(out_ / "frontier.svg").find("<svg"), 0u);
    return j;
  }

  ScopedTempDir tmp_;
  const fs::path dir_ = tmp_.path(), out_ = dir_ / "out";
};

TEST_F(OptimizeCli, BundledExampleWritesEveryOutput) {
  CliRun r = Perseus({"optimize", "--example", "gpt3-xl-a100", "--out", out_.string()});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.err, "");
  EXPECT_NE(r.out.find("no-slowdown plan"), std::string::npos) << r.out;
  json j = ExpectOutputs();
  ASSERT_FALSE(j.is_discarded());
  EXPECT_EQ(j["schedule"], "1f1b");
  EXPECT_EQ(j["stages"], 4);
  EXPECT_EQ(j["microbatches"], 16);
  EXPECT_FALSE(fs::exists(out_ / "zeus"));
  ASSERT_EQ(j["computations"].size(), 4u);
  for (const auto& stage : j["computations"]) EXPECT_EQ(stage.size(), 32u);
  for (const auto& stage : j["plans"][0]["sm_clocks_mhz"]) EXPECT_EQ(stage.size(), 32u);
  // Without --max-plans every plan is written; frontier.csv has one row per plan.
  EXPECT_EQ(j["frontier_plans"], j["plans"].size());
  const std::string csv = ReadText(out_ / "frontier.csv");
  EXPECT_EQ(static_cast<size_t>(std::count(csv.begin(), csv.end(), '\n')), j["plans"].size() + 1);
}

// The Zeus file's index in its name and comments, and its iteration time.
struct ZeusFile {
  size_t index;
  double time_s;
};

std::vector<ZeusFile> ZeusFiles(const fs::path& dir) {
  std::vector<ZeusFile> out;
  for (const auto& e : fs::directory_iterator(dir)) {
    size_t index = 0;
    EXPECT_EQ(std::sscanf(e.path().filename().c_str(), "freqs_pipeline_%5zu.py", &index), 1) << e.path();
    const std::string text = ReadText(e.path());
    EXPECT_EQ(text.rfind("[\n[('forward', ", 0), 0u) << e.path();
    const std::string tag = "# Plan " + std::to_string(index) + " iteration time: ";
    const size_t at = text.find(tag);
    EXPECT_NE(at, std::string::npos) << e.path();
    out.push_back({index, at == std::string::npos ? 0 : std::stod(text.substr(at + tag.size()))});
  }
  std::sort(out.begin(), out.end(), [](const ZeusFile& a, const ZeusFile& b) { return a.index < b.index; });
  return out;
}

TEST_F(OptimizeCli, ZeusPlansAreTheKeyPlans) {
  CliRun r = Perseus({"optimize", "--example", "gpt3-xl-a100", "--out", out_.string(), "--zeus-plans"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  json j = ExpectOutputs();
  ASSERT_FALSE(j.is_discarded());
  const json& plans = j["plans"];
  ASSERT_GE(plans.size(), 3u);
  // The fastest, the no-slowdown (least energy within all-max time) and the minimum-energy plan.
  size_t no_slowdown = 0;
  while (no_slowdown + 1 < plans.size() &&
         plans[no_slowdown + 1]["time_s"].get<double>() <= j["all_max"]["time_s"].get<double>() * (1 + 1e-12)) {
    ++no_slowdown;
  }
  std::vector<size_t> want = {0, no_slowdown, plans.size() - 1};
  want.erase(std::unique(want.begin(), want.end()), want.end());
  std::vector<ZeusFile> files = ZeusFiles(out_ / "zeus");
  ASSERT_EQ(files.size(), want.size());
  for (size_t i = 0; i < want.size(); ++i) {
    EXPECT_EQ(files[i].index, want[i]);
    EXPECT_EQ(files[i].time_s, plans[want[i]]["time_s"].get<double>());
  }
  EXPECT_NE(r.out.find(",zeus/ (" + std::to_string(want.size()) + " plans)}"), std::string::npos) << r.out;
}

// A rerun into the same folder once kept an earlier run's Zeus files, which
// no longer matched plans.json; and a name taken by a folder failed the
// renames halfway, leaving new files beside old ones (a review, 2026-11-28).
TEST_F(OptimizeCli, ARerunLeavesNoStaleZeusPlansAndAFailedOneReplacesNothing) {
  ASSERT_EQ(Perseus({"optimize", "--example", "gpt3-xl-a100", "--out", out_.string(), "--zeus-plans"}).exit_code, 0);
  fs::create_directories(out_ / "zeus");
  { std::ofstream(out_ / "zeus" / "freqs_pipeline_99999.py") << "# an earlier run's\n"; }
  CliRun r = Perseus({"optimize", "--example", "gpt3-xl-a100", "--out", out_.string(), "--zeus-plan-time", "1e9"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const size_t zeus_files = ZeusFiles(out_ / "zeus").size();  // only this run's
  EXPECT_NE(r.out.find(",zeus/ (" + std::to_string(zeus_files) + " plans)}"), std::string::npos) << r.out;
  EXPECT_FALSE(fs::exists(out_ / "zeus" / "freqs_pipeline_99999.py"));

  const std::string plans_before = ReadText(out_ / "plans.json");
  fs::remove(out_ / "frontier.csv");
  fs::create_directories(out_ / "frontier.csv");
  r = Perseus({"optimize", "--example", "gpt3-xl-h100", "--out", out_.string()});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("frontier.csv: is a folder; nothing in " + out_.string() + " was replaced"), std::string::npos)
      << r.err;
  EXPECT_EQ(ReadText(out_ / "plans.json"), plans_before);
  for (const auto& entry : fs::directory_iterator(out_)) {
    EXPECT_EQ(entry.path().string().find(".partial."), std::string::npos) << entry.path();
  }
}

TEST_F(OptimizeCli, MaxPlansThinsPlansJsonAndKeepsZeusPlanTimes) {
  CliRun full = Perseus({"optimize", "--example", "gpt3-xl-a100", "--out", (dir_ / "full").string()});
  ASSERT_EQ(full.exit_code, 0) << full.err;
  const json all = json::parse(ReadText(dir_ / "full" / "plans.json"));
  const size_t n = all["plans"].size();
  ASSERT_GT(n, 8u);
  // A time between two plans picks the faster one (the least energy no slower than it).
  const double between = (all["plans"][n / 2]["time_s"].get<double>() + all["plans"][n / 2 + 1]["time_s"].get<double>()) / 2;
  char time_arg[32];
  std::snprintf(time_arg, sizeof time_arg, "%.9f", between);
  CliRun r = Perseus({"optimize", "--example", "gpt3-xl-a100", "--out", out_.string(), "--max-plans", "6",
                      "--zeus-plan-time", time_arg});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  json j = ExpectOutputs();
  ASSERT_FALSE(j.is_discarded());
  ASSERT_EQ(j["plans"].size(), 6u);
  EXPECT_EQ(j["frontier_plans"], n);
  EXPECT_EQ(j["plans"][0]["time_s"], all["plans"][0]["time_s"]);
  EXPECT_EQ(j["plans"][5]["time_s"], all["plans"][n - 1]["time_s"]);
  EXPECT_NE(r.out.find("plans.json:         6 of " + std::to_string(n) + " plans (--max-plans)"), std::string::npos)
      << r.out;
  // frontier.csv keeps the whole frontier.
  EXPECT_EQ(ReadText(out_ / "frontier.csv"), ReadText(dir_ / "full" / "frontier.csv"));
  // --zeus-plan-time alone writes that plan and the key plans; each is in plans.json under its index.
  std::vector<ZeusFile> files = ZeusFiles(out_ / "zeus");
  bool found = false;
  for (const ZeusFile& z : files) {
    ASSERT_LT(z.index, 6u);
    EXPECT_EQ(z.time_s, j["plans"][z.index]["time_s"].get<double>());
    found = found || z.time_s == all["plans"][n / 2]["time_s"].get<double>();
  }
  EXPECT_TRUE(found) << "the plan for --zeus-plan-time " << time_arg;
}

// The plans made, from the summary's "N plans made" (-1 if absent).
int PlansMade(const std::string& out) {
  const size_t at = out.find(" plans made ");
  if (at == std::string::npos) return -1;
  size_t begin = out.rfind(' ', at - 1);
  return std::atoi(out.substr(begin + 1, at - begin - 1).c_str());
}

TEST_F(OptimizeCli, PlansAreMadeAtAboutMaxPlansTimesAndEveryUnitWithZero) {
  // 0.05 ms units: about 13,000 record times over the example's 0.66 s.
  CliRun dflt = Perseus({"optimize", "--example", "gpt3-xl-a100", "--out", (dir_ / "d").string(), "--unit-time-ms",
                         "0.05"});
  ASSERT_EQ(dflt.exit_code, 0) << dflt.err;
  CliRun all = Perseus({"optimize", "--example", "gpt3-xl-a100", "--out", (dir_ / "a").string(), "--unit-time-ms",
                        "0.05", "--max-plans", "0"});
  ASSERT_EQ(all.exit_code, 0) << all.err;
  const int made_default = PlansMade(dflt.out), made_all = PlansMade(all.out);
  EXPECT_GE(made_default, 900) << dflt.out;
  EXPECT_LE(made_default, 1300) << dflt.out;
  EXPECT_GT(made_all, 10000) << all.out;
  const json d = json::parse(ReadText(dir_ / "d" / "plans.json")), a = json::parse(ReadText(dir_ / "a" / "plans.json"));
  EXPECT_LE(d["plans"].size(), 1000u);
  EXPECT_EQ(a["plans"].size(), a["frontier_plans"]);  // 0: every plan written
  EXPECT_EQ(d["plans"][0]["time_s"], a["plans"][0]["time_s"]);  // the fastest plan either way
}

TEST_F(OptimizeCli, MaxClockChangesLimitsEveryWrittenPlanAndReportsWhatItCost) {
  CliRun r = Perseus({"optimize", "--example", "gpt3-xl-a100", "--out", out_.string(), "--max-clock-changes", "4"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("clock-change limit: 4 per GPU per iteration; no-slowdown plan "), std::string::npos) << r.out;
  json j = ExpectOutputs();
  ASSERT_FALSE(j.is_discarded());
  // Every plan read back from plans.json: at most 4 changes per GPU around the cycle.
  Result<PlansFile> file = ReadPlansJson((out_ / "plans.json").string());
  ASSERT_TRUE(file.ok()) << file.status().ToString();
  ASSERT_GT(file->plans.size(), 1u);
  for (const PlansFilePlan& plan : file->plans) {
    for (size_t stage = 0; stage < plan.stages.size(); ++stage) {
      const std::vector<PlannedComputation>& order = plan.stages[stage];
      int changes = 0;
      for (size_t k = 0; k < order.size(); ++k) {
        changes += order[k].freq_mhz != order[(k + order.size() - 1) % order.size()].freq_mhz;
      }
      EXPECT_LE(changes, 4) << "stage " << stage << " plan at " << plan.time_s;
    }
  }
}

// --time-limit-s stops a solve that runs longer (8 x 96 takes about half a
// second) with an error naming the limit, and writes nothing; a limit it
// keeps changes nothing.
TEST_F(OptimizeCli, ATimeLimitStopsTheSolveAndWritesNothing) {
  CliRun r = Perseus({"optimize", "--example", "gpt3-175b-a100", "--stages", "8", "--microbatches", "96", "--out",
                      out_.string(), "--quiet", "--time-limit-s", "0.001"});
  EXPECT_EQ(r.exit_code, 1) << r.err;
  EXPECT_EQ(r.err, "perseus: error: stopped after 0.001 s (--time-limit-s): 1536 computations take the optimizer "
                   "longer (docs/design.md, \"Speed\", gives its run times by size); nothing was written\n");
  EXPECT_TRUE(FilesUnder(out_).empty());
  r = Perseus({"optimize", "--example", "gpt3-xl-a100", "--out", out_.string(), "--quiet", "--time-limit-s", "600"});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  ExpectOutputs();
  r = Perseus({"optimize", "--example", "gpt3-xl-a100", "--out", out_.string(), "--time-limit-s", "-1"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("--time-limit-s"), std::string::npos) << r.err;
}

TEST_F(OptimizeCli, MaxClockChangesBelowMinusOneIsAnError) {
  CliRun r = Perseus({"optimize", "--example", "gpt3-xl-a100", "--out", out_.string(), "--max-clock-changes", "-2"});
  EXPECT_NE(r.exit_code, 0);
  EXPECT_NE(r.err.find("--max-clock-changes"), std::string::npos) << r.err;
  EXPECT_TRUE(FilesUnder(out_).empty());
}

// A clock-change limit on a profile whose GPUs share no clock between their
// forward and backward leaves no plan as fast as all-max; the summary's line
// against 1F1B read that missing plan and crashed (found in review).
TEST_F(OptimizeCli, ALimitThatLeavesNoPlanAsFastAsAllMaxIsReportedNotACrash) {
  const std::string profile = WriteProfile("no_shared_clock.csv",
                                           "stage,instruction,frequency,time,energy\n"
                                           "0,forward,840,0.044549500535711446,8.880896010296528\n"
                                           "0,backward,1140,0.08708153754591162,24.595683717568836\n"
                                           "1,forward,645,0.047991117877524615,2.889039778979874\n"
                                           "1,backward,960,0.11558109393072524,8.061098491779234\n"
                                           "2,forward,1140,0.06226691241511215,10.658354767662644\n"
                                           "2,backward,1425,0.14009749576351765,64.59456729005394\n"
                                           "2,backward,1140,0.16091474264351174,48.354835395877096\n"
                                           "3,forward,1425,0.04807328732625046,18.406559264684116\n"
                                           "3,backward,1425,0.0919873896309566,25.758224038797575\n");
  CliRun r = Perseus({"optimize", profile, "--stages", "4", "--microbatches", "1", "--schedule", "gpipe",
                      "--blocking-power", "0", "--max-clock-changes", "0", "--out", out_.string()});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("this schedule at all-max"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("no plan as fast as all-max"), std::string::npos) << r.out;
  const std::vector<std::string> files = FilesUnder(out_);
  EXPECT_NE(std::find(files.begin(), files.end(), "plans.json"), files.end());
}

// Out-of-range numbers name the flag and what it expects, not CLI11's
// range up to the largest double.
TEST_F(OptimizeCli, BadNumbersNameTheFlagAndWhatItExpects) {
  const std::vector<std::pair<std::vector<std::string>, std::string>> cases = {
      {{"--max-plans", "-3"}, "--max-plans: expected a whole number >= 0, got -3"},
      {{"--blocking-power", "-1"}, "--blocking-power: expected a number in [0, 3000], got -1"},
      {{"--blocking-power", "1e300"}, "--blocking-power: expected a number in [0, 3000], got 1e300"},
      {{"--unit-time-ms", "0x10"}, "--unit-time-ms: expected a number > 0, got 0x10"},
      {{"--lower-bound-samples", "0x10"}, "--lower-bound-samples: expected a whole number in [-1, 10000], got 0x10"},
      {{"--unit-time-ms", "0"}, "--unit-time-ms: expected a number > 0, got 0"},
      {{"--unit-time-ms", "inf"}, "--unit-time-ms: expected a number > 0, got inf"},
      {{"--stages", "0"}, "--stages: expected a whole number > 0, got 0"},
      {{"--threads", "-2"}, "--threads: expected a whole number >= 0, got -2"},
      {{"--threads", "many"}, "--threads: expected a whole number >= 0, got many"},
      {{"--threads", "1.5"}, "--threads: expected a whole number >= 0, got 1.5"},
      {{"--microbatches", "1e3"}, "--microbatches: expected a whole number > 0, got 1e3"},
      {{"--max-plans", "3000000000"}, "--max-plans: expected a whole number >= 0, got 3000000000"},
  };
  for (const auto& [flag, message] : cases) {
    std::vector<std::string> args = {"optimize", "--example", "gpt3-xl-a100", "--out", out_.string()};
    args.insert(args.end(), flag.begin(), flag.end());
    CliRun r = Perseus(args);
    EXPECT_NE(r.exit_code, 0) << message;
    EXPECT_NE(r.err.find(message), std::string::npos) << r.err;
    EXPECT_EQ(r.err.find("179769"), std::string::npos) << r.err;
    EXPECT_TRUE(FilesUnder(out_).empty()) << message;
  }
}

// Whole numbers are read in base 10: CLI11 alone would take "010" as octal 8.
TEST_F(OptimizeCli, LeadingZerosAreDecimal) {
  CliRun r = Perseus({"optimize", "--example", "gpt3-xl-a100", "--microbatches", "010", "--out", out_.string()});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(json::parse(ReadText(out_ / "plans.json"))["microbatches"], 10);
}

// Plans are made on several threads; what is written must not depend on how many.
TEST_F(OptimizeCli, ThreadsDoNotChangeTheOutputs) {
  std::string plans[2];
  for (int t = 0; t < 2; ++t) {
    const fs::path out = dir_ / ("threads" + std::to_string(t));
    CliRun r = Perseus({"optimize", "--example", "gpt3-175b-a100", "--microbatches", "24", "--out", out.string(),
                        "--threads", t == 0 ? "1" : "3", "--quiet"});
    ASSERT_EQ(r.exit_code, 0) << r.err;
    EXPECT_NE(r.out.find(t == 0 ? "on 1 thread;" : " thread"), std::string::npos) << r.out;
    plans[t] = ReadText(out / "plans.json");
  }
  EXPECT_FALSE(plans[0].empty());
  EXPECT_TRUE(plans[0] == plans[1]) << "plans.json differs between 1 and 3 threads";
  EXPECT_EQ(ReadText(dir_ / "threads0" / "frontier.csv"), ReadText(dir_ / "threads1" / "frontier.csv"));
}

TEST_F(OptimizeCli, MaxPlansBelowTheKeptPlansIsAnError) {
  CliRun r = Perseus({"optimize", "--example", "gpt3-xl-a100", "--out", out_.string(), "--max-plans", "1"});
  EXPECT_NE(r.exit_code, 0);
  EXPECT_NE(r.err.find("perseus: error: --max-plans 1: fewer than the "), std::string::npos) << r.err;
  EXPECT_TRUE(FilesUnder(out_).empty());
}

TEST_F(OptimizeCli, ZeusPlanTimeFasterThanEveryPlanIsAnError) {
  CliRun r = Perseus({"optimize", "--example", "gpt3-xl-a100", "--out", out_.string(), "--zeus-plan-time", "0.001"});
  EXPECT_NE(r.exit_code, 0);
  EXPECT_EQ(r.err.rfind("perseus: error: --zeus-plan-time 0.001: no plan is that fast (the fastest takes ", 0), 0u)
      << r.err;
  EXPECT_EQ(r.out, "");
  EXPECT_TRUE(FilesUnder(out_).empty());
}

TEST_F(OptimizeCli, BadProfileValueFailsWithFileLineAndWritesNothing) {
  const std::string profile = WriteProfile("bad.csv",
                                           "stage,instruction,frequency,time,energy\n"
                                           "0,forward,1410,0.010,2.8\n"
                                           "0,forward,1200,abc,2.4\n"
                                           "0,backward,1410,0.021,5.9\n"
                                           "1,forward,1410,0.011,3.1\n"
                                           "1,backward,1410,0.023,6.4\n");
  CliRun r = Perseus({"optimize", profile, "--stages", "2", "--microbatches", "4", "--blocking-power", "60", "--out",
                   out_.string()});
  EXPECT_NE(r.exit_code, 0);
  EXPECT_EQ(r.err, "perseus: error: " + profile + ":3: column 'time': expected a number, got 'abc'\n");
  EXPECT_EQ(r.out, "");
  EXPECT_TRUE(FilesUnder(out_).empty());
}

TEST_F(OptimizeCli, MissingProfileFile) {
  const std::string profile = (dir_ / "nope.csv").string();
  CliRun r = Perseus({"optimize", profile, "--stages", "2", "--microbatches", "4", "--blocking-power", "60", "--out",
                   out_.string()});
  EXPECT_NE(r.exit_code, 0);
  EXPECT_EQ(r.err, "perseus: error: " + profile + ": No such file or directory\n");
  EXPECT_TRUE(FilesUnder(out_).empty());
}

TEST_F(OptimizeCli, ProfileWithTooFewStages) {
  const std::string profile = WriteProfile("p.csv", SmallProfile());
  CliRun r = Perseus({"optimize", profile, "--stages", "3", "--microbatches", "4", "--blocking-power", "60", "--out",
                   out_.string()});
  EXPECT_NE(r.exit_code, 0);
  EXPECT_EQ(r.err, "perseus: error: " + profile + ": its highest stage is 1, but the pipeline has 3 stages (0..2)\n");
  EXPECT_TRUE(FilesUnder(out_).empty());
}

TEST_F(OptimizeCli, ProfileNeedsBlockingPower) {
  const std::string profile = WriteProfile("p.csv", SmallProfile());
  CliRun r = Perseus({"optimize", profile, "--stages", "2", "--microbatches", "4", "--out", out_.string()});
  EXPECT_NE(r.exit_code, 0);
  EXPECT_EQ(r.err, "perseus: error: --blocking-power is required with a profile\n");
  EXPECT_TRUE(FilesUnder(out_).empty());
}

TEST_F(OptimizeCli, ProfileNeedsStagesAndMicrobatches) {
  const std::string profile = WriteProfile("p.csv", SmallProfile());
  CliRun r = Perseus({"optimize", profile, "--microbatches", "4", "--blocking-power", "60", "--out", out_.string()});
  EXPECT_NE(r.exit_code, 0);
  EXPECT_EQ(r.err, "perseus: error: --stages is required with a profile\n");
  r = Perseus({"optimize", profile, "--stages", "2", "--blocking-power", "60", "--out", out_.string()});
  EXPECT_NE(r.exit_code, 0);
  EXPECT_EQ(r.err, "perseus: error: --microbatches is required with a profile\n");
}

TEST_F(OptimizeCli, ExampleAndProfileTogetherIsAnError) {
  const std::string profile = WriteProfile("p.csv", SmallProfile());
  CliRun r = Perseus({"optimize", profile, "--example", "gpt3-xl-a100", "--stages", "2", "--microbatches", "4",
                   "--blocking-power", "60", "--out", out_.string()});
  EXPECT_NE(r.exit_code, 0);
  EXPECT_EQ(r.err, "perseus: error: give exactly one of PROFILE.csv or --example NAME\n");
  EXPECT_TRUE(FilesUnder(out_).empty());
}

TEST_F(OptimizeCli, NeitherExampleNorProfileIsAnError) {
  CliRun r = Perseus({"optimize", "--out", out_.string()});
  EXPECT_NE(r.exit_code, 0);
  EXPECT_EQ(r.err, "perseus: error: give exactly one of PROFILE.csv or --example NAME\n");
}

TEST_F(OptimizeCli, UnknownExampleIsRejected) {
  CliRun r = Perseus({"optimize", "--example", "gpt5-a100", "--out", out_.string()});
  EXPECT_NE(r.exit_code, 0);
  EXPECT_NE(r.err.find("--example"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("gpt5-a100"), std::string::npos) << r.err;
  EXPECT_TRUE(FilesUnder(out_).empty());
}

TEST_F(OptimizeCli, UnknownScheduleIsRejected) {
  const std::string profile = WriteProfile("p.csv", SmallProfile());
  CliRun r = Perseus({"optimize", profile, "--stages", "2", "--microbatches", "4", "--blocking-power", "60",
                   "--schedule", "zigzag", "--out", out_.string()});
  EXPECT_NE(r.exit_code, 0);
  EXPECT_EQ(r.err,
            "perseus: error: --schedule: schedule: expected '1f1b', 'gpipe', 'interleaved-1f1b', 'zb-h1', "
            "'dualpipev' or 'zb-v', got 'zigzag'\n");
}

TEST_F(OptimizeCli, ChunksNeedTheInterleavedSchedule) {
  const std::string profile = WriteProfile("p.csv", SmallProfile());
  CliRun r = Perseus({"optimize", profile, "--stages", "2", "--microbatches", "4", "--blocking-power", "60",
                      "--chunks", "2", "--out", out_.string()});
  EXPECT_NE(r.exit_code, 0);
  EXPECT_EQ(r.err, "perseus: error: chunks: only the interleaved-1f1b, dualpipev and zb-v schedules take model chunks, "
                   "got 2\n");
  EXPECT_TRUE(FilesUnder(out_).empty());
}

TEST_F(OptimizeCli, SmallProfileWith1F1B) {
  const std::string profile = WriteProfile("p.csv", SmallProfile());
  CliRun r = Perseus({"optimize", profile, "--stages", "2", "--microbatches", "4", "--blocking-power", "60", "--out",
                   out_.string()});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("no-slowdown plan"), std::string::npos) << r.out;
  json j = ExpectOutputs();
  ASSERT_FALSE(j.is_discarded());
  EXPECT_EQ(j["schedule"], "1f1b");
  EXPECT_EQ(j["stages"], 2);
  EXPECT_EQ(j["microbatches"], 4);
  EXPECT_EQ(j["blocking_power_w"], 60);
  // Stage 0 of 1F1B with 2 stages runs F0 F1 B0 F2 B1 F3 B2 B3.
  const auto& s0 = j["computations"][0];
  ASSERT_EQ(s0.size(), 8u);
  EXPECT_EQ(s0[2][0], "backward");
  EXPECT_EQ(s0[2][1], 0);
  const auto& clocks = j["plans"][0]["sm_clocks_mhz"];
  ASSERT_EQ(clocks.size(), 2u);
  for (const auto& stage : clocks) {
    ASSERT_EQ(stage.size(), 8u);
    for (const auto& f : stage) EXPECT_TRUE(f == 1410 || f == 1200 || f == 1000) << f;
  }
  for (size_t i = 1; i < j["plans"].size(); ++i) {
    for (const auto& c : j["plans"][i]["changes"]) EXPECT_TRUE(c[2] == 1410 || c[2] == 1200 || c[2] == 1000) << c;
  }
}

TEST_F(OptimizeCli, SmallProfileWithGPipe) {
  const std::string profile = WriteProfile("p.csv", SmallProfile());
  CliRun r = Perseus({"optimize", profile, "--stages", "2", "--microbatches", "4", "--blocking-power", "60",
                   "--schedule", "gpipe", "--out", out_.string()});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  json j = ExpectOutputs();
  ASSERT_FALSE(j.is_discarded());
  EXPECT_EQ(j["schedule"], "gpipe");
  const auto& s0 = j["computations"][0];
  ASSERT_EQ(s0.size(), 8u);
  for (int k = 0; k < 4; ++k) EXPECT_EQ(s0[k][0], "forward");
  for (int k = 4; k < 8; ++k) EXPECT_EQ(s0[k][0], "backward");
}

TEST_F(OptimizeCli, SmallProfileWithInterleaved1F1B) {
  const std::string profile = WriteProfile("p.csv", SmallProfile());
  CliRun r = Perseus({"optimize", profile, "--stages", "2", "--microbatches", "4", "--blocking-power", "60",
                   "--schedule", "interleaved-1f1b", "--chunks", "2", "--out", out_.string()});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  json j = ExpectOutputs();
  ASSERT_FALSE(j.is_discarded());
  EXPECT_EQ(j["schedule"], "interleaved-1f1b");
  EXPECT_EQ(j["chunks"], 2);
  for (const auto& stage : j["computations"]) {
    ASSERT_EQ(stage.size(), 16u);
    for (const auto& c : stage) EXPECT_EQ(c.size(), 3u);  // instruction, microbatch, chunk
  }
}

// The small profile with its backwards split into input and weight halves
// (the whole backward left for perseus to derive).
std::string SmallSplitProfile() {
  std::string text = "stage,instruction,frequency,time,energy\n";
  for (int s = 0; s < 2; ++s) {
    for (int f : {1410, 1200, 1000}) {
      const double t = 0.010 * (1 + 0.1 * s) * 1410.0 / f, power_w = 280.0 * (f / 1410.0) * (f / 1410.0);
      char rows[320];
      std::snprintf(rows, sizeof rows, "%d,forward,%d,%.6f,%.6f\n%d,backward_input,%d,%.6f,%.6f\n"
                                       "%d,backward_weight,%d,%.6f,%.6f\n",
                    s, f, t, t * power_w, s, f, t, t * power_w, s, f, 1.1 * t, 1.1 * t * power_w);
      text += rows;
    }
  }
  return text;
}

TEST_F(OptimizeCli, ZeroBubbleSchedulesWriteSplitPlansAndCompareWith1F1B) {
  const std::string profile = WriteProfile("split.csv", SmallSplitProfile());
  for (const char* schedule : {"zb-h1", "dualpipev", "zb-v"}) {
    SCOPED_TRACE(schedule);
    std::filesystem::remove_all(out_);
    CliRun r = Perseus({"optimize", profile, "--stages", "2", "--microbatches", "4", "--blocking-power", "60",
                        "--schedule", schedule, "--out", out_.string()});
    ASSERT_EQ(r.exit_code, 0) << r.err;
    EXPECT_NE(r.out.find("vs 1f1b all-max:"), std::string::npos) << r.out;
    json j = ExpectOutputs();
    ASSERT_FALSE(j.is_discarded());
    EXPECT_EQ(j["schedule"], schedule);
    std::set<std::string> names;
    for (const auto& stage : j["computations"]) {
      for (const auto& c : stage) names.insert(c[0].get<std::string>());
    }
    EXPECT_TRUE(names.count("backward_input") && names.count("backward_weight")) << j["computations"].dump();
  }
}

TEST_F(OptimizeCli, ZeroBubbleScheduleWithoutSplitRowsFailsAndWritesNothing) {
  const std::string profile = WriteProfile("p.csv", SmallProfile());
  CliRun r = Perseus({"optimize", profile, "--stages", "2", "--microbatches", "4", "--blocking-power", "60",
                      "--schedule", "zb-h1", "--out", out_.string()});
  EXPECT_NE(r.exit_code, 0);
  EXPECT_EQ(r.err,
            "perseus: error: " + profile + ": stage 0 has no 'backward_input' and 'backward_weight' rows, which the zb-h1 "
            "schedule runs (docs/formats.md)\n");
  EXPECT_TRUE(FilesUnder(out_).empty());
}

TEST_F(OptimizeCli, InterleavedProfileWithWrongStageCount) {
  // Three stages fit neither 2 GPUs nor 2 x 2 virtual stages.
  std::string text = SmallProfile();
  text += "2,forward,1410,0.01,2.8,A100\n2,backward,1410,0.02,5.6,A100\n";
  const std::string profile = WriteProfile("p3.csv", text);
  CliRun r = Perseus({"optimize", profile, "--stages", "2", "--microbatches", "4", "--blocking-power", "60",
                   "--schedule", "interleaved-1f1b", "--chunks", "2", "--out", out_.string()});
  EXPECT_NE(r.exit_code, 0);
  EXPECT_EQ(r.err, "perseus: error: " + profile + " has 3 stages but the pipeline needs 2 or 4\n");
  EXPECT_TRUE(FilesUnder(out_).empty());
}

}  // namespace
