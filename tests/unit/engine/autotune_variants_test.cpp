// Autotune variants as the engine sees them once expanded: the typed field and the name rendered
// from it, a user's name read back, what each variant's worker pins,
// selection by op, variant and implementation, case seeds shared by every variant, and the config
// refusing op names that would read as variants.
#include "engine/autotune_variants.hpp"

#include <gtest/gtest.h>

#include "config/loader.hpp"
#include "engine/op_session.hpp"
#include "engine/plans.hpp"
#include "engine_test_support.hpp"

namespace gpuemu::engine {
namespace {

constexpr const char* kLabels[] = {"BLOCK=16,num_warps=1", "BLOCK=64,num_warps=2"};

// "scan" expanded as expand_autotune_variants expands it (the load check is Python's), beside "other".
config::Config expanded() {
  auto config =
      testing::fake_config(testing::cumsum_op("scan", "cumsum_ok", "M = [1, 6], N = [1, 100]") + "\n" +
                           testing::cumsum_op("other", "cumsum_ok", "M = [1, 6], N = [1, 100]"));
  std::vector<config::OpConfig> ops;
  for (const auto& op : config.ops) {
    if (op.name != "scan") {
      ops.push_back(op);
      continue;
    }
    for (const char* label : kLabels) ops.push_back(autotune_variant(op, label));
  }
  config.ops = ops;
  return config;
}

std::vector<std::string> names_of(const std::vector<const config::OpConfig*>& ops) {
  std::vector<std::string> out;
  for (const auto* op : ops) out.push_back(op->name);
  return out;
}

TEST(AutotuneVariants, TheNameIsRenderedFromTheTypedField) {
  config::OpConfig op;
  op.name = "softmax/v1";
  op.spec = "softmax";
  const config::OpConfig variant = autotune_variant(op, "k1:BLOCK=16;k2:BLOCK=64");
  ASSERT_TRUE(variant.autotune);
  EXPECT_EQ(variant.autotune->of, "softmax/v1");
  EXPECT_EQ(variant.autotune->config, "k1:BLOCK=16;k2:BLOCK=64");
  EXPECT_EQ(variant.name, "softmax/v1[k1:BLOCK=16;k2:BLOCK=64]");
  EXPECT_EQ(variant.spec, "softmax");  // case seeds derive from the spec: every variant meets the same cases
  EXPECT_FALSE(op.autotune);
}

TEST(AutotuneVariants, AUserNameSplitsIntoTheOpAndTheConfig) {
  const OpName variant = parse_op_name(variant_name({"softmax/v1", "BLOCK=64,num_warps=4"}));
  EXPECT_EQ(variant.op, "softmax/v1");
  EXPECT_EQ(variant.config, "BLOCK=64,num_warps=4");
  const OpName op = parse_op_name("softmax/v1");
  EXPECT_EQ(op.op, "softmax/v1");
  EXPECT_FALSE(op.config);
  EXPECT_FALSE(parse_op_name("softmax[").config);  // not a variant: select_ops reports it unknown
}

TEST(AutotuneVariants, OnlyTheOpWorkerOfAVariantGetsThePin) {
  const auto config = expanded();
  const auto* variant = config.find_op("scan[BLOCK=64,num_warps=2]");
  ASSERT_NE(variant, nullptr);
  EXPECT_EQ(runner_settings(config, *variant, "op").autotune_pin, "BLOCK=64,num_warps=2");
  EXPECT_EQ(runner_settings(config, *variant, "reference").autotune_pin, "");
  EXPECT_EQ(runner_settings(config, *config.find_op("other"), "op").autotune_pin, "");
  // The pin comes from the typed field, not from reading the name back.
  config::OpConfig renamed = *variant;
  renamed.name = "scan_renamed";
  EXPECT_EQ(runner_settings(config, renamed, "op").autotune_pin, "BLOCK=64,num_warps=2");
}

TEST(AutotuneVariants, SelectionByOpOrByVariant) {
  const auto config = expanded();
  EXPECT_EQ(names_of(*select_ops(config, {"scan"})),
            (std::vector<std::string>{"scan[BLOCK=16,num_warps=1]", "scan[BLOCK=64,num_warps=2]"}));
  EXPECT_EQ(names_of(*select_ops(config, {"scan[BLOCK=64,num_warps=2]"})),
            (std::vector<std::string>{"scan[BLOCK=64,num_warps=2]"}));
  const auto unknown = select_ops(config, {"scan[BLOCK=32,num_warps=1]"});
  ASSERT_FALSE(unknown);
  EXPECT_NE(unknown.error().message.find("scan[BLOCK=16,num_warps=1]"), std::string::npos)
      << unknown.error().message;
}

TEST(AutotuneVariants, EveryVariantMeetsTheSameCases) {
  const auto config = expanded();
  const auto plan = plan_fuzz(config, Selection{.ops = {"scan"}}, 42, 5);
  ASSERT_TRUE(plan);
  ASSERT_EQ(plan->ops.size(), 2u);
  EXPECT_EQ(plan->ops[0].seeds, plan->ops[1].seeds);
}

TEST(AutotuneVariants, AnOpNameCannotLookLikeAVariant) {
  const auto config = config::load_config_text(
      "[project]\nname = \"p\"\n\n" + testing::cumsum_op("scan[x]", "cumsum_ok", "M = [1, 6], N = [1, 100]"),
      std::filesystem::path(GPUEMU_SOURCE_DIR) / "gpuemu.toml");
  ASSERT_FALSE(config);
  EXPECT_NE(config.error().message.find("contains '[' or ']'"), std::string::npos) << config.error().message;
}

}  // namespace
}  // namespace gpuemu::engine
