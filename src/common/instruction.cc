// Instruction names: the one place they are spelled (profiles, plans.json,
// the server's and the rank client's plans, the Python module). In common so
// that the rank client, which does not link the optimizer, parses them too.
#include "perseus/profile.h"

namespace perseus {
namespace {
constexpr const char* kInstructionNames[kNumInstructions] = {"forward", "backward", "backward_input",
                                                             "backward_weight"};
constexpr const char* kInstructionSymbols[kNumInstructions] = {"F", "B", "Bi", "W"};
}  // namespace

const char* InstructionName(Instruction ins) { return kInstructionNames[static_cast<int>(ins)]; }

const char* InstructionSymbol(Instruction ins) { return kInstructionSymbols[static_cast<int>(ins)]; }

std::optional<Instruction> InstructionFromName(std::string_view name) {
  for (int i = 0; i < kNumInstructions; ++i) {
    if (name == kInstructionNames[i]) return static_cast<Instruction>(i);
  }
  return std::nullopt;
}

Result<Instruction> ParseInstruction(const std::string& name) {
  if (std::optional<Instruction> ins = InstructionFromName(name)) return *ins;
  return Status::InvalidArgument("expected 'forward', 'backward', 'backward_input' or 'backward_weight', got '" +
                                 name + "'");
}

}  // namespace perseus
