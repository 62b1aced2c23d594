// compare_outputs edge cases: the pass rule, non-finite rules, structural failures, the order in
// which kinds win, and the messages people read.
#include "check/compare.hpp"

#include <gtest/gtest.h>

#include <cmath>

namespace gpuemu::check {
namespace {

using tensor::DType;
using tensor::Tensor;

Tensor make(DType dtype, tensor::Shape shape, std::vector<double> values) {
  return Tensor::from_doubles(dtype, std::move(shape), values);
}

Outputs one(Tensor t, const std::string& name = "out") {
  return Outputs{{name, std::move(t)}};
}

CompareOptions f32_options() {
  CompareOptions o;
  o.tolerance = {1e-5, 1e-5};
  return o;
}

Verdict compare1(std::vector<double> out, std::vector<double> ref, CompareOptions o = f32_options()) {
  const auto n = static_cast<std::int64_t>(out.size());
  return compare_outputs(one(make(DType::float32, {n}, out)), one(make(DType::float32, {n}, ref)), o);
}

TEST(Compare, IdenticalPasses) {
  const Verdict v = compare1({1, 2, 3}, {1, 2, 3});
  EXPECT_TRUE(v.passed());
  EXPECT_EQ(v.message, "");
  EXPECT_EQ(v.stats.elements, 3);
  EXPECT_EQ(v.stats.max_abs, 0);
  EXPECT_EQ(v.stats.tolerance_used, 0);
  EXPECT_TRUE(v.stats.worst.empty());
}

TEST(Compare, PassRuleBoundaryIsInclusive) {
  // Float64 so the bound is exact: |out-ref| = atol + rtol*|ref| passes, a hair more fails.
  CompareOptions o;
  o.tolerance = {0.25, 0.5};
  auto run = [&](double out) {
    return compare_outputs(one(make(DType::float64, {1}, {out})), one(make(DType::float64, {1}, {2.0})), o);
  };
  EXPECT_TRUE(run(3.25).passed());
  EXPECT_EQ(run(3.25).stats.tolerance_used, 1.0);
  EXPECT_FALSE(run(std::nextafter(3.25, 4.0)).passed());
  EXPECT_TRUE(run(0.75).passed());
  EXPECT_EQ(run(0.5).kind, FailureKind::mismatch);
}

TEST(Compare, NanAgainstNanPasses) {
  EXPECT_TRUE(compare1({NAN, 1}, {NAN, 1}).passed());
}

TEST(Compare, NanAgainstNumberFailsEitherWay) {
  const Verdict a = compare1({1, 2}, {NAN, 2});
  EXPECT_EQ(a.kind, FailureKind::nonfinite_mismatch);
  EXPECT_EQ(
      a.message,
      "1 of 2 elements (50%) disagree with the reference on NaN/Inf (the op must have NaN and Inf exactly "
      "where the reference does); first out[0]: got 1, expected nan");
  const Verdict b = compare1({1, NAN}, {1, 2});
  EXPECT_EQ(b.kind, FailureKind::unexpected_nonfinite);
  EXPECT_EQ(
      b.message,
      "1 of 2 elements (50%) are NaN/Inf where the reference is finite; first out[1]: got nan, expected 2");
  EXPECT_EQ(b.stats.mismatches, 1);
  EXPECT_EQ(b.stats.tolerance_used, INFINITY);
}

TEST(Compare, InfinitiesMustMatchInSign) {
  EXPECT_TRUE(compare1({INFINITY, -INFINITY}, {INFINITY, -INFINITY}).passed());
  EXPECT_EQ(compare1({-INFINITY}, {INFINITY}).kind, FailureKind::nonfinite_mismatch);
  EXPECT_EQ(compare1({NAN}, {INFINITY}).kind, FailureKind::nonfinite_mismatch);
  EXPECT_EQ(compare1({3.4e38f}, {INFINITY}).kind, FailureKind::nonfinite_mismatch);
  EXPECT_EQ(compare1({INFINITY}, {3.4e38f}).kind, FailureKind::unexpected_nonfinite);
}

TEST(Compare, SignedZerosAreEqual) {
  const Verdict v = compare1({-0.0, 0.0}, {0.0, -0.0});
  EXPECT_TRUE(v.passed());
  EXPECT_EQ(v.stats.max_ulp, 0);
}

TEST(Compare, CheckNanAndCheckInfOffRelaxOnlyAgreementWithTheReference) {
  CompareOptions o = f32_options();
  o.check_nan = false;
  o.check_inf = false;
  // NaN or Inf where the reference is finite is wrong under every setting: a kernel returning all
  // NaN or all +Inf must never pass.
  const Verdict nan = compare1({NAN, NAN, NAN}, {1.0, 5.0, 1.0}, o);
  EXPECT_EQ(nan.kind, FailureKind::unexpected_nonfinite);
  EXPECT_EQ(nan.stats.mismatches, 3);
  EXPECT_EQ(compare1({INFINITY, INFINITY}, {1.0, 2.0}, o).kind, FailureKind::unexpected_nonfinite);
  EXPECT_EQ(compare1({-INFINITY}, {1.0}, o).kind, FailureKind::unexpected_nonfinite);
  // What they relax: the reference's own NaN (Inf) need not be matched; such elements are not compared.
  const Verdict relaxed = compare1({1.0, 7.0, NAN, 4.0}, {NAN, INFINITY, -INFINITY, 4.0}, o);
  EXPECT_TRUE(relaxed.passed()) << relaxed.message;
  EXPECT_EQ(relaxed.stats.max_abs, 0);
  o.check_nan = true;
  EXPECT_EQ(compare1({1.0}, {NAN}, o).kind, FailureKind::nonfinite_mismatch);
  EXPECT_TRUE(compare1({1.0}, {INFINITY}, o).passed());
  o.check_nan = false;
  o.check_inf = true;
  EXPECT_EQ(compare1({1.0}, {INFINITY}, o).kind, FailureKind::nonfinite_mismatch);
  EXPECT_TRUE(compare1({1.0}, {NAN}, o).passed());
}

// A declared output shape ([ops.schema] output, or the first input under shape_preserved) holds the
// reference to it too: an op and a reference that are equally wrong in shape must not pass.
TEST(Compare, DeclaredOutputShapeJudgesTheReferenceToo) {
  CompareOptions o = f32_options();
  o.declared_output = tensor::Shape{2, 3};
  o.declared_output_source = "[ops.schema] output";
  const std::vector<double> values = {1, 2, 3, 4, 5, 6};
  const Verdict flat =
      compare_outputs(one(make(DType::float32, {6}, values)), one(make(DType::float64, {6}, values)), o);
  EXPECT_EQ(flat.kind, FailureKind::reference_error);
  EXPECT_EQ(
      flat.message,
      "reference output 'out' has shape [6], but [ops.schema] output is [2, 3]: fix the reference (or the "
      "declaration); a reference of the wrong shape cannot judge the op");
  const Verdict transposed = compare_outputs(one(make(DType::float32, {3, 2}, values)),
                                             one(make(DType::float64, {3, 2}, values)), o);
  EXPECT_EQ(transposed.kind, FailureKind::reference_error);
  const Verdict op_wrong =
      compare_outputs(one(make(DType::float32, {6}, values)), one(make(DType::float64, {2, 3}, values)), o);
  EXPECT_EQ(op_wrong.kind, FailureKind::shape_mismatch);
  EXPECT_TRUE(
      compare_outputs(one(make(DType::float32, {2, 3}, values)), one(make(DType::float64, {2, 3}, values)), o)
          .passed());
  o.declared_output.reset();  // without a declaration only op and reference are compared
  EXPECT_TRUE(
      compare_outputs(one(make(DType::float32, {6}, values)), one(make(DType::float64, {6}, values)), o)
          .passed());
}

TEST(Compare, MismatchMessage) {
  std::vector<double> ref(4096, 0.5);
  std::vector<double> out = ref;
  out[3 * 64 + 1] = 0.51171875;  // out[3, 1]
  out[7] = 0.50002;
  const Verdict v = compare_outputs(one(make(DType::float32, {64, 64}, out)),
                                    one(make(DType::float32, {64, 64}, ref)), f32_options());
  EXPECT_EQ(v.kind, FailureKind::mismatch);
  EXPECT_EQ(
      v.message,
      "2 of 4096 elements (0.049%) outside atol=1e-05 + rtol=1e-05*|ref|; worst out[3, 1]: got 0.51171875, "
      "expected 0.5 (abs 0.0117, rel 0.0234)");
  EXPECT_EQ(v.stats.mismatches, 2);
  EXPECT_DOUBLE_EQ(v.stats.mismatch_fraction, 2.0 / 4096);
  EXPECT_DOUBLE_EQ(v.stats.max_abs, 0.01171875);
  EXPECT_DOUBLE_EQ(v.stats.max_rel, 0.0234375);
  EXPECT_DOUBLE_EQ(v.stats.tolerance_used, 0.01171875 / (1e-5 + 1e-5 * 0.5));
  ASSERT_EQ(v.stats.worst.size(), 2u);
  EXPECT_EQ(v.stats.worst[0].index, (std::vector<std::int64_t>{3, 1}));
  EXPECT_EQ(v.stats.worst[1].index, (std::vector<std::int64_t>{0, 7}));
  EXPECT_EQ(v.stats.worst[0].output, "out");
}

TEST(Compare, ShapeMismatchShowsBothShapes) {
  const Verdict v = compare_outputs(one(Tensor::zeros(DType::float32, {2, 3})),
                                    one(Tensor::zeros(DType::float32, {3, 2})), f32_options());
  EXPECT_EQ(v.kind, FailureKind::shape_mismatch);
  EXPECT_EQ(v.message, "output 'out' has shape [2, 3], expected [3, 2] (the reference's shape)");
  EXPECT_EQ(v.stats.elements, 0);
}

TEST(Compare, DtypeMismatch) {
  CompareOptions o = f32_options();
  o.expected_dtype = DType::float32;
  const Verdict v =
      compare_outputs(one(make(DType::float64, {2}, {1, 2})), one(make(DType::float64, {2}, {1, 2})), o);
  EXPECT_EQ(v.kind, FailureKind::dtype_mismatch);
  EXPECT_EQ(
      v.message,
      "output 'out' has dtype float64, expected float32 (the case dtype); cast the result to float32 before "
      "returning it");
  EXPECT_EQ(v.stats.elements, 2);  // values are still compared for the statistics
  // Only the op's dtype matters: a float64 reference is fine.
  const Verdict ok =
      compare_outputs(one(make(DType::float32, {2}, {1, 2})), one(make(DType::float64, {2}, {1, 2})), o);
  EXPECT_TRUE(ok.passed());
}

TEST(Compare, MissingOutputAndExtraOutputs) {
  Outputs ref{{"y", make(DType::float32, {1}, {1})}, {"z", make(DType::float32, {1}, {2})}};
  Outputs out{{"y", make(DType::float32, {1}, {1})}, {"w", make(DType::float32, {1}, {2})}};
  const Verdict v = compare_outputs(out, ref, f32_options());
  EXPECT_EQ(v.kind, FailureKind::missing_output);
  EXPECT_EQ(
      v.message,
      "the op's answer has no output 'z' (it returned 'w', 'y'); return every output the reference returns, "
      "under the same name");
  out["z"] = make(DType::float32, {1}, {2});
  EXPECT_TRUE(compare_outputs(out, ref, f32_options()).passed());  // the extra 'w' is ignored
}

TEST(Compare, OneOutputOnEachSideIsTheSameOutputWhateverTheNames) {
  // The seed FAQ's reference answers {"outputs": {"result": ...}}; an op returning one tensor is "out".
  const Outputs ref = one(make(DType::float32, {2}, {1, 2}), "result");
  EXPECT_TRUE(compare_outputs(one(make(DType::float32, {2}, {1, 2})), ref, f32_options()).passed());
  const Verdict wrong = compare_outputs(one(make(DType::float32, {2}, {1, 3})), ref, f32_options());
  EXPECT_EQ(wrong.kind, FailureKind::mismatch);
  EXPECT_NE(wrong.message.find("result[1]: got 3"), std::string::npos) << wrong.message;
  EXPECT_EQ(wrong.stats.max_abs, 1);
  const Verdict shape = compare_outputs(one(make(DType::float32, {3}, {1, 2, 3})), ref, f32_options());
  EXPECT_EQ(shape.kind, FailureKind::shape_mismatch);
  // With several outputs on either side, names still decide, and the message lists them.
  Outputs two{{"out", make(DType::float32, {2}, {1, 2})}, {"extra", make(DType::float32, {1}, {0})}};
  const Verdict missing = compare_outputs(two, ref, f32_options());
  EXPECT_EQ(missing.kind, FailureKind::missing_output);
  EXPECT_EQ(missing.message,
            "the op's answer has no output 'result' (it returned 'extra', 'out'); return every output the "
            "reference returns, under the same name");
}

TEST(Compare, InvalidViewsAreErrorsNotReads) {
  Tensor short_out = make(DType::float32, {4}, {1, 2, 3, 4});
  short_out.data.resize(12);
  const Verdict v =
      compare_outputs(one(short_out), one(make(DType::float32, {4}, {1, 2, 3, 4})), f32_options());
  EXPECT_EQ(v.kind, FailureKind::op_error);
  EXPECT_NE(v.message.find("output 'out' of the op: shape [4] needs 4 float32 elements but data holds 3"),
            std::string::npos);
  Tensor bad_ref = make(DType::float32, {2, 2}, {1, 2, 3, 4});
  bad_ref.strides = {2, 2};
  const Verdict r =
      compare_outputs(one(make(DType::float32, {2, 2}, {1, 2, 3, 4})), one(bad_ref), f32_options());
  EXPECT_EQ(r.kind, FailureKind::reference_error);
}

TEST(Compare, WorstKindWins) {
  CompareOptions o = f32_options();
  o.expected_dtype = DType::float32;
  o.invariants = {Invariant::non_negative};
  // a: dtype mismatch; b: NaN where the reference has 1; c: plain mismatch; d: negative values.
  Outputs ref{{"a", make(DType::float64, {1}, {1})},
              {"b", make(DType::float32, {1}, {1})},
              {"c", make(DType::float32, {1}, {1})},
              {"d", make(DType::float32, {1}, {-1})}};
  Outputs out{{"a", make(DType::float64, {1}, {1})},
              {"b", make(DType::float32, {1}, {NAN})},
              {"c", make(DType::float32, {1}, {2})},
              {"d", make(DType::float32, {1}, {-1})}};
  EXPECT_EQ(compare_outputs(out, ref, o).kind, FailureKind::dtype_mismatch);
  out["a"] = make(DType::float32, {1}, {1});
  EXPECT_EQ(compare_outputs(out, ref, o).kind, FailureKind::unexpected_nonfinite);
  ref["b"] = make(DType::float32, {1}, {INFINITY});
  EXPECT_EQ(compare_outputs(out, ref, o).kind, FailureKind::nonfinite_mismatch);
  out["b"] = make(DType::float32, {1}, {INFINITY});
  EXPECT_EQ(compare_outputs(out, ref, o).kind, FailureKind::mismatch);
  out["c"] = make(DType::float32, {1}, {1});
  const Verdict inv = compare_outputs(out, ref, o);
  EXPECT_EQ(inv.kind, FailureKind::invariant_violation);
  EXPECT_EQ(inv.message, "invariant non_negative violated: d[0] = -1");
  out["c"] = make(DType::float32, {2}, {1, 1});
  EXPECT_EQ(compare_outputs(out, ref, o).kind, FailureKind::shape_mismatch);
  out.erase("a");
  EXPECT_EQ(compare_outputs(out, ref, o).kind, FailureKind::missing_output);
}

TEST(Compare, ToleranceUsedWithZeroTolerance) {
  CompareOptions o;
  o.tolerance = {0, 0};
  const Verdict same =
      compare_outputs(one(make(DType::int32, {3}, {1, 0, -4})), one(make(DType::int32, {3}, {1, 0, -4})), o);
  EXPECT_TRUE(same.passed());
  EXPECT_EQ(same.stats.tolerance_used, 0);
  const Verdict diff =
      compare_outputs(one(make(DType::int32, {3}, {1, 0, -7})), one(make(DType::int32, {3}, {1, 0, -4})), o);
  EXPECT_EQ(diff.kind, FailureKind::mismatch);
  EXPECT_EQ(diff.stats.tolerance_used, INFINITY);
  EXPECT_EQ(diff.stats.max_ulp, 3);  // integers: the absolute difference
  EXPECT_EQ(diff.stats.max_abs, 3);
  EXPECT_EQ(diff.message,
            "1 of 3 elements (33.3%) outside atol=0 + rtol=0*|ref|; worst out[2]: got -7, expected -4 (abs "
            "3, rel 0.75)");
}

TEST(Compare, RelativeErrorAgainstZeroReference) {
  const Verdict v = compare1({1e-6, 0}, {0, 0});
  EXPECT_TRUE(v.passed());  // 1e-6 <= atol
  EXPECT_EQ(v.stats.max_rel, INFINITY);
  EXPECT_DOUBLE_EQ(v.stats.max_abs, static_cast<double>(1e-6f));
}

TEST(Compare, WorstOrderingAndTies) {
  CompareOptions o;
  o.tolerance = {1, 0};
  // errors: 0.5, 3, 3, 0, 7, 1, 2, 0.25 -> worst first, earlier first among equals, top five.
  const std::vector<double> ref(8, 0.0);
  const std::vector<double> out{0.5, 3, -3, 0, 7, 1, 2, 0.25};
  const Verdict v =
      compare_outputs(one(make(DType::float64, {2, 4}, out)), one(make(DType::float64, {2, 4}, ref)), o);
  ASSERT_EQ(v.stats.worst.size(), 5u);
  std::vector<std::vector<std::int64_t>> order;
  for (const auto& w : v.stats.worst) order.push_back(w.index);
  EXPECT_EQ(order, (std::vector<std::vector<std::int64_t>>{{1, 0}, {0, 1}, {0, 2}, {1, 2}, {1, 1}}));
  EXPECT_EQ(v.stats.worst[2].actual, -3);
  EXPECT_EQ(v.stats.worst[2].abs_err, 3);
  EXPECT_EQ(v.stats.mismatches, 4);  // 3, -3, 7, 2 exceed atol=1
  EXPECT_EQ(v.stats.tolerance_used, 7);
}

TEST(Compare, UlpStatisticsInFloat16) {
  CompareOptions o;
  o.tolerance = {1e-2, 1e-2};
  // 1.0 and the third fp16 value above it are 3 ULPs apart; the float64 reference is rounded to
  // fp16 before counting.
  const double three_up = 1.0 + 3 * std::ldexp(1.0, -10);
  const Verdict v = compare_outputs(one(make(DType::float16, {2}, {three_up, 2.0})),
                                    one(make(DType::float64, {2}, {1.0 + 1e-9, 2.0})), o);
  EXPECT_TRUE(v.passed());
  EXPECT_EQ(v.stats.max_ulp, 3);
  const Verdict bf = compare_outputs(one(make(DType::bfloat16, {1}, {1.0 + std::ldexp(1.0, -6)})),
                                     one(make(DType::float64, {1}, {1.0})), o);
  EXPECT_EQ(bf.stats.max_ulp, 2);
}

TEST(Compare, UlpStatisticsInFloat32AndFloat64) {
  const Verdict f = compare1({1.0f + 0x1p-23f * 5}, {1.0});
  EXPECT_EQ(f.stats.max_ulp, 5);
  CompareOptions o;
  o.tolerance = {1e-10, 1e-10};
  const Verdict d =
      compare_outputs(one(make(DType::float64, {1}, {std::nextafter(std::nextafter(-0.0, -1.0), -1.0)})),
                      one(make(DType::float64, {1}, {std::nextafter(0.0, 1.0)})), o);
  EXPECT_EQ(d.stats.max_ulp, 3);
}

TEST(Compare, StatisticsSpanEveryOutput) {
  Outputs ref{{"a", make(DType::float64, {2}, {1, 1})}, {"b", make(DType::float64, {3}, {1, 1, 1})}};
  Outputs out{{"a", make(DType::float64, {2}, {1, 1.5})}, {"b", make(DType::float64, {3}, {1, 1, 4})}};
  CompareOptions o;
  o.tolerance = {0.1, 0};
  const Verdict v = compare_outputs(out, ref, o);
  EXPECT_EQ(v.stats.elements, 5);
  EXPECT_EQ(v.stats.mismatches, 2);
  EXPECT_EQ(v.stats.max_abs, 3);
  ASSERT_EQ(v.stats.worst.size(), 2u);
  EXPECT_EQ(v.stats.worst[0].output, "b");
  EXPECT_EQ(v.stats.worst[1].output, "a");
  EXPECT_EQ(
      v.message,
      "2 of 5 elements (40%) outside atol=0.1 + rtol=0*|ref|; worst b[2]: got 4, expected 1 (abs 3, rel 3)");
}

TEST(Compare, ScalarOutputs) {
  const Verdict v =
      compare_outputs(one(make(DType::float32, {}, {2})), one(make(DType::float32, {}, {1})), f32_options());
  EXPECT_EQ(v.kind, FailureKind::mismatch);
  EXPECT_NE(v.message.find("worst out: got 2, expected 1"), std::string::npos);
}

}  // namespace
}  // namespace gpuemu::check
