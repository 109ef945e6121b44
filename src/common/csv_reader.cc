// CSV parsing with line tracking.
#include "common/csv_reader.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>

#include "common/file_util.h"
#include "common/strings.h"

namespace perseus {
namespace {

// Splits one logical record starting at `pos`; advances `pos` and `line`.
Status SplitRecord(const std::string& text, size_t& pos, int& line, const std::string& source,
                   std::vector<std::string>& out) {
  out.clear();
  std::string field;
  bool quoted = false;
  int start_line = line;
  while (pos < text.size()) {
    char c = text[pos];
    if (quoted) {
      if (c == '"' && pos + 1 < text.size() && text[pos + 1] == '"') { field += '"'; pos += 2; continue; }
      if (c == '"') { quoted = false; ++pos; continue; }
      if (c == '\n') ++line;
      field += c;
      ++pos;
      continue;
    }
    if (c == '"' && Trim(field).empty()) { quoted = true; field.clear(); ++pos; continue; }
    if (c == ',') { out.push_back(Trim(field)); field.clear(); ++pos; continue; }
    // LF, CRLF (the CR is trimmed) or a lone CR (old Mac files) ends a record.
    if (c == '\n' || (c == '\r' && (pos + 1 == text.size() || text[pos + 1] != '\n'))) {
      ++pos;
      ++line;
      out.push_back(Trim(field));
      return Status::Ok();
    }
    field += c;
    ++pos;
  }
  if (quoted) {
    return Status::InvalidArgument(source + ":" + std::to_string(start_line) + ": unterminated quoted field");
  }
  out.push_back(Trim(field));
  return Status::Ok();
}

bool AllEmpty(const std::vector<std::string>& fields) {
  for (const auto& f : fields) if (!f.empty()) return false;
  return true;
}

// Every column named, and no name twice (which one would a reader take?).
Status CheckHeader(const CsvTable& table) {
  const std::string at = table.source + ":" + std::to_string(table.header_line) + ": ";
  for (size_t i = 0; i < table.header.size(); ++i) {
    if (table.header[i].empty()) {
      return Status::InvalidArgument(at + "column " + std::to_string(i + 1) + " of the header has no name");
    }
    for (size_t j = 0; j < i; ++j) {
      if (table.header[j] == table.header[i]) {
        return Status::InvalidArgument(at + "column '" + table.header[i] + "' appears twice in the header (columns " +
                                       std::to_string(j + 1) + " and " + std::to_string(i + 1) + ")");
      }
    }
  }
  return Status::Ok();
}

}  // namespace

int CsvTable::Column(const std::string& name) const {
  for (size_t i = 0; i < header.size(); ++i) if (header[i] == name) return static_cast<int>(i);
  return -1;
}

Result<int> CsvTable::RequireColumn(const std::string& name) const {
  int c = Column(name);
  if (c < 0) return Status::InvalidArgument(source + ":" + std::to_string(header_line) + ": missing column '" + name + "'");
  return c;
}

std::string CsvTable::Where(const CsvRow& row, const std::string& column) const {
  return source + ":" + std::to_string(row.line) + ": column '" + column + "': ";
}

Result<double> CsvTable::Number(const CsvRow& row, int column) const {
  const std::string& name = header[column];
  if (column >= static_cast<int>(row.fields.size()) || row.fields[column].empty()) {
    return Status::InvalidArgument(Where(row, name) + "missing value");
  }
  const std::string& s = row.fields[column];
  std::optional<double> v = ParseDecimal(s);
  if (!v) return Status::InvalidArgument(Where(row, name) + "expected a number, got '" + s + "'");
  return *v;
}

Result<CsvTable> ParseCsv(const std::string& text, const std::string& source) {
  CsvTable table;
  table.source = source;
  size_t pos = 0;
  int line = 1;
  std::vector<std::string> fields;
  if (text.size() >= 3 && text.compare(0, 3, "\xEF\xBB\xBF") == 0) pos = 3;  // UTF-8 BOM
  // C string functions would read a field only up to a NUL byte, silently.
  if (const size_t nul = text.find('\0'); nul != std::string::npos) {
    const int nul_line = 1 + static_cast<int>(std::count(text.begin(), text.begin() + static_cast<ptrdiff_t>(nul), '\n'));
    return Status::InvalidArgument(source + ":" + std::to_string(nul_line) +
                                   ": a NUL byte; expected a text file (is it binary or UTF-16?)");
  }
  while (pos < text.size() && table.header.empty()) {
    int at = line;
    PERSEUS_RETURN_IF_ERROR(SplitRecord(text, pos, line, source, fields));
    if (AllEmpty(fields)) continue;
    table.header = fields;
    table.header_line = at;
  }
  if (table.header.empty()) return Status::InvalidArgument(source + ": empty file, expected a header row");
  // A trailing comma after the last name is harmless.
  while (table.header.size() > 1 && table.header.back().empty()) table.header.pop_back();
  PERSEUS_RETURN_IF_ERROR(CheckHeader(table));
  while (pos < text.size()) {
    int at = line;
    PERSEUS_RETURN_IF_ERROR(SplitRecord(text, pos, line, source, fields));
    if (AllEmpty(fields)) continue;
    // Empty cells past the header's columns (a trailing comma) are harmless;
    // anything else in them (a thousands separator, a shifted row) is not.
    while (fields.size() > table.header.size() && fields.back().empty()) fields.pop_back();
    if (fields.size() != table.header.size()) {
      return Status::InvalidArgument(source + ":" + std::to_string(at) + ": expected " +
                                     std::to_string(table.header.size()) + " fields (as the header), got " +
                                     std::to_string(fields.size()));
    }
    table.rows.push_back(CsvRow{at, fields});
  }
  return table;
}

Result<CsvTable> ReadCsvFile(const std::string& path) {
  Result<std::string> text = ReadFile(path);
  if (!text.ok()) return text.status();
  return ParseCsv(*text, path);
}

}  // namespace perseus
