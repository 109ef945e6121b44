// Helpers every subcommand shares: reporting an error the one way the CLI
// does ("perseus: error: ..." on stderr and a non-zero exit) and writing a
// set of output files so that a failure leaves none of them behind.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "common/file_util.h"
#include "perseus/status.h"

namespace perseus::cli {

// Prints "perseus: error: <message>" to stderr and returns exit code 1.
int ReportError(const Status& status);

// Writes every (file name, contents) pair into `dir` (created if missing).
// Each file is written to a temporary name first; only when all are written
// are they renamed into place, so on error nothing new appears in `dir`.
// A file's contents are streamed (OutputFile) or given whole (the pair form).
struct OutputFile {
  std::string name;
  StreamWriter write;
};
// An output whose contents are already in memory.
OutputFile TextOutput(std::string name, std::string contents);
// Ok when --out DIR can be an output folder: not empty, not a dangling
// link or a file (a trailing '/' changes nothing), and, when missing, under a
// folder. Called before the work, so a bad --out fails at once, and again by
// WriteOutputs.
Status CheckOutDir(const std::string& dir);
Status WriteOutputs(const std::string& dir, const std::vector<OutputFile>& files);
Status WriteOutputs(const std::string& dir, const std::vector<std::pair<std::string, std::string>>& files);

// The server's bearer token: the contents of `token_file` (trailing
// whitespace dropped; empty, or a control character left inside, is an error
// naming `flag` and the file) or, without one, $PERSEUS_TOKEN; "" when
// neither is set.
Result<std::string> ReadToken(const std::string& token_file, const std::string& flag = "--token-file");

}  // namespace perseus::cli
