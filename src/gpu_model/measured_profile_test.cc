// Compares the shape of the modelled A100 energy and time curves against the
// measured GPT-3 175B A100 profile of the Perseus artifact (shared data).
// Only normalised curves are compared: the measured boards draw more than the
// 400 W default limit of our A100 spec (docs/gpu_model.md). Skips when the
// shared data folder is absent.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <filesystem>

#include "perseus/gpu_model.h"

namespace perseus {
namespace {

const std::string kMeasuredPath = std::string(PERSEUS_SHARED_DATA) + "/sosp24/stage_profile/gpt3-175b+a100_sxm_bf16.csv";

// The modelled points of a computation that takes as long as `measured` does at its maximum clock.
std::vector<FreqPoint> ModelLike(const std::vector<FreqPoint>& measured, double compute_fraction) {
  GpuSpec gpu = *FindGpu("a100");
  KernelWork work{measured.front().time_s, compute_fraction, gpu.tdp_w};
  std::vector<FreqPoint> out;
  for (const FreqPoint& p : measured) {
    OperatingPoint op = ModelComputation(gpu, work, p.freq_mhz);
    out.push_back(FreqPoint{p.freq_mhz, op.time_s, op.energy_j});
  }
  return out;
}

int MinEnergyClockMhz(const std::vector<FreqPoint>& pts) {
  const FreqPoint* best = &pts.front();
  for (const FreqPoint& p : pts) {
    if (p.energy_j < best->energy_j) best = &p;
  }
  return best->freq_mhz;
}

const FreqPoint& At(const std::vector<FreqPoint>& pts, int freq_mhz) {
  for (const FreqPoint& p : pts) {
    if (p.freq_mhz == freq_mhz) return p;
  }
  ADD_FAILURE() << "no point at " << freq_mhz << " MHz";
  return pts.front();
}

class MeasuredProfile : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!std::filesystem::exists(kMeasuredPath)) {
      GTEST_SKIP() << "shared data not found at " << kMeasuredPath << "; skipping";
    }
    Result<Profile> p = LoadProfileCsv(kMeasuredPath, 8);
    ASSERT_TRUE(p.ok()) << p.status().ToString();
    measured_ = std::move(*p);
  }

  // Runs `check(measured, modelled, label)` for every stage and instruction.
  template <typename Check>
  void ForEachCurve(Check check) {
    for (int s = 0; s < measured_.num_stages(); ++s) {
      for (Instruction ins : {Instruction::kForward, Instruction::kBackward}) {
        const std::vector<FreqPoint>& meas = measured_.stages[s].at(ins);
        double c = ins == Instruction::kForward ? kTransformerForwardComputeFraction : kTransformerBackwardComputeFraction;
        check(meas, ModelLike(meas, c), "stage " + std::to_string(s) + " " + InstructionName(ins));
      }
    }
  }

  Profile measured_;
};

TEST_F(MeasuredProfile, EnergyMinimisingClockIsWithin150MHz) {
  ForEachCurve([](const std::vector<FreqPoint>& meas, const std::vector<FreqPoint>& model, const std::string& label) {
    EXPECT_LE(std::abs(MinEnergyClockMhz(model) - MinEnergyClockMhz(meas)), 150) << label;
  });
}

// 1005 MHz is the supported clock nearest to 1 GHz (1410 - 27 * 15).
TEST_F(MeasuredProfile, RelativeTimeAt1005MHzIsWithin10Percent) {
  ForEachCurve([](const std::vector<FreqPoint>& meas, const std::vector<FreqPoint>& model, const std::string& label) {
    double meas_rel = At(meas, 1005).time_s / meas.front().time_s;
    double model_rel = At(model, 1005).time_s / model.front().time_s;
    EXPECT_NEAR(model_rel / meas_rel, 1.0, 0.10) << label;
  });
}

TEST_F(MeasuredProfile, RelativeEnergyIsWithin5PercentAtEveryClock) {
  ForEachCurve([](const std::vector<FreqPoint>& meas, const std::vector<FreqPoint>& model, const std::string& label) {
    for (size_t i = 0; i < meas.size(); ++i) {
      double meas_rel = meas[i].energy_j / meas.front().energy_j;
      double model_rel = model[i].energy_j / model.front().energy_j;
      EXPECT_NEAR(model_rel / meas_rel, 1.0, 0.05) << label << " at " << meas[i].freq_mhz << " MHz";
    }
  });
}

}  // namespace
}  // namespace perseus
