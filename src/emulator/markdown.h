// Small helpers for the Markdown reports: fixed-point numbers, percentages
// and pipe tables. Pure functions; thread-safe.
#pragma once

#include <string>
#include <vector>

namespace perseus::emulator {

// "12.35" for (12.345, 2); "n/a" for non-finite values.
std::string Fixed(double value, int decimals);
// "15.20%" for (0.152, 2).
std::string Percent(double fraction, int decimals = 2);
// "8,192" for 8192.
std::string Thousands(long value);

class MarkdownTable {
 public:
  explicit MarkdownTable(std::vector<std::string> header) : header_(std::move(header)) {}
  void AddRow(std::vector<std::string> row) { rows_.push_back(std::move(row)); }
  std::string Render() const;

 private:
  std::vector<std::string> header_;
  std::vector<std::vector<std::string>> rows_;
};

}  // namespace perseus::emulator
