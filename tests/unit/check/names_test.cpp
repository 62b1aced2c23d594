// Failure kind and invariant names round-trip, and default tolerances follow the FAQ.
#include <gtest/gtest.h>

#include "check/compare.hpp"
#include "check/tolerance.hpp"
#include "check/verdict.hpp"

namespace gpuemu::check {
namespace {

TEST(Names, FailureKindsRoundTrip) {
  for (int k = 0; k <= static_cast<int>(kLastFailureKind); ++k) {
    const auto kind = static_cast<FailureKind>(k);
    EXPECT_EQ(parse_failure_kind(failure_kind_name(kind)), kind) << k;
  }
  EXPECT_EQ(failure_kind_name(FailureKind::nonfinite_mismatch), "nonfinite_mismatch");
  EXPECT_EQ(failure_kind_name(FailureKind::unexpected_nonfinite), "unexpected_nonfinite");
  EXPECT_EQ(failure_kind_name(FailureKind::none), "none");
  EXPECT_EQ(failure_kind_name(FailureKind::interpreter_unsupported), "interpreter_unsupported");
  EXPECT_EQ(parse_failure_kind("mismatch "), std::nullopt);
  EXPECT_EQ(parse_failure_kind("regression"), std::nullopt);  // report-only: never a case's kind
}

TEST(Names, Invariants) {
  EXPECT_EQ(all_invariant_names(), (std::vector<std::string_view>{"shape_preserved", "non_negative", "finite",
                                                                  "symmetric", "normalized"}));
  for (auto name : all_invariant_names()) {
    EXPECT_EQ(invariant_name(*parse_invariant(name)), name);
  }
  EXPECT_EQ(parse_invariant("positive"), std::nullopt);
}

TEST(Names, DefaultTolerances) {
  using tensor::DType;
  EXPECT_EQ(default_tolerance(DType::float32), (ToleranceSpec{1e-5, 1e-5}));
  EXPECT_EQ(default_tolerance(DType::float16), (ToleranceSpec{1e-2, 1e-2}));
  EXPECT_EQ(default_tolerance(DType::bfloat16), (ToleranceSpec{1e-2, 1e-2}));
  EXPECT_EQ(default_tolerance(DType::float64), (ToleranceSpec{1e-10, 1e-10}));
  EXPECT_EQ(default_tolerance(DType::int32), (ToleranceSpec{0, 0}));
  EXPECT_EQ(default_tolerance(DType::bool_), (ToleranceSpec{0, 0}));
}

}  // namespace
}  // namespace gpuemu::check
