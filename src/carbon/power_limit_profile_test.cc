#include "carbon/power_limit_profile.h"

#include <gtest/gtest.h>

#include <fstream>

#include "common/temp_dir_for_test.h"

namespace perseus::carbon {
namespace {

TEST(PowerLimitProfile, ReadsZeusFormatAndSumsGpus) {
  ScopedTempDir tmp;
  std::string path = tmp.Write("pl.csv",
                                "start_time,window_name,elapsed_time,gpu0_energy,gpu1_energy\n"
                                "1,__GlobalPowerLimitOptimizer_200,10,100,110\n"
                                "2,__GlobalPowerLimitOptimizer_300,8,150,150\n"
                                "3,__GlobalPowerLimitOptimizer_100,20,90,90\n");
  Result<PowerLimitProfile> p = LoadPowerLimitProfile(path);
  ASSERT_TRUE(p.ok()) << p.status().ToString();
  EXPECT_EQ(p->num_gpus, 2);
  ASSERT_EQ(p->points.size(), 3u);
  EXPECT_EQ(p->points[0].power_limit_w, 300);
  EXPECT_DOUBLE_EQ(p->points[1].energy_j, 210);
  KnobSet k = PowerLimitKnobs(*p);
  EXPECT_EQ(k.reference.label, "300 W");
  EXPECT_EQ(k.options.size(), 3u);
}

TEST(PowerLimitProfile, ErrorsNameFileLineAndColumn) {
  ScopedTempDir tmp;
  std::string path = tmp.Write("plbad.csv", "start_time,window_name,elapsed_time,gpu0_energy\n1,warmup,10,100\n");
  Result<PowerLimitProfile> p = LoadPowerLimitProfile(path);
  ASSERT_FALSE(p.ok());
  EXPECT_EQ(p.status().message(),
            path + ":2: column 'window_name': expected '__GlobalPowerLimitOptimizer_<watts>', got 'warmup'");
  std::string noe = tmp.Write("plnoe.csv", "start_time,window_name,elapsed_time\n1,__GlobalPowerLimitOptimizer_1,1\n");
  EXPECT_EQ(LoadPowerLimitProfile(noe).status().message(), noe + ": no gpu<i>_energy column");
}

TEST(PowerLimitProfile, RejectsImpossibleLimitsEnergiesAndDuplicates) {
  ScopedTempDir tmp;
  const std::string header = "start_time,window_name,elapsed_time,gpu0_energy\n";
  auto error = [&](const std::string& rows) {
    return LoadPowerLimitProfile(tmp.Write("pl.csv", header + rows)).status().message();
  };
  const std::string at = tmp.path() + "/pl.csv:";
  // Too many digits for an int once crashed the reader (std::stoi).
  EXPECT_EQ(error("1,__GlobalPowerLimitOptimizer_99999999999,10,100\n"),
            at + "2: column 'window_name': power limit 99999999999 W: expected 1 to 10000 W");
  EXPECT_EQ(error("1,__GlobalPowerLimitOptimizer_0,10,100\n"),
            at + "2: column 'window_name': power limit 0 W: expected 1 to 10000 W");
  EXPECT_EQ(error("1,__GlobalPowerLimitOptimizer_250,10,100\n2,__GlobalPowerLimitOptimizer_250,11,90\n"),
            at + "3: column 'window_name': power limit 250 W also on line 2");
  EXPECT_EQ(error("1,__GlobalPowerLimitOptimizer_250,10,-5\n"), at + "2: column 'gpu0_energy': must be > 0");
  EXPECT_EQ(error("1,__GlobalPowerLimitOptimizer_250,10,0\n"), at + "2: column 'gpu0_energy': must be > 0");
}

TEST(PowerLimitProfile, SharedV100ResNet50) {
  const std::string path = std::string(PERSEUS_SHARED_DATA) + "/zeus/power_limit_profiles/V100+resnet50+gpu0.csv";
  if (!std::ifstream(path)) GTEST_SKIP() << "shared data absent: " << path;
  Result<PowerLimitProfile> p = LoadPowerLimitProfile(path);
  ASSERT_TRUE(p.ok()) << p.status().ToString();
  EXPECT_EQ(p->points.front().power_limit_w, 250);
  EXPECT_EQ(p->points.back().power_limit_w, 100);
  KnobSet k = PowerLimitKnobs(*p);
  EXPECT_GE(k.options.size(), 3u);
}

}  // namespace
}  // namespace perseus::carbon
