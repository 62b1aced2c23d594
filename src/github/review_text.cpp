// Markdown for pull-request reviews (see review_text.hpp). Untrusted text (messages, op names) is
// escaped so it cannot add HTML, a marker or Markdown structure; markers sit on the first line only.
#include "github/review_text.hpp"

#include <fmt/format.h>

#include <algorithm>

#include "report/value_text.hpp"
#include "util/text_escape.hpp"

namespace gpuemu::github {
namespace {

// GitHub refuses bodies over 65,536 characters; leave room for the closing note.
constexpr std::size_t kBodyLimit = 60000;
// Findings outside the diff shown in full in the review body; the rest are counted.
constexpr std::size_t kBodyFindings = 20;
// Characters of a message shown; result.json and the job summary have all of it.
constexpr std::size_t kHeadlineLimit = 1000;
constexpr std::string_view kFixedState = "<!-- gpuemu:state fixed -->";

std::string_view first_line_of(std::string_view body) {
  return body.substr(0, body.find('\n'));
}

// At most `limit` bytes of `text`, cut on a UTF-8 character boundary, with "…" when cut.
std::string clip(std::string_view text, std::size_t limit) {
  if (text.size() <= limit) return std::string(text);
  std::size_t end = limit;
  while (end > 0 && (static_cast<unsigned char>(text[end]) & 0xC0) == 0x80) --end;
  return std::string(text.substr(0, end)) + "…";
}

// "❌ **gpuemu: output outside tolerance** in `softmax` (`float16`)"; a heading needs no bold.
std::string title_line(const report::Finding& f, bool bold) {
  const std::string title = "gpuemu: " + util::markdown_inline(f.kind->title);
  const std::string dtype =
      f.dtype.empty() ? "" : " (" + util::markdown_code(f.dtype) + ")";  // empty: the whole op
  return fmt::format("❌ {} in {}{}", bold ? "**" + title + "**" : title, util::markdown_code(f.op), dtype);
}

// The facts of a finding after its title: counts and headline, worst element, replay block.
std::string details(const report::Finding& f) {
  std::string text;
  if (f.worst) {
    text += fmt::format("{} of {} cases failed. Worst case: ", f.failing_cases, f.total_cases);
  }
  text += util::markdown_inline(clip(f.headline(), kHeadlineLimit)) + "\n\n";
  if (f.worst && !f.worst->worst.empty()) {
    const auto& e = f.worst->worst.front();
    text += fmt::format(
        "Worst element: {}: got {}, expected {} (abs error {}, rel error {})\n\n",
        util::markdown_code((e.output.empty() ? "out" : e.output) + report::format_index(e.index)),
        report::format_number(e.actual), report::format_number(e.expected), report::format_number(e.abs_err),
        report::format_number(e.rel_err));
  }
  if (const std::string replay = f.replay(); !replay.empty()) {
    text += (f.violation ? "Re-run the check:\n\n" : "Replay the worst case:\n\n") +
            util::markdown_fenced("sh", replay);
  }
  return text;
}

}  // namespace

std::string finding_marker(std::string_view fingerprint) {
  return fmt::format("<!-- gpuemu:finding v1 {} -->", fingerprint);
}

std::string moved_marker(std::string_view fingerprint) {
  return fmt::format("<!-- gpuemu:finding-moved v1 {} -->", fingerprint);
}

std::string marked_fingerprint(std::string_view body) {
  std::string_view line = first_line_of(body);
  if (line.ends_with('\r')) line.remove_suffix(1);
  constexpr std::string_view prefix = "<!-- gpuemu:finding v1 ";
  constexpr std::string_view suffix = " -->";
  if (!line.starts_with(prefix) || !line.ends_with(suffix) || line.size() <= prefix.size() + suffix.size())
    return "";
  const std::string_view fp = line.substr(prefix.size(), line.size() - prefix.size() - suffix.size());
  const bool hex = std::all_of(fp.begin(), fp.end(), [](char c) {
    return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || c == '-';
  });
  return hex ? std::string(fp) : "";
}

bool is_fixed_comment(std::string_view body) {
  const std::size_t newline = body.find('\n');
  if (newline == std::string_view::npos) return false;
  return first_line_of(body.substr(newline + 1)) == kFixedState;
}

std::string comment_body(const report::Finding& f, std::string_view fingerprint) {
  return finding_marker(fingerprint) + "\n" + title_line(f, true) + "\n\n" + details(f);
}

std::string fixed_comment_body(std::string_view previous_body, std::string_view commit) {
  const std::size_t newline = previous_body.find('\n');
  const std::string_view marker = first_line_of(previous_body);
  const std::string_view reported =
      newline == std::string_view::npos ? std::string_view() : previous_body.substr(newline + 1);
  return fmt::format(
      "{}\n{}\n✅ **Fixed** as of commit {}: gpuemu no longer finds this problem.\n\n<details><summary>What "
      "was reported</summary>\n\n{}\n</details>\n",
      marker, kFixedState, commit, reported);
}

std::string moved_comment_body(std::string_view fingerprint, std::string_view where,
                               std::string_view commit) {
  return fmt::format(
      "{}\nAs of commit {}, gpuemu reports this problem {}; this comment is no longer updated.\n",
      moved_marker(fingerprint), commit, where);
}

std::string review_body(const ReviewSummary& s) {
  std::string body(kReviewMarker);
  body += "\n";
  const std::size_t total = s.on_diff.size() + s.off_diff.size();
  if (total == 0) {
    body += fmt::format(
        "## ✅ gpuemu: fixed\n\nEvery check passes as of commit {}; the problems gpuemu reported earlier on "
        "this pull request are fixed.\n",
        s.commit);
    if (s.partial) body += "\n> ⚠️ The run stopped early (time budget), so not every planned case ran.\n";
    return body;
  }
  body += fmt::format("## ❌ gpuemu: {} problem{}\n\n", total, total == 1 ? "" : "s");
  if (s.partial) body += "> ⚠️ The run stopped early (time budget), so not every planned case ran.\n\n";
  if (!s.on_diff.empty()) {
    body += fmt::format("Commented on the lines of this diff ({}):\n\n", s.on_diff.size());
    for (const auto* f : s.on_diff) {
      body += fmt::format("- {} ({}): {} at {}\n", util::markdown_code(f->op), util::markdown_code(f->dtype),
                          util::markdown_inline(f->kind->title),
                          util::markdown_code(report::format_location(f->location)));
    }
    body += "\n";
  }
  if (!s.off_diff.empty()) {
    body += fmt::format("Outside the lines of this diff ({}):\n\n", s.off_diff.size());
    std::size_t shown = 0;
    for (const auto* f : s.off_diff) {
      const std::string where = f->location.known()
                                    ? "at " + util::markdown_code(report::format_location(f->location))
                                    : std::string("(the op names no `source`)");
      std::string block = "### " + title_line(*f, false) + "\n\n" + where + "\n\n" + details(*f) + "\n";
      if (shown == kBodyFindings || body.size() + block.size() > kBodyLimit) break;
      body += block;
      ++shown;
    }
    if (shown < s.off_diff.size()) {
      body +=
          fmt::format("… and {} more: see the job summary or result.json.\n\n", s.off_diff.size() - shown);
    }
  }
  body += fmt::format("<sub>gpuemu result for commit {}; every run updates this review.</sub>\n", s.commit);
  return body;
}

std::string follow_up_body(std::size_t new_comments, std::string_view commit, std::string_view review_url) {
  const std::string first = review_url.empty() ? std::string("the first gpuemu review")
                                               : fmt::format("[the first gpuemu review]({})", review_url);
  return fmt::format(
      "{}\ngpuemu found {} new problem{} on lines of this diff as of commit {}; {} keeps the "
      "summary up to date.\n",
      kFollowUpMarker, new_comments, new_comments == 1 ? "" : "s", commit, first);
}

}  // namespace gpuemu::github
