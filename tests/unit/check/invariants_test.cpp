// Each invariant passes on a good output and fails, naming itself and the first bad index, on a bad one.
#include <gtest/gtest.h>

#include <cmath>

#include "check/compare.hpp"

namespace gpuemu::check {
namespace {

using tensor::DType;
using tensor::Tensor;

Verdict check(Invariant inv, const tensor::Shape& shape, const std::vector<double>& values,
              std::vector<tensor::Shape> input_shapes = {}, ToleranceSpec tol = {1e-5, 1e-5}) {
  CompareOptions o;
  o.tolerance = tol;
  o.invariants = {inv};
  o.input_shapes = std::move(input_shapes);
  o.check_nan = false;  // let NaN reach the invariants
  o.check_inf = false;
  const Tensor t = Tensor::from_doubles(DType::float32, shape, values);
  return compare_outputs(Outputs{{"out", t}}, Outputs{{"out", t}}, o);
}

TEST(Invariants, ShapePreservedUsesTheFirstInput) {
  EXPECT_TRUE(check(Invariant::shape_preserved, {2, 2}, {1, 2, 3, 4}, {{2, 2}, {7}}).passed());
  const Verdict v = check(Invariant::shape_preserved, {2, 2}, {1, 2, 3, 4}, {{4}});
  EXPECT_EQ(v.kind, FailureKind::invariant_violation);
  EXPECT_EQ(
      v.message,
      "invariant shape_preserved violated: output 'out' has shape [2, 2] but the first input has shape [4]");
  // Without input shapes the reference output's shape is the standard, which matches here.
  EXPECT_TRUE(check(Invariant::shape_preserved, {2, 2}, {1, 2, 3, 4}).passed());
}

TEST(Invariants, NonNegative) {
  EXPECT_TRUE(check(Invariant::non_negative, {2, 2}, {0, -0.0, 3, 4}).passed());
  EXPECT_EQ(check(Invariant::non_negative, {2, 2}, {0, 1, -0.5, -4}).message,
            "invariant non_negative violated: out[1, 0] = -0.5");
  EXPECT_EQ(check(Invariant::non_negative, {3}, {0, NAN, 1}).message,
            "invariant non_negative violated: out[1] = nan");
}

TEST(Invariants, Finite) {
  EXPECT_TRUE(check(Invariant::finite, {3}, {0, -1e30, 1}).passed());
  EXPECT_EQ(check(Invariant::finite, {3}, {0, 1, -INFINITY}).message,
            "invariant finite violated: out[2] = -inf");
}

TEST(Invariants, Symmetric) {
  EXPECT_TRUE(check(Invariant::symmetric, {2, 2, 2}, {1, 2, 2, 1, 5, 7, 7 + 1e-6, 0}).passed());
  EXPECT_EQ(
      check(Invariant::symmetric, {2, 2, 2}, {1, 2, 2, 1, 5, 7, 7.5, 0}).message,
      "invariant symmetric violated: out[1, 0, 1] = 7 but out[1, 1, 0] = 7.5 (allowed difference atol + "
      "rtol*|x| = 1e-05 + 1e-05*|x|)");
  EXPECT_TRUE(check(Invariant::symmetric, {2, 2}, {1, NAN, NAN, 1}).passed());
  EXPECT_EQ(check(Invariant::symmetric, {2, 2}, {1, NAN, 0, 1}).kind, FailureKind::invariant_violation);
  EXPECT_EQ(check(Invariant::symmetric, {2, 3}, {1, 2, 3, 4, 5, 6}).message,
            "invariant symmetric violated: output 'out' has shape [2, 3]; symmetric needs the last two "
            "dimensions equal");
  EXPECT_EQ(check(Invariant::symmetric, {4}, {1, 2, 3, 4}).kind, FailureKind::invariant_violation);
}

TEST(Invariants, Normalized) {
  EXPECT_TRUE(check(Invariant::normalized, {2, 4}, {0.25, 0.25, 0.25, 0.25, 1, 0, 0, 0}).passed());
  // Allowed: atol*sqrt(4) + rtol = 3e-5; a row summing to 1 + 2.5e-5 passes, 1 + 4e-5 fails.
  EXPECT_TRUE(check(Invariant::normalized, {1, 4}, {0.25, 0.25, 0.25, 0.250025}).passed());
  const Verdict v = check(Invariant::normalized, {2, 4}, {0.25, 0.25, 0.25, 0.25, 0.25, 0.25, 0.25, 0.25004});
  EXPECT_EQ(v.message,
            "invariant normalized violated: out[1, :] sums to 1.00004, expected 1 within 3e-05 (atol*sqrt(4) "
            "+ rtol)");
  EXPECT_EQ(check(Invariant::normalized, {3}, {0.5, 0.5, NAN}).kind, FailureKind::invariant_violation);
  EXPECT_TRUE(check(Invariant::normalized, {}, {1}).passed());
}

TEST(Invariants, OnlyReportedWhenValuesAgree) {
  CompareOptions o;
  o.invariants = {Invariant::non_negative};
  const Tensor out = Tensor::from_doubles(DType::float32, {1}, std::vector<double>{-3});
  const Tensor ref = Tensor::from_doubles(DType::float32, {1}, std::vector<double>{-1});
  EXPECT_EQ(compare_outputs(Outputs{{"out", out}}, Outputs{{"out", ref}}, o).kind, FailureKind::mismatch);
}

}  // namespace
}  // namespace gpuemu::check
