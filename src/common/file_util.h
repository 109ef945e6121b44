// Whole-file reads and atomic whole-file writes.
//
// WriteFileAtomic writes to "<path>.tmp.<pid>" and renames it over `path`, so a
// reader never sees a half-written output and a failed run leaves nothing
// behind. Every output file of perseus goes through it.
#pragma once

#include <cstddef>
#include <functional>
#include <ostream>
#include <string>

#include "perseus/status.h"

namespace perseus {

// The whole of a regular file of at most `max_bytes`; a FIFO, device or
// directory (which could block or never end) and a larger file are errors
// naming the path.
inline constexpr size_t kMaxReadFileBytes = size_t{256} << 20;
Result<std::string> ReadFile(const std::string& path, size_t max_bytes = kMaxReadFileBytes);
Status WriteFileAtomic(const std::string& path, const std::string& contents);
// The same, with `write` streaming the contents (a large output is never held
// whole in memory); a stream error fails the write and leaves nothing behind.
// Errors name `shown_as` when given (a file that is itself a step towards
// another, such as --out's partial files), else `path`.
using StreamWriter = std::function<void(std::ostream&)>;
Status WriteFileAtomic(const std::string& path, const StreamWriter& write, const std::string& shown_as = "");
// Creates `dir` and its parents if missing.
Status MakeDirs(const std::string& dir);
// Ok when the folder that would hold `path` (its parent, or the working
// directory) exists and this process may create files in it; else an error
// naming the folder. For checks before a run commits to anything.
Status CheckCanCreate(const std::string& path);

}  // namespace perseus
