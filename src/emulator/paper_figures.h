// The Perseus paper's published large-scale emulation results (SOSP '24,
// Table 6 and Fig. 7; quoted in shared/data/README.md) and the setup that
// produced them: A100 profiles, 8 stages of 8-way tensor parallelism, times
// and energies x10, global batch 1,536 sequences, blocking power 83.64 W.
#pragma once

#include <array>

namespace perseus::emulator {

inline constexpr std::array<int, 4> kPaperMicrobatches = {12, 24, 48, 96};
inline constexpr int kPaperGlobalBatch = 1536;  // sequences; pipelines = global batch / microbatches
inline constexpr int kPaperStages = 8;
inline constexpr int kPaperGpusPerStage = 8;
inline constexpr double kPaperProfileScale = 10;
inline constexpr double kPaperBlockingPowerW = 83.64;
inline constexpr double kPaperStragglerFactor = 1.2;
inline constexpr int kPaperStragglerMicrobatches = 96;  // Fig. 7 is at 16 pipelines (1,024 GPUs)

struct PaperModel {
  const char* name;                         // "gpt3-175b"
  const char* display;                      // "GPT-3 175B"
  const char* profile_file;                 // under sosp24/
  std::array<double, 4> intrinsic_savings;  // Table 6, per kPaperMicrobatches, fractions
  double straggler_savings;                 // Fig. 7 at 1.2x, fraction
};

inline constexpr std::array<PaperModel, 2> kPaperModels = {{
    {"gpt3-175b", "GPT-3 175B", "stage_profile/gpt3-175b+a100_sxm_bf16.csv", {0.152, 0.142, 0.136, 0.133}, 0.270},
    {"bloom", "Bloom 176B", "stage_profile/bloom+a100_sxm_bf16.csv", {0.105, 0.071, 0.052, 0.043}, 0.299},
}};

}  // namespace perseus::emulator
