// Tests for the Markdown summary: the table, the worst failures with replay commands, escaping of
// untrusted text, regressions, and the hard size limit with its truncation note.
#include <gtest/gtest.h>

#include "report/writer.hpp"
#include "test_support.hpp"

namespace gpuemu::report {
namespace {

using testing::contains;
using testing::load_fixture;

std::string markdown(const nlohmann::json& result, std::size_t limit = kSummaryLimit) {
  auto text = render(result, "markdown", RenderOptions{.workspace = "/work/ws", .markdown_limit = limit});
  EXPECT_TRUE(text.has_value()) << text.error().message;
  return text.value_or("");
}

TEST(Markdown, PassingRun) {
  std::string md = markdown(load_fixture("passing.json"));
  EXPECT_TRUE(
      md.starts_with("## ✅ gpuemu: all 3 checks passed\n\nProject `demo` · `gpuemu test` · seed `42` · "
                     "config `0123abcd` · 0.75 s · gpuemu 0.1.0\n\n"))
      << md;
  EXPECT_TRUE(contains(md, "| softmax | float16 | ✅ pass | 10 | 0 | 0 | 0.004 | 0.008 | 2 | 0.4 |\n")) << md;
  EXPECT_FALSE(contains(md, "Failures"));
  EXPECT_FALSE(contains(md, "Truncated"));
}

TEST(Markdown, FailingRunTableAndWorstFailures) {
  std::string md = markdown(load_fixture("failing.json"));
  EXPECT_TRUE(md.starts_with("## ❌ gpuemu: 4 of 6 checks failed\n\n")) << md;
  EXPECT_TRUE(
      contains(md, "| softmax | float16 | ❌ fail | 10 | 3 | 0 | Infinity | NaN | 4096 | Infinity |\n"))
      << md;
  EXPECT_TRUE(contains(md, "| softmax | float32 | ✅ pass | 10 | 0 | 0 | 1e-07 | 2e-06 | 1 | 0.21 |\n")) << md;
  // Worst first, each with where, which seed, the worst elements and the replay command.
  auto layernorm = md.find("#### ❌ layernorm\\[float32\\]: unexpected NaN/Inf");
  auto softmax = md.find("#### ❌ softmax\\[float16\\]: NaN/Inf differ from reference");
  auto matmul = md.find("#### ❌ matmul\\[float16\\]: wrong output shape");
  ASSERT_NE(layernorm, std::string::npos) << md;
  EXPECT_LT(layernorm, softmax);
  EXPECT_LT(softmax, matmul);
  EXPECT_TRUE(
      contains(md,
               "`kernels/softmax.py:12` · 3 of 10 cases failed · seed `18446744073709551615` · layout "
               "contiguous · distribution boundary · shapes `x=[4, 65]`"))
      << md;
  EXPECT_TRUE(contains(md, "| out | `[1, 0]` | NaN | 0.015 | NaN | NaN |\n")) << md;
  EXPECT_TRUE(contains(md, "```sh\ngpuemu reproduce 18446744073709551615 --op softmax\n```\n"));
  EXPECT_TRUE(contains(md, "`kernels/matmul.cu:42`"));  // repo-relative
  // The group's other cases are listed with their replay commands.
  EXPECT_TRUE(contains(
      md, "Other failing cases:\n\n- seed `12` (reference\\_error): `gpuemu reproduce 12 --op matmul`\n"))
      << md;
}

TEST(Markdown, RegressionsAndWarnings) {
  std::string md = markdown(load_fixture("failing.json"));
  EXPECT_TRUE(contains(
      md, "### Regressions against the baseline `main@abc123`\n\n| Op | Dtype | Reason | Before | After |"));
  EXPECT_TRUE(contains(
      md, "| gelu | float32 | max\\_ulp grew from 1 to 2 (x2.0) | max\\_ulp 1.0 | max\\_ulp 2.0 |\n"))
      << md;
  EXPECT_TRUE(contains(md, "- ⚠️ op 'rmsnorm' is new: no baseline to compare with\n"));
}

TEST(Markdown, UntrustedTextCannotInjectMarkupOrBreakTables) {
  auto result = load_fixture("failing.json");
  auto& failure = result["ops"][3]["failures"][1];  // softmax's worst case
  failure["message"] = "<img src=x onerror=alert(1)> | cell ** bold ** [x](javascript:1)\nnext line";
  failure["stderr"] = "```\n## not a heading\n````";
  std::string md = markdown(result);
  EXPECT_FALSE(contains(md, "<img"));
  EXPECT_TRUE(
      contains(md,
               "> &lt;img src=x onerror=alert(1)&gt; \\| cell \\*\\* bold \\*\\* \\[x\\](javascript:1) "
               "next line\n"))
      << md;
  // The fence grows past the longest backtick run inside.
  EXPECT_TRUE(contains(md, "`````text\n```\n## not a heading\n````\n`````\n")) << md;
  EXPECT_TRUE(contains(md, "Project `demo-kernels <&>`"));  // code spans show text literally
}

TEST(Markdown, StaysUnderTheLimitWithANote) {
  auto result = load_fixture("failing.json");
  auto& ops = result["ops"];
  auto model = ops[3];
  // 60 failing ops with 30 kB messages: far beyond 1 MiB if rendered in full.
  for (int i = 0; i < 60; ++i) {
    auto op = model;
    op["op"] = "op" + std::to_string(i);
    for (auto& f : op["failures"]) {
      f["op"] = op["op"];
      f["message"] = std::string(30000, 'x') + " ✓";
    }
    ops.push_back(op);
  }
  std::string md = markdown(result);
  EXPECT_LT(md.size(), kSummaryLimit);
  EXPECT_GT(md.size(), kSummaryLimit - 65536);  // blocks are about 30 kB
  EXPECT_TRUE(contains(md, "\n> **Truncated:** ")) << md.substr(md.size() - 400);
  EXPECT_TRUE(md.ends_with("the full results are in result.json, junit.xml and gpuemu.sarif.\n"));

  std::string small = markdown(load_fixture("failing.json"), 2000);
  EXPECT_LT(small.size(), 2000u);
  EXPECT_TRUE(contains(small, "**Truncated:**"));
  EXPECT_TRUE(small.starts_with("## ❌ gpuemu: 4 of 6 checks failed"));
}

TEST(Markdown, LongStderrKeepsItsTail) {
  auto result = load_fixture("failing.json");
  // 4096 bytes before the end falls inside "é": the cut moves to the next character boundary.
  result["ops"][2]["failures"][4]["stderr"] =
      std::string(10000, 'a') + "é" + std::string(4086, 'b') + "\nTHE END\n";
  std::string md = markdown(result);
  EXPECT_TRUE(contains(md, "[... 10002 bytes cut ...]\n")) << md;
  EXPECT_TRUE(contains(md, "THE END"));
}

}  // namespace
}  // namespace gpuemu::report
