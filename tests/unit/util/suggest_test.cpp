// Edit distance and "did you mean" (util/suggest.hpp): the one suggester the CLI, config, daemon
// and reports share.
#include "util/suggest.hpp"

#include <gtest/gtest.h>

namespace gpuemu::util {
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

TEST(DidYouMean, OneThresholdAndWordingForEveryCaller) {
  // The CLI, daemon and report callers pass std::string lists and want the words in parentheses.
  const std::vector<std::string> commands = {"run", "fuzz", "minimize", "init"};
  EXPECT_EQ(did_you_mean_suffix("fuzzz", commands), " (did you mean 'fuzz'?)");
  EXPECT_EQ(did_you_mean_suffix("FUZZ", commands), " (did you mean 'fuzz'?)");  // case-insensitive
  EXPECT_EQ(did_you_mean_suffix("rnu", commands), " (did you mean 'run'?)");    // one swap
  EXPECT_EQ(did_you_mean_suffix("xyz", commands), "");
  EXPECT_EQ(did_you_mean("minimze", commands), "did you mean 'minimize'?");
  // A third of the word's length, at least one edit: two edits on a three-letter word are not a
  // typo of it (the CLI's old suggester allowed two and offered 'fp8' for 'foo').
  const std::vector<std::string> dtypes = {"fp8", "float16"};
  EXPECT_EQ(closest_match("foo", dtypes), std::nullopt);
  EXPECT_EQ(closest_match("fp9", dtypes), "fp8");
}

}  // namespace
}  // namespace gpuemu::util
