// Tests of artifact/metrics_diff.cpp: diff the unrolled kernel against the rolled one's metrics,
// thresholds from [policies] artifact_thresholds. (The store's side, the newest row of each kernel
// under a tag, is tested in tests/unit/store.)
#include <gtest/gtest.h>

#include "artifact/metrics_diff.hpp"
#include "artifact_test_support.hpp"

namespace gpuemu::artifact {
namespace {

using Baseline = std::map<std::string, nlohmann::json>;

class MetricsDiffTest : public ::testing::Test {
 protected:
  // What the store hands back for a tag: each kernel's metrics, as stored.
  static Baseline baseline_of(const std::vector<KernelReport>& reports) {
    Baseline b;
    for (const KernelReport& r : reports) b.emplace(r.name, metrics_to_json(r.metrics));
    return b;
  }

  static KernelReport report(const std::string& file, const std::string& name) {
    auto a = build_artifact(Toolchain{}, testing::kernel_path(file), "sm_80");
    EXPECT_TRUE(a);
    auto r = evaluate(*a, a->kernels().at(0), {});
    EXPECT_TRUE(r);
    r->name = name;
    return *r;
  }
};

TEST_F(MetricsDiffTest, UnrolledLoopRegressesAgainstTheRolledBaseline) {
  const std::vector<KernelReport> base = {report("reduce_loop.ptx", "reduce"), report("saxpy.ptx", "saxpy")};
  const Baseline main = baseline_of(base);
  const std::vector<KernelReport> now = {report("reduce_unrolled.ptx", "reduce")};

  auto diff = diff_baseline("main", main, now, {{"instructions", 1.5}, {"backward_branches", 1.0}});
  ASSERT_TRUE(diff) << diff.error().message;
  EXPECT_TRUE(diff->baseline_found);
  EXPECT_EQ(diff->regressions(), 1);
  ASSERT_EQ(diff->kernels.size(), 1u);
  const KernelDiff& k = diff->kernels[0];
  EXPECT_TRUE(k.in_baseline);
  const auto find = [&](const std::string& metric) {
    for (const auto& d : k.deltas) {
      if (d.metric == metric) return d;
    }
    ADD_FAILURE() << "no delta for " << metric;
    return MetricDelta{};
  };
  const MetricDelta loads = find("ld.global");
  EXPECT_EQ(loads.baseline, 1);
  EXPECT_EQ(loads.current, 8);
  EXPECT_FALSE(loads.regressed) << "no threshold, so reported but not gating";
  EXPECT_TRUE(find("instructions").regressed);
  const MetricDelta loops = find("backward_branches");
  EXPECT_EQ(loops.baseline, loops.current) << "listed because it has a threshold";
  EXPECT_FALSE(loops.regressed);
  EXPECT_EQ(diff->only_in_baseline, std::vector<std::string>{"saxpy"});

  const auto json = diff_to_json(*diff);
  EXPECT_EQ(json["regressions"], 1);
  EXPECT_EQ(json["kernels"][0]["name"], "reduce");
  EXPECT_TRUE(json["kernels"][0]["regressed"].get<bool>());

  auto loose = diff_baseline("main", main, now, {{"instructions", 10.0}});
  ASSERT_TRUE(loose);
  EXPECT_EQ(loose->regressions(), 0);
}

TEST_F(MetricsDiffTest, AnUnchangedKernelListsOnlyItsThresholdedMetrics) {
  const Baseline main = baseline_of({report("reduce_unrolled.ptx", "reduce")});
  auto diff = diff_baseline("main", main, {report("reduce_unrolled.ptx", "reduce")}, {{"instructions", 1.0}});
  ASSERT_TRUE(diff);
  EXPECT_EQ(diff->regressions(), 0);
  ASSERT_EQ(diff->kernels[0].deltas.size(), 1u) << "only the thresholded metric, unchanged";
}

TEST_F(MetricsDiffTest, MissingTagAndUnknownThresholds) {
  auto none = diff_baseline("nope", {}, {report("saxpy.ptx", "saxpy")}, {});
  ASSERT_TRUE(none);
  EXPECT_FALSE(none->baseline_found);
  EXPECT_FALSE(none->kernels[0].in_baseline);
  EXPECT_TRUE(none->kernels[0].deltas.empty());

  auto typo = diff_baseline("nope", {}, {report("saxpy.ptx", "saxpy")}, {{"registerz", 1.1}});
  ASSERT_FALSE(typo);
  EXPECT_EQ(typo.error().kind, ErrorKind::config);
  EXPECT_EQ(typo.error().message,
            "[policies.artifact_thresholds] names 'registerz', which is no kernel metric (did you mean "
            "'registers'?); "
            "metric names are listed in docs/lint.md");
  EXPECT_TRUE(diff_baseline("nope", {}, {}, {{"opcode.mad", 1.0}, {"spills", 1.0}}));
}

}  // namespace
}  // namespace gpuemu::artifact
