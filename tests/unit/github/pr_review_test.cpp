// Tests for planning a pull-request review from the report fixtures: which findings get line
// comments, how earlier comments are kept, edited, moved or marked fixed, the markers, the Markdown
// pieces and the REST client's Link-header parsing. The HTTP side is tested in test_pr_review.py.
#include "github/pr_review.hpp"

#include <gtest/gtest.h>

#include "../report/test_support.hpp"
#include "github/review_text.hpp"
#include "report/writer.hpp"

namespace gpuemu::github {
namespace {

constexpr const char* kCommit = "0123456789abcdef0123456789abcdef01234567";

class PlanTest : public ::testing::Test {
 protected:
  void SetUp() override {
    result_ = testing::decode(testing::load_fixture("failing.json"));
    findings_ = report::collect_findings(result_, "/work/ws");
    DiffLines softmax, matmul;
    for (int line = 10; line <= 14; ++line) softmax.add(line);
    for (int line = 1; line <= 5; ++line) matmul.add(line);
    diff_ = {{"kernels/softmax.py", softmax}, {"kernels/matmul.cu", matmul}};
  }
  const report::Finding& softmax() const {
    for (const auto& f : findings_) {
      if (f.op == "softmax") return f;
    }
    throw std::runtime_error("no softmax finding in the fixture");
  }

