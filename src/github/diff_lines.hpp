// Which lines of a file's new version a pull request's diff shows, from the unified-diff `patch`
// the REST API gives per file: only those lines (the RIGHT side) can carry a review comment.
#pragma once

#include <string_view>
#include <utility>
#include <vector>

#include "util/error.hpp"

namespace gpuemu::github {

// The new-file lines of a diff that are on its RIGHT side: added ('+') and context (' ') lines.
// Stored as sorted, disjoint, inclusive ranges [first, last], one or more per hunk.
class DiffLines {
 public:
  bool contains(int line) const;
  bool empty() const { return ranges_.empty(); }
  const std::vector<std::pair<int, int>>& ranges() const { return ranges_; }
  // Adds `line`, which must not be lower than any line added before (hunks come in file order).
  void add(int line);

 private:
  std::vector<std::pair<int, int>> ranges_;
};

// Parses the hunks of a unified diff (`@@ -a,b +c,d @@` headers followed by ' ', '+', '-' and
// '\ No newline at end of file' lines). Lines before the first hunk ("diff --git", "---", "+++")
// are skipped, so both GitHub's per-file `patch` and `git diff` output for one file parse. The
// counts in each header must match the lines that follow; errors name `name` and the line.
Expected<DiffLines> parse_patch(std::string_view patch, std::string_view name);

}  // namespace gpuemu::github
