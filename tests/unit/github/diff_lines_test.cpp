// Tests for unified-diff hunk parsing: which new-file lines a pull request's diff shows, on
// patches as GitHub's REST API and `git diff` write them, and whole error messages on broken ones.
#include "github/diff_lines.hpp"

#include <gtest/gtest.h>

namespace gpuemu::github {
namespace {

using Ranges = std::vector<std::pair<int, int>>;

Ranges ranges_of(std::string_view patch) {
  auto lines = parse_patch(patch, "kernels/softmax.py");
  EXPECT_TRUE(lines) << (lines ? "" : lines.error().message);
  return lines ? lines->ranges() : Ranges{};
}

std::string error_of(std::string_view patch) {
  auto lines = parse_patch(patch, "kernels/softmax.py");
  EXPECT_FALSE(lines);
  return lines ? "" : lines.error().message;
}

TEST(DiffLines, ContextAndAddedLinesAreOnTheRightSide) {
  // Lines 10-12 context, 13-14 added, one removed, 15-16 context; a second hunk further down.
  const char* patch =
      "@@ -10,6 +10,7 @@ def softmax(x):\n"
      " a = 1\n"
      " b = 2\n"
      " c = 3\n"
      "+d = 4\n"
      "+e = 5\n"
      "-old = 0\n"
      " f = 6\n"
      " g = 7\n"
      "@@ -40,2 +41,3 @@\n"
      " h\n"
      "+i\n"
      " j";
  EXPECT_EQ(ranges_of(patch), (Ranges{{10, 16}, {41, 43}}));
  auto lines = *parse_patch(patch, "x");
  for (int line : {10, 13, 16, 41, 42, 43}) EXPECT_TRUE(lines.contains(line)) << line;
  for (int line : {0, 9, 17, 40, 44, 1000}) EXPECT_FALSE(lines.contains(line)) << line;
}

TEST(DiffLines, NewFileDeletedFileAndPureRemoval) {
  EXPECT_EQ(ranges_of("@@ -0,0 +1,3 @@\n+a\n+b\n+c"), (Ranges{{1, 3}}));
  EXPECT_EQ(ranges_of("@@ -1,2 +0,0 @@\n-a\n-b"), Ranges{});
  EXPECT_EQ(ranges_of("@@ -5,2 +4,0 @@\n-a\n-b\n@@ -20 +18 @@\n-x\n+y"), (Ranges{{18, 18}}));
  // A one-line file: counts omitted mean 1.
  EXPECT_EQ(ranges_of("@@ -1 +1 @@\n-old\n+new\n\\ No newline at end of file"), (Ranges{{1, 1}}));
}

TEST(DiffLines, GitDiffHeadersAndContentThatLooksLikeHeaders) {
  // `git diff` output for one file; inside the hunk "--- x" is a removed line "-- x" and
  // "+++ y" an added line "++ y", not file headers.
  const char* patch =
      "diff --git a/k.py b/k.py\n"
      "index 83db48f..bf269f4 100644\n"
      "--- a/k.py\n"
      "+++ b/k.py\n"
      "@@ -1,3 +1,3 @@\n"
      " keep\n"
      "--- x\n"
      "+++ y\n"
      " keep\n";
  EXPECT_EQ(ranges_of(patch), (Ranges{{1, 3}}));
}

TEST(DiffLines, EmptyContextLineWithoutItsSpaceAndCrlf) {
  EXPECT_EQ(ranges_of("@@ -3,3 +3,4 @@\n a\n\n+b\n c\n"), (Ranges{{3, 6}}));
  EXPECT_EQ(ranges_of("@@ -1,2 +1,2 @@\r\n a\r\n+b\r\n-c\r\n"), (Ranges{{1, 2}}));
}

TEST(DiffLines, NoHunksMeansNoLines) {
  EXPECT_EQ(ranges_of(""), Ranges{});
  EXPECT_EQ(ranges_of("Binary files a/x.bin and b/x.bin differ\n"), Ranges{});
}

TEST(DiffLines, BrokenPatchesNameTheFileAndLine) {
  const std::string tail =
      "; that is not a unified diff as GitHub's API sends it: check --api-url, or report it to gpuemu with "
      "the "
      "file's patch";
  EXPECT_EQ(error_of("@@ -1,2 +1,2 @@\n a\n"),
            "kernels/softmax.py: line 2 of the patch: the patch ends inside a hunk (1 old and 1 new lines "
            "missing)" +
                tail);
  EXPECT_EQ(error_of("@@ -1,1 +1,1 @@\n a\n b\n"),
            "kernels/softmax.py: line 3 of the patch: more lines than the hunk header counts" + tail);
  EXPECT_EQ(error_of("@@ -1,1 +1,2 @@\n a\n b\n"),
            "kernels/softmax.py: line 3 of the patch: more lines than the hunk header counts" + tail);
  EXPECT_EQ(error_of("@@ -1 +1 @@\n-a\n-b\n+c\n"),
            "kernels/softmax.py: line 3 of the patch: more removed lines than the hunk header counts" + tail);
  EXPECT_EQ(
      error_of("@@ -1,2 +1,2 @@\n a\n*b\n"),
      "kernels/softmax.py: line 3 of the patch: '*b' is not a diff line (' ', '+', '-' or '\\')" + tail);
  EXPECT_EQ(error_of("@@ -1,2 +x,2 @@\n"),
            "kernels/softmax.py: line 1 of the patch: malformed hunk header '@@ -1,2 +x,2 @@'" + tail);
  EXPECT_EQ(
      error_of("@@ -5 +5 @@\n a\n@@ -1 +1 @@\n b\n"),
      "kernels/softmax.py: line 3 of the patch: the hunk overlaps or precedes the one before it" + tail);
}

}  // namespace
}  // namespace gpuemu::github
