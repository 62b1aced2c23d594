// engine::calibrate against fake runners: the fit covers every value kind and layout the op is
// fuzzed with, so the tolerances it fits pass the same correct kernel on fresh boundary and
// adversarial cases too; the re-check on fresh seeds runs the real pass rule and catches errors
// the fit did not see; the written values are what the re-check used.
#include "engine/calibrate.hpp"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <set>

#include "engine/executor.hpp"
#include "engine/plans.hpp"
#include "engine_test_support.hpp"

namespace gpuemu::engine {
namespace {

// A correct float32 cumsum that accumulates in float32, as a GPU scan does: its error grows with
// the magnitude of the partial sums, so boundary and adversarial values (huge and tiny values
// mixed, cancellation) see far larger errors than regular ones.
proc::RunOutcome cumsum_f32(const proc::RunRequest& request) {
  const auto& x = testing::input(request, "x");
  auto values = x.to_doubles();
  const std::int64_t n = x.shape.back();
  float acc = 0;
  for (std::size_t i = 0; i < values.size(); ++i) {
    if (static_cast<std::int64_t>(i) % n == 0) acc = 0;
    acc += static_cast<float>(values[i]);
    values[i] = acc;
  }
  return testing::answer(tensor::Tensor::from_doubles(tensor::DType::float32, x.shape, values));
}

const std::string kOp = testing::cumsum_op("scan", "cumsum_f32", "M = [1, 4], N = [1, 512]",
                                           "layouts = [\"contiguous\", \"strided\"]");

class CalibrateTest : public ::testing::Test {
 protected:
  void SetUp() override {
    runners_.add("cumsum_reference", testing::cumsum_reference);
    runners_.add("cumsum_f32", cumsum_f32);
  }
  testing::FakeRunners runners_;
};

TEST_F(CalibrateTest, FitsEveryValueKindAndLayoutAndReChecksOnFreshSeeds) {
  const auto config = testing::fake_config(kOp);
  CalibrateOptions options;
  options.iterations = 60;
  options.master_seed = 17;
  options.runners = runners_.factory();
  const auto rows = calibrate(config, config.ops.front(), options);
  ASSERT_TRUE(rows) << rows.error().message;
  ASSERT_EQ(rows->size(), 1u);
  const auto& row = rows->front();
  std::set<std::string> strata;
  int cases = 0;
  for (const auto& s : row.strata) {
    strata.insert(s.name());
    EXPECT_EQ(s.cases, 10) << s.name();
    EXPECT_LE(s.p95_abs, row.p95_abs);
    EXPECT_LE(s.p95_rel, row.p95_rel);
    cases += s.cases;
  }
  EXPECT_EQ(strata,
            (std::set<std::string>{"regular/contiguous", "boundary/contiguous", "adversarial/contiguous",
                                   "regular/strided", "boundary/strided", "adversarial/strided"}));
  EXPECT_EQ(cases, row.cases);
  EXPECT_EQ(row.cases, 60);
  // The fit is p95 x 1.5, rounded up to the 3 digits gpuemu.toml gets.
  EXPECT_GE(row.fitted.atol, 1.5 * row.p95_abs);
  EXPECT_GE(row.fitted.rtol, 1.5 * row.p95_rel);
  // Exactly what gpuemu.toml will say, so the re-check ran with the written values.
  EXPECT_EQ(std::strtod(fmt::format("{:.3g}", row.fitted.atol).c_str(), nullptr), row.fitted.atol);
  EXPECT_EQ(std::strtod(fmt::format("{:.3g}", row.fitted.rtol).c_str(), nullptr), row.fitted.rtol);
  EXPECT_NE(row.atol_from.find('/'), std::string::npos);
  // The re-check ran as many fresh cases with the real pass rule, and passed.
  EXPECT_EQ(row.check.cases, 60);
  EXPECT_EQ(row.check.failed, 0);
  EXPECT_TRUE(row.check.passed());
}

TEST_F(CalibrateTest, TheFittedTolerancesPassTheSameKernelUnderFuzzing) {
  // What calibrate --write promises: a fuzz run of the same correct kernel with the written
  // tolerances passes, boundary and adversarial cases included, under other seeds.
  auto config = testing::fake_config(kOp);
  CalibrateOptions options;
  options.iterations = 60;
  options.master_seed = 3;
  options.runners = runners_.factory();
  const auto rows = calibrate(config, config.ops.front(), options);
  ASSERT_TRUE(rows) << rows.error().message;
  ASSERT_TRUE(rows->front().check.passed());
  config.ops.front().tolerances[tensor::DType::float32] = rows->front().fitted;
  for (std::uint64_t seed : {101, 202, 303}) {
    auto plan = plan_fuzz(config, {}, seed, 120);
    ASSERT_TRUE(plan);
    plan->runners = runners_.factory();
    const auto result = execute(config, *plan);
    ASSERT_TRUE(result) << result.error().message;
    EXPECT_EQ(result->ops.front().passed, 120)
        << "seed " << seed << ": "
        << (result->ops.front().failures.empty() ? "" : result->ops.front().failures.front().verdict.message);
  }
}

TEST_F(CalibrateTest, ErrorsTheFitDidNotSeeFailTheReCheck) {
  // The kernel drifts after the fit's cases (a stand-in for errors too rare for the fit to
  // see): the re-check, on fresh seeds with the real pass rule, catches it and names a case.
  int calls = 0;
  runners_.add("drifting", [&](const proc::RunRequest& r) {
    auto out = cumsum_f32(r);
    if (++calls > 12) {
      auto values = out.outputs["out"].to_doubles();
      for (auto& v : values) v += 0.5;
      out.outputs["out"] =
          tensor::Tensor::from_doubles(tensor::DType::float32, out.outputs["out"].shape, values);
    }
    return out;
  });
  const auto config = testing::fake_config(testing::cumsum_op("scan", "drifting", "M = [1, 4], N = [1, 64]"));
  CalibrateOptions options;
  options.iterations = 12;
  options.runners = runners_.factory();
  const auto rows = calibrate(config, config.ops.front(), options);
  ASSERT_TRUE(rows) << rows.error().message;
  const auto& check = rows->front().check;
  EXPECT_FALSE(check.passed());
  EXPECT_EQ(check.cases, 12);
  EXPECT_EQ(check.failed, 12);
  ASSERT_TRUE(check.worst.has_value());
  EXPECT_EQ(check.worst->verdict.kind, check::FailureKind::mismatch);
  EXPECT_FALSE(check.worst_stratum.empty());
}

TEST_F(CalibrateTest, FitAndReCheckSeedsAreDisjoint) {
  const auto config = testing::fake_config(kOp);
  CalibrateOptions options;
  options.iterations = 30;
  options.runners = runners_.factory();
  ASSERT_TRUE(calibrate(config, config.ops.front(), options));
  // Requests alternate reference, op; the first 30 cases are the fit, the next 30 the re-check.
  const auto hashes = runners_.first_input_hashes();
  ASSERT_EQ(hashes.size(), 2u * 60u);
  std::set<std::size_t> fit(hashes.begin(), hashes.begin() + 60);
  std::set<std::size_t> recheck(hashes.begin() + 60, hashes.end());
  EXPECT_GE(fit.size(), 25u);  // different cases (a few small boundary cases may coincide)
  // Disjoint seeds; a tiny boundary case (x[1, 1] = 0) may still have the bytes of a fit case.
  int repeats = 0;
  for (auto h : recheck) repeats += static_cast<int>(fit.count(h));
  EXPECT_LE(repeats, 3) << "the re-check repeats the fit's cases";
}

}  // namespace
}  // namespace gpuemu::engine
