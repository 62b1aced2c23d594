// "What ran" and "where the time went" in the text summary, the Markdown job summary and merged
// shards: an interpreter run says so in words, and the time splits into op, reference and gpuemu.
#include <gtest/gtest.h>

#include "report/merge.hpp"
#include "report/run_facts.hpp"
#include "report/text.hpp"
#include "report/writer.hpp"
#include "test_support.hpp"

namespace gpuemu::report {
namespace {

using testing::contains;
using testing::load_fixture;

result::Timing typed_timing(double wall, double op, double ref, double overlap = 0) {
  return {wall, op, ref, overlap};
}

nlohmann::json timing(double wall, double op, double ref, double overlap = 0) {
  const double gpuemu = wall - op - ref + overlap;
  return {{"wall_secs", wall},
          {"op_secs", op},
          {"reference_secs", ref},
          {"overlap_secs", overlap},
          {"gpuemu_secs", gpuemu},
          {"gpuemu_share", gpuemu / wall}};
}

nlohmann::json with_facts() {
  nlohmann::json result = load_fixture("passing.json");
  result["ops"][0]["runtime"] = {
      {"framework", "pytorch"}, {"version", "2.9.1+cpu"}, {"device", "cpu"}, {"triton", "interpreter"}};
  result["ops"][0]["timing"] = timing(2.0, 1.5, 0.3);
  result["timing"] = timing(2.0, 1.5, 0.3);
  return result;
}

TEST(RunFacts, Phrases) {
  EXPECT_EQ(
      runtime_phrase({{"framework", "jax"}, {"version", "0.8.1"}, {"device", "cpu:0"}, {"pallas", "gpu"}}),
      "jax 0.8.1 on cpu:0, Pallas: gpu");
  EXPECT_EQ(runtime_phrase({{"framework", "numpy"}}), "numpy");
  EXPECT_EQ(runtime_phrase(nullptr), "");
  EXPECT_EQ(timing_phrase(typed_timing(2.0, 1.5, 0.3)),
            "2.00 s = op 1.50 s (75%) + reference 300 ms (15%) + gpuemu 200 ms (10%)");
  EXPECT_EQ(timing_phrase(std::nullopt), "");
  // The op and the reference ran at the same time for 250 ms: the parts add up to the wall once
  // that is taken off.
  EXPECT_EQ(timing_phrase(typed_timing(2.0, 1.5, 0.3, 0.25)),
            "2.00 s = op 1.50 s (75%) + reference 300 ms (15%) - both at once 250 ms + gpuemu 450 ms (22%)");
}

TEST(RunFacts, TextSummarySaysWhatRanAndWhereTheTimeWent) {
  const std::string text = render_text(testing::decode(with_facts()));
  EXPECT_TRUE(contains(text, "     ran: pytorch 2.9.1+cpu on cpu, Triton: interpreter (not a GPU run)\n"))
      << text;
  EXPECT_TRUE(
      contains(text, "     time: 2.00 s = op 1.50 s (75%) + reference 300 ms (15%) + gpuemu 200 ms (10%)\n"))
      << text;
  EXPECT_TRUE(contains(text, "time in cases: 2.00 s")) << text;
  // A document without the optional fields renders as before.
  EXPECT_FALSE(contains(render_text(testing::decode(load_fixture("passing.json"))), "ran:"));
}

TEST(RunFacts, MarkdownHasATableOfWhatRan) {
  auto md = render(with_facts(), "markdown", RenderOptions{.workspace = "/work/ws"});
  ASSERT_TRUE(md) << md.error().message;
  EXPECT_TRUE(contains(*md, "### What ran, and where the time went\n\n")) << *md;
  EXPECT_TRUE(contains(*md,
                       "| gelu | pytorch 2.9.1+cpu on cpu, Triton: interpreter (not a GPU run) | 2.00 s | "
                       "1.50 s (75%) | 300 ms (15%) | 0 ms | 200 ms (10%) |\n"))
      << *md;
}

TEST(RunFacts, MergedShardsSumTheirTiming) {
  nlohmann::json a = with_facts();
  nlohmann::json b = a;
  b["ops"][0]["runtime"] = nullptr;
  b["ops"][0]["timing"] = timing(1.0, 0.5, 0.1);
  const std::vector<ShardDocument> shards = {{"a", a}, {"b", b}};
  auto merged = merge_results(shards);
  ASSERT_TRUE(merged) << merged.error().message;
  const auto& op = (*merged)["ops"][0];
  EXPECT_DOUBLE_EQ(op["timing"]["wall_secs"].get<double>(), 3.0);
  EXPECT_DOUBLE_EQ(op["timing"]["op_secs"].get<double>(), 2.0);
  EXPECT_NEAR(op["timing"]["gpuemu_share"].get<double>(), 0.6 / 3.0, 1e-12);
  EXPECT_DOUBLE_EQ(op["timing"]["overlap_secs"].get<double>(), 0.0);
  EXPECT_EQ(op["runtime"]["framework"], "pytorch");
  EXPECT_DOUBLE_EQ((*merged)["timing"]["wall_secs"].get<double>(), 3.0);
}

}  // namespace
}  // namespace gpuemu::report
