// Edit distance and "did you mean" for config names, and the caret formatting of diagnostics.
#include "config/suggest.hpp"

#include <gtest/gtest.h>

#include "config/diagnostic.hpp"

namespace gpuemu::config {
namespace {

TEST(EditDistance, CountsInsertsDeletesSubstitutionsAndSwaps) {
  EXPECT_EQ(edit_distance("", ""), 0u);
  EXPECT_EQ(edit_distance("abc", ""), 3u);
  EXPECT_EQ(edit_distance("float16", "float16"), 0u);
  EXPECT_EQ(edit_distance("flaot16", "float16"), 1u);  // one swap
  EXPECT_EQ(edit_distance("float61", "float16"), 1u);
  EXPECT_EQ(edit_distance("Float16", "float16"), 0u);  // case-insensitive
  EXPECT_EQ(edit_distance("float8", "float16"), 2u);
  EXPECT_EQ(edit_distance("kitten", "sitting"), 3u);
}

TEST(ClosestMatch, SuggestsOnlyCloseNames) {
  const std::vector<std::string_view> names = {"float16", "bfloat16", "float32", "float64"};
  EXPECT_EQ(closest_match("flaot16", names), "float16");
  EXPECT_EQ(closest_match("bfloat61", names), "bfloat16");
  EXPECT_EQ(closest_match("float3", names), "float32");  // tie with float16? no: distance 1 vs 2
  EXPECT_EQ(closest_match("int7", names), std::nullopt);
  EXPECT_EQ(did_you_mean("xyz", names), "");
  EXPECT_EQ(did_you_mean("float23", names), "did you mean 'float32'?");
}

TEST(QuotedList, JoinsWithOr) {
  const std::vector<std::string_view> one = {"a"};
  const std::vector<std::string_view> three = {"a", "b", "c"};
  EXPECT_EQ(quoted_list(one), "'a'");
  EXPECT_EQ(quoted_list(three), "'a', 'b' or 'c'");
}

TEST(FormatDiagnostic, CaretFollowsTabsAndUtf8) {
  EXPECT_EQ(format_diagnostic("f.toml", 2, 3, "\tx = 1", "bad", ""), "f.toml:2:3: error: bad\n\tx = 1\n\t ^");
  // "é" is two bytes but one column.
  EXPECT_EQ(format_diagnostic("f.toml", 1, 7, "n = \"é\"x", "here", "fix it"),
            "f.toml:1:7: error: here\nn = \"é\"x\n      ^\nhint: fix it");
  EXPECT_EQ(format_diagnostic("f.toml", 0, 0, "", "no position", "h"), "f.toml: error: no position\nhint: h");
}

}  // namespace
}  // namespace gpuemu::config
