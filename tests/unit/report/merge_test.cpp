// Tests for shard merging: shards of one run merge into the document the unsharded run wrote, in
// any order; shards of different runs, or a shard given twice, are refused with a clear message.
#include "report/merge.hpp"

#include <gtest/gtest.h>

#include "report/result_document.hpp"
#include "report/writer.hpp"
#include "test_support.hpp"

namespace gpuemu::report {
namespace {

using testing::load_fixture;

// Splits the failing fixture the way `--shard I/2` would: whole ops, and matmul's cases split by
// case index between both shards (its per-dtype statistics differ per shard).
std::pair<nlohmann::json, nlohmann::json> split(const nlohmann::json& whole) {
  nlohmann::json one = whole, two = whole;
  one["ci"]["shard"] = "1/2";
  two["ci"]["shard"] = "2/2";
  one["duration_secs"] = 12.5;
  two["duration_secs"] = 7.0;
  one["ops"] = nlohmann::json::array({whole["ops"][0], whole["ops"][2]});  // gelu, matmul (part)
  two["ops"] = nlohmann::json::array({whole["ops"][1], whole["ops"][2], whole["ops"][3]});
  auto& a = one["ops"][1];
  auto& b = two["ops"][1];
  // matmul float16: cases 0,1 (shape, dtype: failed 2) in shard 1; cases 2,3 (invariant, op_error) in 2.
  // matmul bfloat16: case 4 (missing_output) in shard 1, case 5 (reference_error) in shard 2.
  a["failures"] = nlohmann::json::array(
      {whole["ops"][2]["failures"][0], whole["ops"][2]["failures"][1], whole["ops"][2]["failures"][4]});
  b["failures"] = nlohmann::json::array(
      {whole["ops"][2]["failures"][2], whole["ops"][2]["failures"][3], whole["ops"][2]["failures"][5]});
  a["dtypes"][0].update({{"total", 4},
                         {"passed", 2},
                         {"failed", 2},
                         {"errors", 0},
                         {"max_abs", 0.1},
                         {"max_rel", 0.25},
                         {"max_ulp", 64.0},
                         {"tolerance_used", 0.5}});
  b["dtypes"][0].update({{"total", 4},
                         {"passed", 2},
                         {"failed", 1},
                         {"errors", 1},
                         {"max_abs", 0.5},
                         {"max_rel", 0.125},
                         {"max_ulp", 3.0},
                         {"tolerance_used", 3.5}});
  a["dtypes"][1].update({{"total", 5},
                         {"passed", 4},
                         {"failed", 1},
                         {"errors", 0},
                         {"max_abs", 0.1},
                         {"max_rel", "NaN"},
                         {"max_ulp", 2.0},
                         {"tolerance_used", 0.9}});
  b["dtypes"][1].update({{"total", 3},
                         {"passed", 0},
                         {"failed", 0},
                         {"errors", 1},
                         {"max_abs", 0.0},
                         {"max_rel", 0.1},
                         {"max_ulp", 1.0},
                         {"tolerance_used", 0.1}});
  a.update({{"total", 9}, {"passed", 6}, {"failed", 3}, {"errors", 0}});
  b.update({{"total", 7}, {"passed", 2}, {"failed", 1}, {"errors", 2}});
  // The regression and warning belong to the shard that ran gelu; both saw the baseline.
  two["ci"]["baseline"]["regressions"] = nlohmann::json::array();
  two["passed"] = false;
  one["passed"] = false;
  return {one, two};
}

// An (op, dtype) that regressed in both shards is one regression of the merged run, with the
// numbers of shard 1.
TEST(Merge, ARegressionFoundByTwoShardsIsReportedOnce) {
  auto whole = load_fixture("failing.json");
  auto [one, two] = split(whole);
  ASSERT_FALSE(one["ci"]["baseline"]["regressions"].empty());
  auto regression = one["ci"]["baseline"]["regressions"][0];
  auto later = regression;
  later["reason"] = "seen by shard 2";
  two["ci"]["baseline"]["regressions"] = nlohmann::json::array({later});
  std::vector<ShardDocument> shards{{"shard-2/result.json", two}, {"shard-1/result.json", one}};
  auto merged = merge_results(shards);
  ASSERT_TRUE(merged.has_value()) << merged.error().message;
  const auto& list = (*merged)["ci"]["baseline"]["regressions"];
  EXPECT_EQ(list.size(), whole["ci"]["baseline"]["regressions"].size());
  EXPECT_EQ(list[0], regression);
}

TEST(Merge, ShardsEqualTheUnshardedRun) {
  auto whole = load_fixture("failing.json");
  auto [one, two] = split(whole);
  ASSERT_TRUE(validate_result(one).has_value()) << validate_result(one).error().message;
  ASSERT_TRUE(validate_result(two).has_value()) << validate_result(two).error().message;

  std::vector<ShardDocument> shards{{"shard-2/result.json", two}, {"shard-1/result.json", one}};
  auto merged = merge_results(shards);
  ASSERT_TRUE(merged.has_value()) << merged.error().message;
  // matmul's bfloat16 max_rel was NaN in one shard: NaN is the worse statistic and survives.
  whole["ops"][2]["dtypes"][1]["max_rel"] = "NaN";
  EXPECT_EQ(*merged, whole) << nlohmann::json::diff(whole, *merged).dump(2);

  // Every report rendered from the merge equals the one rendered from the unsharded run.
  for (const auto& row : writers()) {
    EXPECT_EQ(render(*merged, row.format).value(), render(whole, row.format).value()) << row.format;
  }
  auto check = testing::validate_json(merged->dump(), "result-v1.schema.json");
  EXPECT_EQ(check.status, 0) << check.output;
}

TEST(Merge, OrderOfInputsDoesNotMatter) {
  auto [one, two] = split(load_fixture("failing.json"));
  std::vector<ShardDocument> forward{{"a", one}, {"b", two}}, backward{{"b", two}, {"a", one}};
  EXPECT_EQ(merge_results(forward).value().dump(), merge_results(backward).value().dump());
}

// Documents of early producers have no "case": failures then follow shard order (never input
// order), and the merge does not invent the field.
TEST(Merge, FailuresWithoutCaseKeepShardOrder) {
  auto [one, two] = split(load_fixture("failing.json"));
  for (auto* shard : {&one, &two}) {
    for (auto& f : (*shard)["ops"][1]["failures"]) f.erase("case");
  }
  std::vector<ShardDocument> backward{{"b", two}, {"a", one}};
  auto merged = merge_results(backward);
  ASSERT_TRUE(merged.has_value()) << merged.error().message;
  std::vector<std::string> seeds;
  for (const auto& f : (*merged)["ops"][2]["failures"]) {
    EXPECT_FALSE(f.contains("case"));
    seeds.push_back(f["seed"]);
  }
  std::vector<std::string> expected;
  for (const auto* shard : {&one, &two}) {
    for (const auto& f : (*shard)["ops"][1]["failures"]) expected.push_back(f["seed"]);
  }
  EXPECT_EQ(seeds, expected);
}

TEST(Merge, PassedAndPartialCombine) {
  auto passing = load_fixture("passing.json");
  auto other = passing;
  other["ops"] = nlohmann::json::array();
  other["partial"] = true;
  std::vector<ShardDocument> shards{{"a", passing}, {"b", other}};
  auto merged = merge_results(shards).value();
  EXPECT_TRUE(merged["passed"].get<bool>());
  EXPECT_TRUE(merged["partial"].get<bool>());
  other["passed"] = false;
  shards[1].result = other;
  EXPECT_FALSE(merge_results(shards).value()["passed"].get<bool>());
}

TEST(Merge, RefusesShardsOfDifferentRuns) {
  auto [one, two] = split(load_fixture("failing.json"));
  two["seed"] = "7";
  std::vector<ShardDocument> shards{{"out-1/result.json", one}, {"out-2/result.json", two}};
  auto merged = merge_results(shards);
  ASSERT_FALSE(merged.has_value());
  EXPECT_EQ(merged.error().kind, ErrorKind::usage);
  EXPECT_EQ(
      merged.error().message,
      "out-2/result.json: seed is \"7\" but out-1/result.json has \"12345678901234567890\"; merge only the "
      "shards of one run (same seed, config and gpuemu)");
}

TEST(Merge, RefusesAShardGivenTwice) {
  auto [one, two] = split(load_fixture("failing.json"));
  std::vector<ShardDocument> shards{{"x/result.json", one}, {"y/result.json", one}};
  auto merged = merge_results(shards);
  ASSERT_FALSE(merged.has_value());
  EXPECT_EQ(merged.error().message,
            "y/result.json and x/result.json are both shard 1/2; pass each shard's output once");
}

TEST(Merge, RefusesDifferentTolerancesAndInvalidShards) {
  auto [one, two] = split(load_fixture("failing.json"));
  two["ops"][1]["dtypes"][0]["atol"] = 0.5;
  std::vector<ShardDocument> shards{{"a", one}, {"b", two}};
  EXPECT_EQ(
      merge_results(shards).error().message,
      "b: op 'matmul' dtype \"float16\": the shards used different tolerances (atol 0.01 vs 0.5); merge only "
      "the shards of one run");
  shards[1].result = nlohmann::json::object();
  EXPECT_TRUE(merge_results(shards).error().message.starts_with("b: schema_version is missing"));
  EXPECT_FALSE(merge_results({}).has_value());
}

}  // namespace
}  // namespace gpuemu::report