  result::ResultDocument result_;
  std::vector<report::Finding> findings_;
  std::map<std::string, DiffLines> diff_;
};

TEST_F(PlanTest, FingerprintsAreSarifs) {
  report::RenderOptions options;
  options.workspace = "/work/ws";
  const auto sarif = nlohmann::json::parse(*report::render(result_, "sarif", options));
  const auto& results = sarif["runs"][0]["results"];
  ASSERT_EQ(results.size(), findings_.size());
  for (std::size_t i = 0; i < findings_.size(); ++i) {
    EXPECT_EQ(results[i]["partialFingerprints"]["gpuemuFinding/v1"], findings_[i].fingerprint()) << i;
  }
}

TEST_F(PlanTest, OnlyFindingsOnDiffLinesGetComments) {
  const auto plan = plan_review(findings_, diff_, {}, kCommit, false);
  ASSERT_EQ(plan.new_comments.size(), 1u);
  const auto& c = plan.new_comments[0];
  EXPECT_EQ(c["path"], "kernels/softmax.py");
  EXPECT_EQ(c["line"], 12);
  EXPECT_EQ(c["side"], "RIGHT");
  const std::string body = c["body"];
  EXPECT_EQ(body.substr(0, body.find('\n')), finding_marker(softmax().fingerprint()));
  EXPECT_NE(body.find("```sh\n" + softmax().replay() + "\n```"), std::string::npos) << body;
  EXPECT_EQ(plan.in_body, findings_.size() - 1);
  EXPECT_TRUE(plan.edits.empty());
  EXPECT_TRUE(plan.body.starts_with(std::string(kReviewMarker) +
                                    "\n## ❌ gpuemu: " + std::to_string(findings_.size()) + " problems"))
      << plan.body;
  // matmul's line 42 is not in its file's hunks; layernorm names no source; gelu's regression has no line.
  EXPECT_NE(plan.body.find("at `kernels/matmul.cu:42`"), std::string::npos);
  EXPECT_NE(plan.body.find("(the op names no `source`)"), std::string::npos);
  EXPECT_NE(plan.body.find("max\\_ulp grew from 1 to 2"), std::string::npos);

  const auto capped = plan_review(findings_, diff_, {}, kCommit, false, 0);
  EXPECT_TRUE(capped.new_comments.empty());
  EXPECT_EQ(capped.in_body, findings_.size());
}

TEST_F(PlanTest, EarlierCommentsAreKeptEditedMovedOrMarkedFixed) {
  const auto first = plan_review(findings_, diff_, {}, kCommit, false);
  const std::string body = first.new_comments[0]["body"];

  // The same comment at the same place: nothing to do.
  auto plan = plan_review(findings_, diff_, {{11, "kernels/softmax.py", 12, body}}, kCommit, false);
  EXPECT_TRUE(plan.new_comments.empty());
  EXPECT_TRUE(plan.edits.empty());
  EXPECT_EQ(plan.unchanged, 1u);

  // Its text changed: one edit to the same comment.
  const std::string stale = finding_marker(softmax().fingerprint()) + "\nold text";
  plan = plan_review(findings_, diff_, {{11, "kernels/softmax.py", 12, stale}}, kCommit, false);
  ASSERT_EQ(plan.edits.size(), 1u);
  EXPECT_EQ(plan.edits[0], (std::pair<long long, std::string>{11, body}));
  EXPECT_EQ(plan.retired, 0u);

  // Outdated (no line) or elsewhere: a new comment, and the old one says where it went.
  plan = plan_review(findings_, diff_, {{11, "kernels/softmax.py", std::nullopt, body}}, kCommit, false);
  ASSERT_EQ(plan.new_comments.size(), 1u);
  ASSERT_EQ(plan.edits.size(), 1u);
  EXPECT_EQ(
      plan.edits[0].second,
      moved_marker(softmax().fingerprint()) + "\nAs of commit " + kCommit +
          ", gpuemu reports this problem at `kernels/softmax.py:12`; this comment is no longer updated.\n");
  EXPECT_EQ(plan.retired, 1u);

  // A finding that is gone: its comment is marked fixed once, keeping what it said.
  const std::string gone = finding_marker("00112233445566778899aabbccddeeff") + "\n❌ it was broken";
  plan = plan_review(findings_, diff_, {{12, "kernels/other.py", 3, gone}}, kCommit, false);
  ASSERT_EQ(plan.edits.size(), 1u);
  const std::string fixed = plan.edits[0].second;
  EXPECT_TRUE(is_fixed_comment(fixed));
  EXPECT_EQ(marked_fingerprint(fixed), "00112233445566778899aabbccddeeff");
  EXPECT_NE(fixed.find("❌ it was broken"), std::string::npos);
  plan = plan_review(findings_, diff_, {{12, "kernels/other.py", 3, fixed}}, kCommit, false);
  EXPECT_TRUE(plan.edits.empty());
}

TEST_F(PlanTest, NoFindingsSaysFixed) {
  const auto plan = plan_review({}, diff_, {}, kCommit, true);
  EXPECT_EQ(plan.body,
            std::string(kReviewMarker) + "\n## ✅ gpuemu: fixed\n\nEvery check passes as of commit " +
                kCommit +
                "; the problems gpuemu reported earlier on this pull request are fixed.\n\n> ⚠️ The run "
                "stopped early (time budget), so not every planned case ran.\n");
}

TEST(ReviewText, MarkersOnTheFirstLineOnly) {
  EXPECT_EQ(marked_fingerprint("<!-- gpuemu:finding v1 abc123 -->\ntext"), "abc123");
  EXPECT_EQ(marked_fingerprint("<!-- gpuemu:finding v1 abc123-2 -->\r\ntext"), "abc123-2");
  EXPECT_EQ(marked_fingerprint("quote:\n<!-- gpuemu:finding v1 abc123 -->"), "");
  EXPECT_EQ(marked_fingerprint("<!-- gpuemu:finding v1 ABC -->"), "");
  EXPECT_EQ(marked_fingerprint("<!-- gpuemu:finding v1  -->"), "");
  EXPECT_EQ(marked_fingerprint("<!-- gpuemu:finding-moved v1 abc -->"), "");
}

TEST(RestClient, NextLinkFollowsRfc8288) {
  EXPECT_EQ(
      next_link("<https://api.github.com/repositories/1/pulls/7/files?per_page=100&page=2>; rel=\"next\", "
                "<https://api.github.com/repositories/1/pulls/7/files?per_page=100&page=3>; rel=\"last\""),
      "https://api.github.com/repositories/1/pulls/7/files?per_page=100&page=2");
  EXPECT_EQ(next_link("<https://x/a?page=1>; rel=\"prev\", <https://x/a?page=1>; rel=\"first\""), "");
  EXPECT_EQ(next_link("<https://x/a?page=4>; rel=next"), "https://x/a?page=4");
  EXPECT_EQ(next_link("<https://x/a?page=4>; title=\"n\"; REL=\"last next\""), "https://x/a?page=4");
  EXPECT_EQ(next_link(""), "");
  EXPECT_EQ(url_origin("HTTPS://Api.GitHub.com/repos/a?x"), "https://api.github.com");
  EXPECT_EQ(url_origin("http://127.0.0.1:8080"), "http://127.0.0.1:8080");
  EXPECT_EQ(url_origin("no-scheme/x"), "");
}

}  // namespace
}  // namespace gpuemu::github
