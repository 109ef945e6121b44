// Tests of the GPU table and the DVFS model: aliases and error texts, time
// and power as functions of the clock, the energy-minimising clock, and
// GenerateProfile's output and errors.
#include <gtest/gtest.h>

#include "perseus/gpu_model.h"

namespace perseus {
namespace {

GpuSpec Gpu(const std::string& name) {
  Result<GpuSpec> gpu = FindGpu(name);
  EXPECT_TRUE(gpu.ok()) << gpu.status().ToString();
  return gpu.ok() ? *gpu : GpuSpec{};
}

TEST(FindGpu, AcceptsNamesAndAliasesInAnyCase) {
  for (const char* name : {"a100", "A100", "A100-SXM4-40GB", "a100-sxm4-40gb"}) {
    EXPECT_EQ(Gpu(name).name, "A100-SXM4-40GB") << name;
  }
  for (const char* name : {"h100", "H100", "H100-SXM5-80GB"}) {
    EXPECT_EQ(Gpu(name).name, "H100-SXM5-80GB") << name;
  }
  EXPECT_EQ(GpuNames(), (std::vector<std::string>{"A100-SXM4-40GB", "H100-SXM5-80GB"}));
}

TEST(FindGpu, UnknownNameListsKnownGpus) {
  Result<GpuSpec> gpu = FindGpu("v100");
  ASSERT_FALSE(gpu.ok());
  EXPECT_EQ(gpu.status().code(), Status::Code::kNotFound);
  EXPECT_EQ(gpu.status().message(), "unknown GPU 'v100'; known GPUs: A100-SXM4-40GB (a100), H100-SXM5-80GB (h100)");
}

TEST(FindGpu, A100ConstantsMatchPublicFacts) {
  GpuSpec a100 = Gpu("a100");
  ASSERT_EQ(a100.supported_sm_clocks_mhz.size(), 81u);
  EXPECT_EQ(a100.supported_sm_clocks_mhz.front(), 1410);
  EXPECT_EQ(a100.supported_sm_clocks_mhz[1], 1395);
  EXPECT_EQ(a100.supported_sm_clocks_mhz.back(), 210);
  EXPECT_EQ(a100.max_sm_clock_mhz, 1410);
  EXPECT_EQ(a100.min_sm_clock_mhz, 210);
  EXPECT_DOUBLE_EQ(a100.tdp_w, 400);
  EXPECT_DOUBLE_EQ(a100.min_power_limit_w, 100);
  EXPECT_DOUBLE_EQ(a100.idle_power_w, 52.5);
  EXPECT_DOUBLE_EQ(a100.blocking_power_w, 83.64);
}

TEST(FindGpu, H100ConstantsMatchPublicFacts) {
  GpuSpec h100 = Gpu("h100");
  ASSERT_EQ(h100.supported_sm_clocks_mhz.size(), 110u);
  EXPECT_EQ(h100.supported_sm_clocks_mhz.front(), 1980);
  EXPECT_EQ(h100.supported_sm_clocks_mhz.back(), 345);
  EXPECT_DOUBLE_EQ(h100.tdp_w, 700);
  EXPECT_DOUBLE_EQ(h100.min_power_limit_w, 200);
  EXPECT_DOUBLE_EQ(h100.idle_power_w, 72);
  EXPECT_DOUBLE_EQ(h100.blocking_power_w, 110);
}

TEST(ModelComputation, TimeFallsAsTheClockRises) {
  for (const char* name : {"a100", "h100"}) {
    GpuSpec gpu = Gpu(name);
    for (double c : {0.0, 0.3, 0.81, 1.0}) {
      KernelWork work{0.05, c, 300};
      double prev_time_s = 1e9;
      for (auto it = gpu.supported_sm_clocks_mhz.rbegin(); it != gpu.supported_sm_clocks_mhz.rend(); ++it) {
        double time_s = ModelComputation(gpu, work, *it).time_s;
        if (c > 0) {
          EXPECT_LT(time_s, prev_time_s) << name << " c=" << c << " at " << *it << " MHz";
        } else {
          EXPECT_DOUBLE_EQ(time_s, 0.05);
        }
        prev_time_s = time_s;
      }
      EXPECT_DOUBLE_EQ(ModelComputation(gpu, work, gpu.max_sm_clock_mhz).time_s, 0.05);
    }
  }
}

TEST(ModelComputation, TimeIsInverseToClockWhenComputeBound) {
  GpuSpec gpu = Gpu("a100");
  KernelWork work{0.1, 1.0, 300};
  EXPECT_NEAR(ModelComputation(gpu, work, 705).time_s, 0.2, 1e-12);
}

TEST(ModelComputation, PowerStaysBetweenIdleAndTdpAndRisesWithClock) {
  for (const char* name : {"a100", "h100"}) {
    GpuSpec gpu = Gpu(name);
    for (double busy_w : {1.0, gpu.idle_power_w, 0.5 * gpu.tdp_w, gpu.tdp_w, 3 * gpu.tdp_w}) {
      double prev_power_w = 0;
      for (auto it = gpu.supported_sm_clocks_mhz.rbegin(); it != gpu.supported_sm_clocks_mhz.rend(); ++it) {
        OperatingPoint op = ModelComputation(gpu, KernelWork{0.02, 0.8, busy_w}, *it);
        EXPECT_GE(op.power_w, gpu.idle_power_w) << name << " busy " << busy_w << " W at " << *it << " MHz";
        EXPECT_LE(op.power_w, gpu.tdp_w) << name << " busy " << busy_w << " W at " << *it << " MHz";
        EXPECT_GE(op.power_w, prev_power_w);
        EXPECT_DOUBLE_EQ(op.energy_j, op.power_w * op.time_s);
        prev_power_w = op.power_w;
      }
    }
  }
}

TEST(ModelComputation, BusyPowerIsDrawnAtMaxClock) {
  GpuSpec gpu = Gpu("a100");
  EXPECT_DOUBLE_EQ(ModelComputation(gpu, KernelWork{0.02, 0.8, 350}, 1410).power_w, 350);
}

TEST(ModelComputation, ClampsClocksOutsideTheSupportedRange) {
  GpuSpec gpu = Gpu("a100");
  KernelWork work{0.02, 0.8, 350};
  EXPECT_DOUBLE_EQ(ModelComputation(gpu, work, 5000).energy_j, ModelComputation(gpu, work, 1410).energy_j);
  EXPECT_DOUBLE_EQ(ModelComputation(gpu, work, 0).energy_j, ModelComputation(gpu, work, 210).energy_j);
  EXPECT_DOUBLE_EQ(ModelComputation(GpuSpec{}, work, 1000).energy_j, 0);
}

// The clock at which `work` costs the least energy on `gpu`.
int MinEnergyClockMhz(const GpuSpec& gpu, const KernelWork& work) {
  int best_mhz = gpu.max_sm_clock_mhz;
  double best_j = ModelComputation(gpu, work, best_mhz).energy_j;
  for (int f : gpu.supported_sm_clocks_mhz) {
    double e = ModelComputation(gpu, work, f).energy_j;
    if (e < best_j) {
      best_j = e;
      best_mhz = f;
    }
  }
  return best_mhz;
}

TEST(ModelComputation, A100EnergyIsLowestAroundOneGigahertz) {
  GpuSpec gpu = Gpu("a100");
  for (double c : {kTransformerForwardComputeFraction, kTransformerBackwardComputeFraction}) {
    KernelWork work{0.05, c, 400};
    int best_mhz = MinEnergyClockMhz(gpu, work);
    EXPECT_GE(best_mhz, 960) << "c=" << c;
    EXPECT_LE(best_mhz, 1200) << "c=" << c;
    // Energy rises again at the bottom of the clock table.
    EXPECT_GT(ModelComputation(gpu, work, 210).energy_j, ModelComputation(gpu, work, best_mhz).energy_j);
    EXPECT_LT(ModelComputation(gpu, work, best_mhz).energy_j, ModelComputation(gpu, work, 1410).energy_j);
  }
}

TEST(GenerateProfile, ListsEveryClockDownToTheFloor) {
  GpuSpec gpu = Gpu("a100");
  std::vector<std::array<KernelWork, 2>> stages = {{KernelWork{0.04, 0.81, 350}, KernelWork{0.08, 0.75, 360}},
                                                   {KernelWork{0.05, 0.81, 350}, KernelWork{0.10, 0.75, 360}}};
  Result<Profile> p = GenerateProfile(gpu, stages, 855);
  ASSERT_TRUE(p.ok()) << p.status().ToString();
  ASSERT_EQ(p->num_stages(), 2);
  const std::vector<FreqPoint>& bwd = p->stages[1].at(Instruction::kBackward);
  ASSERT_EQ(bwd.size(), 38u);  // 1410..855 in 15 MHz steps, like the Perseus profiles
  EXPECT_EQ(bwd.front().freq_mhz, 1410);
  EXPECT_EQ(bwd.back().freq_mhz, 855);
  EXPECT_DOUBLE_EQ(bwd.front().time_s, 0.10);
  // The profile survives the one CSV reader everyone uses.
  Result<Profile> again = ParseProfileCsv(ProfileToCsv(*p), "generated", 2);
  ASSERT_TRUE(again.ok()) << again.status().ToString();
  EXPECT_EQ(ProfileToCsv(*again), ProfileToCsv(*p));
}

TEST(GenerateProfile, ErrorsNameTheStageFieldOrClock) {
  GpuSpec gpu = Gpu("a100");
  KernelWork ok{0.04, 0.8, 300};
  EXPECT_EQ(GenerateProfile(gpu, {}, 855).status().message(), "no stages to model");
  EXPECT_EQ(GenerateProfile(gpu, {{ok, ok}}, 100).status().message(),
            "minimum clock 100 MHz is outside A100-SXM4-40GB's range 210..1410 MHz");
  EXPECT_EQ(GenerateProfile(gpu, {{ok, ok}, {ok, KernelWork{-1, 0.8, 300}}}, 855).status().message(),
            "stage 1 backward: time_at_max_s: expected a positive number, got -1");
  EXPECT_EQ(GenerateProfile(gpu, {{KernelWork{0.1, 1.5, 300}, ok}}, 855).status().message(),
            "stage 0 forward: compute_bound_fraction: expected 0..1, got 1.5");
  EXPECT_EQ(GenerateProfile(gpu, {{ok, KernelWork{0.1, 0.5, 0}}}, 855).status().message(),
            "stage 0 backward: busy_power_at_max_w: expected a positive number, got 0");
}

}  // namespace
}  // namespace perseus
