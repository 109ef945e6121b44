// End to end: the paper's large-scale emulation reproduced by the real binary
// (`perseus emulate --reproduce-paper`), and Fig. 7's 1.2x straggler point by
// the ordinary job command. Every figure must reach the paper's: Table 6
// intrinsic savings and Fig. 7 total savings. Skips without the shared data.
#include <gtest/gtest.h>

#include <filesystem>
#include <nlohmann/json.hpp>

#include "common/temp_dir_for_test.h"
#include "emulate_test_util.h"

namespace perseus::e2e {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

// The whole reproduction runs once (about 15 s); the checks follow.
class PaperReproduction : public ::testing::Test {
 protected:
  void SetUp() override {
    if (Sosp24Dir().empty()) GTEST_SKIP() << "shared data (PERSEUS_SHARED_DATA/sosp24) not found; skipping";
    CommandResult r = RunPerseus({"emulate", "--reproduce-paper", "--paper-data", Sosp24Dir(), "--out", out_});
    ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
    report_ = json::parse(ReadWholeFile(out_ + "/report.json"));
  }
  void CheckTable6() {
    const json& rows = report_["table6"];
    ASSERT_EQ(rows.size(), 8u);
    for (const json& row : rows) {
      const int mb = row["microbatches"];
      EXPECT_EQ(row["pipelines"], 1536 / mb);
      EXPECT_EQ(row["gpus"], 1536 / mb * 64);
      EXPECT_GE(row["intrinsic_savings"].get<double>(), row["paper_intrinsic_savings"].get<double>())
          << row["model"] << " " << mb << " microbatches";
    }
    EXPECT_DOUBLE_EQ(rows[0]["paper_intrinsic_savings"].get<double>(), 0.152);
    EXPECT_DOUBLE_EQ(rows[7]["paper_intrinsic_savings"].get<double>(), 0.043);
  }

  void CheckFigure7() {
    const json& rows = report_["figure7"];
    ASSERT_EQ(rows.size(), 2u);
    for (const json& row : rows) {
      EXPECT_EQ(row["pipelines"], 16);
      EXPECT_GE(row["perseus_savings"].get<double>(), row["paper_perseus_savings"].get<double>()) << row["model"];
      const json& sweep = row["sweep"];
      ASSERT_EQ(sweep.size(), 11u);
      EXPECT_DOUBLE_EQ(sweep[1]["factor"].get<double>(), 1.05);
      EXPECT_DOUBLE_EQ(sweep[10]["factor"].get<double>(), 1.5);
      for (const json& point : sweep) {
        for (const char* policy : {"perseus", "envpipe", "zeus-global"}) {
          EXPECT_TRUE(point["savings_vs_allmax"].contains(policy)) << policy;
        }
        EXPECT_GE(point["savings_vs_allmax"]["perseus"].get<double>(),
                  point["savings_vs_allmax"]["envpipe"].get<double>());
      }
      // Savings grow while the straggler is within T*.
      EXPECT_GT(sweep[4]["savings_vs_allmax"]["perseus"].get<double>(),
                sweep[0]["savings_vs_allmax"]["perseus"].get<double>());
    }
    EXPECT_DOUBLE_EQ(rows[0]["paper_perseus_savings"].get<double>(), 0.270);
    EXPECT_DOUBLE_EQ(rows[1]["paper_perseus_savings"].get<double>(), 0.299);
  }

  void CheckReportStatesThePaperBesideOurs() {
    std::string md = ReadWholeFile(out_ + "/report.md");
    for (const char* paper : {"15.2%", "14.2%", "13.6%", "13.3%", "10.5%", "7.1%", "5.2%", "4.3%", "27.0%", "29.9%"}) {
      EXPECT_NE(md.find(paper), std::string::npos) << paper;
    }
    EXPECT_EQ(md.find("**no**"), std::string::npos) << "a figure is below the paper's";
    for (const char* f : {"table6.svg", "savings_vs_straggler_gpt3-175b.svg", "savings_vs_straggler_bloom.svg"}) {
      EXPECT_TRUE(fs::exists(out_ + "/" + f)) << f;
    }
  }

  ScopedTempDir tmp_;
  const std::string out_ = tmp_.Path("out");
  json report_;
};

TEST_F(PaperReproduction, Table6AndFigure7ReachThePaper) {
  CheckTable6();
  CheckFigure7();
  CheckReportStatesThePaperBesideOurs();
}

// Fig. 7 from the job command a user would type: 16 pipelines x 8 stages x 8 GPUs, x10 profile, one 1.2x straggler.
TEST(PaperFigure7, JobCommandWithOneStragglerReachesThePaper) {
  if (Sosp24Dir().empty()) GTEST_SKIP() << "shared data (PERSEUS_SHARED_DATA/sosp24) not found; skipping";
  const std::pair<const char*, double> models[] = {{"gpt3-175b", 0.270}, {"bloom", 0.299}};
  for (const auto& [model, paper] : models) {
    ScopedTempDir tmp;
    std::string out = tmp.Path("out");
    CommandResult r = RunPerseus({"emulate",
                                  Sosp24Dir() + "/stage_profile/" + model + "+a100_sxm_bf16.csv",
                                  "--stages",
                                  "8",
                                  "--microbatches",
                                  "96",
                                  "--pipelines",
                                  "16",
                                  "--gpus-per-stage",
                                  "8",
                                  "--blocking-power",
                                  "83.64",
                                  "--scale",
                                  "10",
                                  "--straggler",
                                  "1.2",
                                  "--iterations",
                                  "5",
                                  "--sweep",
                                  "1.2",
                                  "--out",
                                  out});
    ASSERT_EQ(r.exit_code, 0) << r.err;
    json report = json::parse(ReadWholeFile(out + "/report.json"));
    EXPECT_EQ(report["job"]["gpus"], 1024);
    for (const json& p : report["policies"]) {
      if (p["name"] == "perseus") {
        EXPECT_GE(p["savings_vs_allmax"].get<double>(), paper) << model;
      }
    }
  }
}

}  // namespace
}  // namespace perseus::e2e
