// A small CSV reader that remembers where each row came from.
//
// Reads RFC-4180-style CSV (double-quoted fields, "" escapes, CRLF or LF) and
// keeps the 1-based line number of each row so callers can report errors as
// "file.csv:41: column 'energy': ...". Used by every CSV input in perseus
// (profiles, carbon traces, power-limit profiles) so parsing lives in one place.
#pragma once

#include <string>
#include <vector>

#include "perseus/status.h"

namespace perseus {

struct CsvRow {
  int line = 0;  // 1-based line number in the source
  std::vector<std::string> fields;
};

struct CsvTable {
  std::string source;               // file name used in messages
  std::vector<std::string> header;  // trimmed column names
  int header_line = 1;              // 1-based line of the header row
  std::vector<CsvRow> rows;         // data rows, blank lines skipped

  // Index of column `name`, or -1.
  int Column(const std::string& name) const;
  // Index of column `name`, or an error naming the file and the missing column.
  Result<int> RequireColumn(const std::string& name) const;
  // "<source>:<line>: column '<name>': "
  std::string Where(const CsvRow& row, const std::string& column) const;
  // The field parsed as a finite number, or an error that says where.
  Result<double> Number(const CsvRow& row, int column) const;
};

// Parses CSV text. `source` names the input in error messages.
Result<CsvTable> ParseCsv(const std::string& text, const std::string& source);
// Reads and parses a CSV file.
Result<CsvTable> ReadCsvFile(const std::string& path);

}  // namespace perseus
