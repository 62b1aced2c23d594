// The Markdown gpuemu posts on a pull request (docs/ci.md "Pull-request review comments"): line
// comments, the review body, and the hidden first-line markers by which a re-run finds them again.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include "report/findings.hpp"

namespace gpuemu::github {

// First lines of what gpuemu posts. A comment carries its finding's fingerprint
// (report::Finding::fingerprint), so a re-run edits it instead of adding another.
inline constexpr std::string_view kReviewMarker = "<!-- gpuemu:review v1 -->";
inline constexpr std::string_view kFollowUpMarker = "<!-- gpuemu:review-comments v1 -->";
std::string finding_marker(std::string_view fingerprint);  // "<!-- gpuemu:finding v1 FP -->"
// A comment whose finding moved to another line or out of the diff: no run edits it again.
std::string moved_marker(std::string_view fingerprint);  // "<!-- gpuemu:finding-moved v1 FP -->"

// The fingerprint in the finding marker on the first line of `body`, or "" when there is none.
std::string marked_fingerprint(std::string_view body);
// Whether `body` is a comment already marked fixed by fixed_comment_body.
bool is_fixed_comment(std::string_view body);

// A line comment on a finding: the failure's title, the (op, dtype), the worst case's headline,
// its worst element when known and the replay command in a ```sh block. `fingerprint` goes into
// the marker: the finding's own, or with a "-N" suffix when several findings share one.
std::string comment_body(const report::Finding& finding, std::string_view fingerprint);
// The comment of a finding that no longer occurs: says so, keeps what it reported folded away.
std::string fixed_comment_body(std::string_view previous_body, std::string_view commit);
// The comment of a finding now reported elsewhere (`where`: "kernels/a.py:12", or the review body).
std::string moved_comment_body(std::string_view fingerprint, std::string_view where, std::string_view commit);

// What the review body reports.
struct ReviewSummary {
  std::string commit;
  bool partial = false;                          // result.json "partial"
  std::vector<const report::Finding*> on_diff;   // commented on their lines
  std::vector<const report::Finding*> off_diff;  // listed in the body in full
};
// The body of gpuemu's review: a headline, the findings on the diff in one line each, the others
// in full; with no findings, that the problems reported before are fixed. Under GitHub's 65,536
// characters.
std::string review_body(const ReviewSummary& summary);
// The body of a later review that only adds new line comments, pointing at the first one.
std::string follow_up_body(std::size_t new_comments, std::string_view commit, std::string_view review_url);

}  // namespace gpuemu::github
