// report.md of an emulation: the job, the policies side by side, the ideal
// bound, the straggler sweep, the plots and the definitions behind every
// number. Pure function; thread-safe.
#pragma once

#include <string>

#include "perseus/emulator.h"

namespace perseus::emulator {

std::string EmulationMarkdown(const EmulationResult& r);

// The definitions section, shared with the paper reproduction report.
std::string DefinitionsMarkdown();

}  // namespace perseus::emulator
