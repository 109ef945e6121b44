// Whole-file reads and atomic whole-file writes.
//
// WriteFileAtomic writes to "<path>.tmp.<pid>" and renames it over `path`, so a
// reader never sees a half-written output and a failed run leaves nothing
// behind. Every output file of perseus goes through it.
#pragma once

#include <string>

#include "perseus/status.h"

namespace perseus {

Result<std::string> ReadFile(const std::string& path);
Status WriteFileAtomic(const std::string& path, const std::string& contents);
// Creates `dir` and its parents if missing.
Status MakeDirs(const std::string& dir);

}  // namespace perseus
