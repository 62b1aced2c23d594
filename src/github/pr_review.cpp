// Pull-request reviews from result.json (see pr_review.hpp). Reads everything first, plans, then
// writes the fewest requests: a second identical run sends no POST and no PATCH or PUT at all.
#include "github/pr_review.hpp"

#include <fmt/format.h>

#include <set>

#include "github/review_text.hpp"
#include "report/value_text.hpp"
#include "util/text_escape.hpp"

namespace gpuemu::github {
namespace {

// A finding the run reports, with the fingerprint its marker carries and where it goes.
struct Target {
  const report::Finding* finding = nullptr;
  std::string fingerprint;
  bool on_diff = false;
};

bool commentable(const report::Finding& f, const std::map<std::string, DiffLines>& diff) {
  const auto& where = f.location;
  if (!where.known() || where.line <= 0 || where.path.starts_with('/')) return false;
  const auto it = diff.find(where.path);
  return it != diff.end() && it->second.contains(where.line);
}

std::string string_field(const nlohmann::json& object, const char* key) {
  const auto it = object.find(key);
  return it != object.end() && it->is_string() ? it->get<std::string>() : std::string();
}

long long id_field(const nlohmann::json& object) {
  const auto it = object.find("id");
  return it != object.end() && it->is_number_integer() ? it->get<long long>() : 0;
}

}  // namespace

ReviewPlan plan_review(const std::vector<report::Finding>& findings,
                       const std::map<std::string, DiffLines>& diff, const std::vector<PostedComment>& posted,
                       const std::string& commit, bool partial, std::size_t max_line_comments) {
  std::vector<Target> targets;
  std::map<std::string, int> seen;  // two findings with one identity (lint) get "-2", "-3"...
  std::size_t line_comments = 0;
  for (const auto& f : findings) {
    Target t{&f, f.fingerprint(), false};
    if (const int n = ++seen[t.fingerprint]; n > 1) t.fingerprint += fmt::format("-{}", n);
    t.on_diff = line_comments < max_line_comments && commentable(f, diff);
    if (t.on_diff) ++line_comments;
    targets.push_back(std::move(t));
  }
  std::map<std::string, std::vector<const PostedComment*>> by_fingerprint;
  for (const auto& c : posted) {
    if (auto fp = marked_fingerprint(c.body); !fp.empty()) by_fingerprint[fp].push_back(&c);
  }

  ReviewPlan plan;
  ReviewSummary summary{commit, partial, {}, {}};
  std::set<long long> live;  // posted comments that stay the comment of a current finding
  std::map<std::string, const Target*> by_target;
  for (const auto& t : targets) {
    by_target[t.fingerprint] = &t;
    if (!t.on_diff) {
      summary.off_diff.push_back(t.finding);
      continue;
    }
    summary.on_diff.push_back(t.finding);
    const auto& where = t.finding->location;
    std::string body = comment_body(*t.finding, t.fingerprint);
    const PostedComment* existing = nullptr;
    for (const auto* c : by_fingerprint[t.fingerprint]) {
      if (c->path == where.path && c->line == where.line) {
        existing = c;
        break;
      }
    }
    if (!existing) {
      plan.new_comments.push_back(
          {{"path", where.path}, {"line", where.line}, {"side", "RIGHT"}, {"body", std::move(body)}});
      continue;
    }
    live.insert(existing->id);
    if (existing->body == body) {
      ++plan.unchanged;
    } else {
      plan.edits.emplace_back(existing->id, std::move(body));
    }
  }
  // Earlier comments no current finding keeps: fixed, or now reported somewhere else.
  for (const auto& c : posted) {
    const std::string fp = marked_fingerprint(c.body);
    if (fp.empty() || live.contains(c.id)) continue;
    if (const auto it = by_target.find(fp); it != by_target.end()) {
      const auto& f = *it->second->finding;
      const std::string where = it->second->on_diff
                                    ? "at " + util::markdown_code(report::format_location(f.location))
                                    : std::string("in the review body (its line is not in this diff)");
      plan.edits.emplace_back(c.id, moved_comment_body(fp, where, commit));
      ++plan.retired;
    } else if (!is_fixed_comment(c.body)) {
      plan.edits.emplace_back(c.id, fixed_comment_body(c.body, commit));
      ++plan.retired;
    }
  }
  plan.in_body = summary.off_diff.size();
  plan.body = review_body(summary);
  return plan;
}

Expected<ReviewOutcome> publish_review(RestClient& api, const result::ResultDocument& result,
                                       const ReviewOptions& options) {
  const std::string base = fmt::format("/repos/{}/pulls/{}", options.repo, options.pr);
  ReviewOutcome outcome;

  const auto pull = TRY(api.get(base));
  const std::string head =
      pull.contains("head") && pull["head"].is_object() ? string_field(pull["head"], "sha") : "";
  if (head.empty() && options.commit.empty()) {
    return fail(ErrorKind::parse,
                fmt::format("GET {}: the pull request has no head.sha; pass --commit SHA", base));
  }
  outcome.commit = options.commit.empty() ? head : options.commit;

  std::map<std::string, DiffLines> diff;
  for (const auto& file : TRY(api.get_all(base + "/files", "pull request's files"))) {
    const std::string name = file.is_object() ? string_field(file, "filename") : "";
    if (name.empty()) continue;
    // GitHub leaves out `patch` for binary files and diffs too large to show.
    diff[name] = file.contains("patch") && file["patch"].is_string()
                     ? TRY(parse_patch(file["patch"].get_ref<const std::string&>(), name))
                     : DiffLines{};
  }

  std::vector<PostedComment> posted;
  for (const auto& c : TRY(api.get_all(base + "/comments", "pull request's review comments"))) {
    if (!c.is_object() || (c.contains("in_reply_to_id") && !c["in_reply_to_id"].is_null())) continue;
    PostedComment comment{id_field(c), string_field(c, "path"), std::nullopt, string_field(c, "body")};
    if (comment.id == 0 || marked_fingerprint(comment.body).empty()) continue;
    if (c.contains("line") && c["line"].is_number_integer()) comment.line = c["line"].get<int>();
    posted.push_back(std::move(comment));
  }

  std::optional<nlohmann::json> previous;  // the first review gpuemu posted: it carries the summary
  for (const auto& r : TRY(api.get_all(base + "/reviews", "pull request's reviews"))) {
    if (r.is_object() && string_field(r, "body").starts_with(kReviewMarker) && id_field(r) != 0) {
      previous = r;
      break;
    }
  }

  const auto findings = report::collect_findings(result, options.workspace, options.project_root);
  outcome.findings = findings.size();
  const auto plan =
      plan_review(findings, diff, posted, outcome.commit, result.partial, options.max_line_comments);
  outcome.unchanged = plan.unchanged;
  outcome.retired = plan.retired;
  outcome.in_body = plan.in_body;

  for (const auto& [id, body] : plan.edits) {
    TRY(api.send_json("PATCH", fmt::format("/repos/{}/pulls/comments/{}", options.repo, id),
                      {{"body", body}}));
  }
  outcome.updated = plan.edits.size() - plan.retired;

  const bool new_review = !previous && !findings.empty();
  if (!plan.new_comments.empty() || new_review) {
    nlohmann::json payload = {{"commit_id", outcome.commit},
                              {"body", previous ? follow_up_body(plan.new_comments.size(), outcome.commit,
                                                                 string_field(*previous, "html_url"))
                                                : plan.body},
                              {"event", "COMMENT"}};
    if (!plan.new_comments.empty()) payload["comments"] = plan.new_comments;
    const auto created = TRY(api.send_json("POST", base + "/reviews", payload));
    outcome.created = plan.new_comments.size();
    if (previous) {
      outcome.follow_up = true;
    } else {
      outcome.review = "created";
      outcome.review_id = id_field(created);
      outcome.review_url = string_field(created, "html_url");
    }
  }
  if (previous) {
    outcome.review_id = id_field(*previous);
    outcome.review_url = string_field(*previous, "html_url");
    outcome.review = "unchanged";
    if (string_field(*previous, "body") != plan.body) {
      TRY(api.send_json("PUT", fmt::format("{}/reviews/{}", base, outcome.review_id), {{"body", plan.body}}));
      outcome.review = "updated";
    }
  }
  return outcome;
}

}  // namespace gpuemu::github
