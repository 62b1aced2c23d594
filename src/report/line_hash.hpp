// The fingerprint GitHub code scanning matches alerts by, partialFingerprints.primaryLocationLineHash:
// the rolling hash upload-sarif computes per source line (github/codeql-action, src/fingerprints.ts).
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <string_view>

namespace gpuemu::report {

// "<hex>:<n>" for 1-based `line` of `text`, as upload-sarif computes it: a rolling hash over the
// next 100 characters from the line's start, spaces and tabs skipped, line endings made "\n"; n
// counts earlier lines with the same hash. Empty when `text` has no such line.
std::string primary_location_line_hash(std::string_view text, int line);

// What SARIF says about a source line: its region's columns (1-based, in Unicode code points:
// the line's first non-blank character to one past its last) and its line hash.
struct SourceLineFacts {
  int start_column = 0;
  int end_column = 0;
  std::string line_hash;
};
// nullopt when the file cannot be read or has no such line, or the line is blank.
std::optional<SourceLineFacts> source_line_facts(const std::filesystem::path& file, int line);

}  // namespace gpuemu::report
