// Publishing a result as one pull-request review (docs/ci.md "Pull-request review comments"): a
// comment on each finding whose source line is in the PR's diff, the rest in the review body, and
// re-runs that edit what an earlier run posted instead of adding to it.
#pragma once

#include <cstddef>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "github/diff_lines.hpp"
#include "github/rest_client.hpp"
#include "report/findings.hpp"
#include "util/error.hpp"

namespace gpuemu::github {

// GitHub shows long reviews poorly and rate-limits notifications: findings beyond this many on
// diff lines go into the review body instead.
inline constexpr std::size_t kMaxLineComments = 50;

struct ReviewOptions {
  std::string repo;          // "owner/name"
  long long pr = 0;          // the pull request's number
  std::string commit;        // empty: the pull request's head sha
  std::string workspace;     // the checkout root: finding paths are relative to it
  std::string project_root;  // gpuemu.toml's folder: result.json's relative paths are relative to it
  std::size_t max_line_comments = kMaxLineComments;
};

// A review comment an earlier run posted (it carries a finding marker).
struct PostedComment {
  long long id = 0;
  std::string path;
  std::optional<int> line;  // null when GitHub marks the comment outdated
  std::string body;
};

// What one run changes on the pull request, computed before any request that writes.
struct ReviewPlan {
  std::vector<nlohmann::json> new_comments;              // {path, line, side: "RIGHT", body}
  std::vector<std::pair<long long, std::string>> edits;  // comment id -> new body
  std::size_t unchanged = 0;                             // comments already saying the right thing
  std::size_t retired = 0;                               // edits that mark a comment fixed or moved
  std::size_t in_body = 0;                               // findings listed in the review body
  std::string body;                                      // the review body (review_text.hpp)
};

// `findings` worst first; `diff` maps each changed file to its RIGHT-side lines; `posted` holds
// the comments with gpuemu markers, oldest first. Pure: no requests.
ReviewPlan plan_review(const std::vector<report::Finding>& findings,
                       const std::map<std::string, DiffLines>& diff, const std::vector<PostedComment>& posted,
                       const std::string& commit, bool partial,
                       std::size_t max_line_comments = kMaxLineComments);

// What publish_review did.
struct ReviewOutcome {
  std::string commit;
  std::size_t findings = 0;
  std::size_t created = 0, updated = 0, unchanged = 0, retired = 0, in_body = 0;
  // The summary review: "created", "updated", "unchanged" or "none" (nothing failed, none before).
  std::string review = "none";
  long long review_id = 0;
  std::string review_url;
  bool follow_up = false;  // a second review carried the new line comments
};

// Reads the pull request, its files, gpuemu's earlier comments and reviews, then writes: PATCH
// for comments whose text changed, one POST of a COMMENT review for new line comments, PUT for
// the summary review's body.
Expected<ReviewOutcome> publish_review(RestClient& api, const result::ResultDocument& result,
                                       const ReviewOptions& options);

}  // namespace gpuemu::github
