// Unified-diff hunk parsing (see diff_lines.hpp): walks each hunk with the counts from its header,
// so a '-' or '+' line that looks like a file header inside a hunk is still read as content.
#include "github/diff_lines.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <optional>

namespace gpuemu::github {
namespace {

struct HunkHeader {
  int old_start = 0, old_count = 1;
  int new_start = 0, new_count = 1;
};

// Reads "N" or "N,M" at the front of `text`; the count defaults to 1 as in diff(1).
bool read_range(std::string_view& text, int& start, int& count) {
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), start);
  if (ec != std::errc() || start < 0) return false;
  text.remove_prefix(static_cast<std::size_t>(end - text.data()));
  count = 1;
  if (text.starts_with(',')) {
    text.remove_prefix(1);
    auto [end2, ec2] = std::from_chars(text.data(), text.data() + text.size(), count);
    if (ec2 != std::errc() || count < 0) return false;
    text.remove_prefix(static_cast<std::size_t>(end2 - text.data()));
  }
  return true;
}

// "@@ -12,7 +12,8 @@ optional section heading".
std::optional<HunkHeader> parse_header(std::string_view line) {
  HunkHeader h;
  if (!line.starts_with("@@ -")) return std::nullopt;
  line.remove_prefix(4);
  if (!read_range(line, h.old_start, h.old_count) || !line.starts_with(" +")) return std::nullopt;
  line.remove_prefix(2);
  if (!read_range(line, h.new_start, h.new_count) || !line.starts_with(" @@")) return std::nullopt;
  return h;
}

}  // namespace

bool DiffLines::contains(int line) const {
  auto it = std::upper_bound(ranges_.begin(), ranges_.end(), line,
                             [](int value, const std::pair<int, int>& r) { return value < r.first; });
  return it != ranges_.begin() && line <= std::prev(it)->second;
}

void DiffLines::add(int line) {
  if (!ranges_.empty() && line <= ranges_.back().second + 1) {
    ranges_.back().second = std::max(ranges_.back().second, line);
  } else {
    ranges_.emplace_back(line, line);
  }
}

Expected<DiffLines> parse_patch(std::string_view patch, std::string_view name) {
  DiffLines lines;
  int old_left = 0, new_left = 0;  // lines still expected in the current hunk
  int next_new = 0;                // the new-file number of the next context or added line
  int last_new = 0;                // the highest new-file line so far: hunks must not overlap
  bool seen_hunk = false;
  int number = 0;  // of the patch line, for messages
  auto problem = [&](std::string_view what) {
    return fail(ErrorKind::parse,
                fmt::format("{}: line {} of the patch: {}; that is not a unified diff as GitHub's API sends "
                            "it: check --api-url, or report it to gpuemu with the file's patch",
                            name, number, what));
  };
  std::size_t pos = 0;
  while (pos < patch.size()) {
    std::size_t end = patch.find('\n', pos);
    if (end == std::string_view::npos) end = patch.size();
    const std::string_view line = patch.substr(pos, end - pos);
    pos = end + 1;
    ++number;
    if (old_left > 0 || new_left > 0) {
      const char mark = line.empty() ? ' ' : line.front();  // an empty context line may lose its space
      if (mark == '\\') continue;                           // "\ No newline at end of file"
      if (mark == ' ' || mark == '+') {
        if (new_left == 0 || (mark == ' ' && old_left == 0))
          return problem("more lines than the hunk header counts");
        lines.add(next_new);
        last_new = next_new++;
        --new_left;
        if (mark == ' ') --old_left;
      } else if (mark == '-') {
        if (old_left == 0) return problem("more removed lines than the hunk header counts");
        --old_left;
      } else {
        return problem(fmt::format("'{}' is not a diff line (' ', '+', '-' or '\\')", line.substr(0, 40)));
      }
      continue;
    }
    if (line.starts_with("@@")) {
      const auto header = parse_header(line);
      if (!header) return problem(fmt::format("malformed hunk header '{}'", line.substr(0, 80)));
      // "+0,0" (a deleted file) and "+N,0" (only removals) show no new lines.
      if (header->new_count > 0 && header->new_start <= last_new)
        return problem("the hunk overlaps or precedes the one before it");
      old_left = header->old_count;
      new_left = header->new_count;
      next_new = header->new_start;
      seen_hunk = true;
      continue;
    }
    // Before the first hunk: "diff --git", "index", "---", "+++" and the like. After one, only
    // blank lines and "\ No newline at end of file" may follow a complete hunk.
    if (seen_hunk && !line.empty() && !line.starts_with('\\'))
      return problem("more lines than the hunk header counts");
  }
  if (old_left > 0 || new_left > 0) {
    return problem(
        fmt::format("the patch ends inside a hunk ({} old and {} new lines missing)", old_left, new_left));
  }
  return lines;
}

}  // namespace gpuemu::github
