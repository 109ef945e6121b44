// Profiles: the measured time and energy of each stage's forward and backward
// computation at each GPU SM frequency.
//
// The on-disk format is the Zeus/Perseus CSV `stage,instruction,frequency,time,
// energy` (instruction `forward`/`backward`, frequency in MHz, time in seconds
// and energy in joules for one microbatch; extra columns are ignored; stages
// may list different frequencies). Extension for zero-bubble schedules: a
// stage may also (or instead) list `backward_input` and `backward_weight`
// rows, the backward split into its input-gradient and weight-gradient
// halves; both or neither. A stage with only the halves gets `backward` rows
// derived as their sum at the clocks both list (the unsplit backward runs
// them back to back). Profiles are read in exactly one place
// (here) and reused by the CLI, the emulator, the server and Python.
#pragma once

#include <array>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "perseus/status.h"

namespace perseus {

// kBackward is the whole backward; zero-bubble schedules run it as
// kBackwardInput (the input gradient, on the critical path) and
// kBackwardWeight (the weight gradient, deferrable).
enum class Instruction { kForward = 0, kBackward = 1, kBackwardInput = 2, kBackwardWeight = 3 };
inline constexpr int kNumInstructions = 4;
// "forward", "backward", "backward_input", "backward_weight" (these four
// functions live in perseus_common, src/common/instruction.cc).
const char* InstructionName(Instruction ins);
// Short labels for timelines and docs: "F", "B", "Bi", "W".
const char* InstructionSymbol(Instruction ins);
// The inverse of InstructionName, else an error quoting `name`.
Result<Instruction> ParseInstruction(const std::string& name);
// The same without allocating (hooks on the training thread): nullopt for an unknown name.
std::optional<Instruction> InstructionFromName(std::string_view name);

// One measured operating point.
struct FreqPoint {
  int freq_mhz = 0;
  double time_s = 0;
  double energy_j = 0;
};

struct StageProfile {
  // Indexed by Instruction; each sorted by frequency, highest first. Forward
  // and backward are never empty in a parsed profile; the split halves may be.
  std::array<std::vector<FreqPoint>, kNumInstructions> points;
  const std::vector<FreqPoint>& at(Instruction ins) const { return points[static_cast<int>(ins)]; }
  std::vector<FreqPoint>& at(Instruction ins) { return points[static_cast<int>(ins)]; }
};

struct Profile {
  std::vector<StageProfile> stages;
  std::string source;  // the file (or text) it was read from, for messages; empty: built in code
  int num_stages() const { return static_cast<int>(stages.size()); }
  // The point at the highest frequency a stage lists for `ins`.
  const FreqPoint& MaxFreqPoint(int stage, Instruction ins) const { return stages[stage].at(ins).front(); }
};

// Parses profile CSV text. `source` names the input in errors. When
// `expected_stages` > 0, stage indices must lie in [0, expected_stages) and every
// one of them must have forward and backward rows; otherwise the stage count is
// inferred as max index + 1 and every stage below it must be present.
// A user's file must also have plausible times (a lower clock no faster than
// half the highest clock's time, nor slower than twice it scaled by the
// clock ratio: docs/formats.md) and powers (energy / time within
// [kMinPlausibleGpuPowerW, kMaxPlausibleGpuPowerW]: units, not hardware);
// a profile the server measured online is noisy by nature and checked by
// its own warnings instead.
inline constexpr double kMinPlausibleGpuPowerW = 5;
inline constexpr double kMaxPlausibleGpuPowerW = 3000;
enum class ProfileOrigin { kUserFile, kMeasured };
Result<Profile> ParseProfileCsv(const std::string& text, const std::string& source, int expected_stages,
                                ProfileOrigin origin = ProfileOrigin::kUserFile);
Result<Profile> LoadProfileCsv(const std::string& path, int expected_stages);

// Serialises a profile back to the Zeus CSV format (deterministic order).
std::string ProfileToCsv(const Profile& profile);

}  // namespace perseus
