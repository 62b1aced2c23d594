// StatsAccumulator's chunk kernels (screen, vectorised reduction, ordered worst-list pass, raw 16-bit
// reads) must give exactly what a plain element-by-element pass over the definitions gives: same
// maxima to the bit, same counts, same worst list in the same order, same first NaN/Inf elements.
#include <gtest/gtest.h>

#include <algorithm>
#include <bit>
#include <cfloat>
#include <cmath>
#include <limits>
#include <random>

#include "check/element_stats.hpp"
#include "check/simd/element_kernels.hpp"
#include "check/simd/ulp16.hpp"
#include "tensor/half.hpp"
#include "tensor/tensor.hpp"

namespace gpuemu::check {
namespace {

using tensor::DType;
using tensor::Tensor;

double reference_ulp(DType dtype, double x, double y, double d) {
  switch (dtype) {
    case DType::float16:
      return tensor::ulp_distance_f16(x, y);
    case DType::bfloat16:
      return tensor::ulp_distance_bf16(x, y);
    case DType::float32:
      return tensor::ulp_distance_f32(x, y);
    case DType::float64:
      return tensor::ulp_distance_f64(x, y);
    default:
      return d;
  }
}

struct Expected {
  ErrorStats stats;
  std::int64_t nonfinite = 0, unexpected = 0, finite = 0;
  std::optional<ElementDiff> first_nonfinite, first_unexpected;
};

// The definitions of element_stats.hpp, one element at a time, over several outputs in order.
Expected reference_stats(const std::vector<std::pair<Tensor, Tensor>>& outputs, const ElementRules& rules) {
  Expected e;
  struct Ranked {
    double ratio;
    ElementDiff diff;
  };
  std::vector<Ranked> ranked;
  double max_ratio = 0;
  for (std::size_t o = 0; o < outputs.size(); ++o) {
    const auto& [out, ref] = outputs[o];
    const auto a = out.to_doubles();
    const auto b = ref.to_doubles();
    const std::string name = "out" + std::to_string(o);
    for (std::size_t i = 0; i < a.size(); ++i) {
      const double x = a[i], y = b[i];
      const auto diff = [&](double abs_err, double rel_err) {
        return ElementDiff{
            name, tensor::unravel_index(out.shape, static_cast<std::int64_t>(i)), x, y, abs_err, rel_err};
      };
      if (!std::isfinite(y)) {
        if (std::isnan(y) ? !rules.check_nan : !rules.check_inf) continue;  // agreement relaxed
        if (!(std::isnan(y) ? std::isnan(x) : x == y)) {
          ++e.nonfinite;
          if (!e.first_nonfinite) e.first_nonfinite = diff(INFINITY, INFINITY);
          ranked.push_back({INFINITY, diff(INFINITY, INFINITY)});
        }
        continue;
      }
      if (!std::isfinite(x)) {  // against a finite reference: fails under every setting
        ++e.unexpected;
        if (!e.first_unexpected) e.first_unexpected = diff(INFINITY, INFINITY);
        ranked.push_back({INFINITY, diff(INFINITY, INFINITY)});
        continue;
      }
      const double d = std::fabs(x - y);
      const double bound = rules.tolerance.atol + rules.tolerance.rtol * std::fabs(y);
      double ratio = 0, rel = 0;
      if (d != 0) {
        ratio = bound > 0 ? d / bound : INFINITY;
        rel = std::fabs(y) > 0 ? d / std::fabs(y) : INFINITY;
      }
      e.stats.max_abs = std::max(e.stats.max_abs, d);
      e.stats.max_rel = std::max(e.stats.max_rel, rel);
      e.stats.max_ulp = std::max(e.stats.max_ulp, reference_ulp(out.dtype, x, y, d));
      if (ratio > max_ratio) max_ratio = ratio;  // a NaN ratio (inf / inf) never counts
      if (!(d <= bound)) ++e.finite;
      if (ratio > 0) ranked.push_back({ratio, diff(d, rel)});
    }
    e.stats.elements += static_cast<std::int64_t>(a.size());
  }
  std::stable_sort(ranked.begin(), ranked.end(),
                   [](const Ranked& p, const Ranked& q) { return p.ratio > q.ratio; });
  for (std::size_t k = 0; k < std::min<std::size_t>(5, ranked.size()); ++k)
    e.stats.worst.push_back(ranked[k].diff);
  e.stats.mismatches = e.nonfinite + e.unexpected + e.finite;
  e.stats.tolerance_used = e.nonfinite + e.unexpected > 0 ? INFINITY : max_ratio;
  return e;
}

// Bitwise for doubles (NaN equals NaN), so "the same to the bit" is what is checked.
void expect_same(double got, double want, const char* what) {
  if (std::isnan(want)) {
    EXPECT_TRUE(std::isnan(got)) << what;
  } else {
    EXPECT_EQ(std::bit_cast<std::uint64_t>(got), std::bit_cast<std::uint64_t>(want))
        << what << ": got " << got << ", want " << want;
  }
}

void expect_same(const ElementDiff& got, const ElementDiff& want) {
  EXPECT_EQ(got.output, want.output);
  EXPECT_EQ(got.index, want.index);
  expect_same(got.actual, want.actual, "actual");
  expect_same(got.expected, want.expected, "expected");
  expect_same(got.abs_err, want.abs_err, "abs_err");
  expect_same(got.rel_err, want.rel_err, "rel_err");
}

void expect_matches_reference(const std::vector<std::pair<Tensor, Tensor>>& outputs,
                              const ElementRules& rules, KernelChoice kernels) {
  SCOPED_TRACE(kernels == KernelChoice::fastest ? "fastest kernels"
               : kernels == KernelChoice::avx2  ? "AVX2 kernels"
                                                : "baseline kernels");
  StatsAccumulator acc(rules, kernels);
  for (std::size_t o = 0; o < outputs.size(); ++o) {
    acc.add_output("out" + std::to_string(o), outputs[o].first, outputs[o].second);
  }
  const ErrorStats got = acc.finish();
  const Expected want = reference_stats(outputs, rules);
  EXPECT_EQ(got.elements, want.stats.elements);
  EXPECT_EQ(got.mismatches, want.stats.mismatches);
  EXPECT_EQ(acc.nonfinite_mismatches(), want.nonfinite);
  EXPECT_EQ(acc.unexpected_nonfinite(), want.unexpected);
  EXPECT_EQ(acc.finite_mismatches(), want.finite);
  expect_same(got.max_abs, want.stats.max_abs, "max_abs");
  expect_same(got.max_rel, want.stats.max_rel, "max_rel");
  expect_same(got.max_ulp, want.stats.max_ulp, "max_ulp");
  expect_same(got.tolerance_used, want.stats.tolerance_used, "tolerance_used");
  ASSERT_EQ(got.worst.size(), want.stats.worst.size());
  for (std::size_t k = 0; k < got.worst.size(); ++k) {
    SCOPED_TRACE(testing::Message() << "worst[" << k << "]");
    expect_same(got.worst[k], want.stats.worst[k]);
  }
  ASSERT_EQ(acc.first_nonfinite().has_value(), want.first_nonfinite.has_value());
  if (want.first_nonfinite) expect_same(*acc.first_nonfinite(), *want.first_nonfinite);
  ASSERT_EQ(acc.first_unexpected().has_value(), want.first_unexpected.has_value());
  if (want.first_unexpected) expect_same(*acc.first_unexpected(), *want.first_unexpected);
}

// Random cases: every float output dtype against float64/float32/its own dtype, every layout, sizes
// around the 1024-element chunk, value patterns that exercise each path of the kernels.
enum class Pattern {
  rounding,
  rare_failures,
  nonfinite,
  ties,
  growing,
  huge,
  zeros,
  identical,
  signed_zeros,  // -0 against +0: equal values whose bit patterns are far apart
  tiny,          // subnormal doubles and floats: thresholds whose products fall below DBL_MIN
  wide_errors,   // errors of many ULPs, past the screens' ULP caps, and sign flips
};

std::vector<double> make_reference(std::mt19937_64& gen, std::size_t n, Pattern pattern) {
  std::normal_distribution<double> normal(0.0, 1.0);
  std::vector<double> ref(n);
  for (std::size_t i = 0; i < n; ++i) {
    const double scale = std::pow(10.0, static_cast<double>(gen() % 9) - 6);
    ref[i] = pattern == Pattern::ties ? 0.5 * static_cast<double>(1 + gen() % 3) : normal(gen) * scale;
    if (pattern == Pattern::huge && gen() % 50 == 0) ref[i] = (gen() % 2 ? 1 : -1) * DBL_MAX;
    if (pattern == Pattern::zeros && gen() % 3 == 0) ref[i] = 0.0;
    if (pattern == Pattern::signed_zeros && gen() % 2 == 0) ref[i] = gen() % 2 ? 0.0 : -0.0;
    if (pattern == Pattern::tiny) ref[i] = normal(gen) * (gen() % 2 ? 1e-310 : 1e-40);
  }
  return ref;
}

std::vector<double> make_output(std::mt19937_64& gen, std::vector<double>& ref, Pattern pattern) {
  std::normal_distribution<double> normal(0.0, 1.0);
  std::vector<double> out(ref.size());
  for (std::size_t i = 0; i < ref.size(); ++i) {
    out[i] = ref[i] + normal(gen) * 1e-6 * std::fabs(ref[i]);
    switch (pattern) {
      case Pattern::rare_failures:
        if (gen() % 200 == 0) out[i] = ref[i] * 1.5 + 0.01;
        break;
      case Pattern::nonfinite:
        if (gen() % 150 == 0) {
          const double specials[] = {NAN, INFINITY, -INFINITY};
          (gen() % 2 ? out[i] : ref[i]) = specials[gen() % 3];
        }
        break;
      case Pattern::ties:  // the same few errors over and over: ties decide the worst list's order
        out[i] = ref[i] + 0.25 * static_cast<double>(gen() % 3);
        break;
      case Pattern::growing:  // every element a new maximum and a new worst candidate
        out[i] = ref[i] + 1e-7 * static_cast<double>(i + 1);
        break;
      case Pattern::huge:
        if (std::fabs(ref[i]) == DBL_MAX) out[i] = -ref[i];  // |out - ref| overflows to inf
        break;
      case Pattern::zeros:
        if (ref[i] == 0.0 && gen() % 2 == 0) out[i] = 1e-9 * static_cast<double>(gen() % 3);
        break;
      case Pattern::identical:  // the same bits, NaN/Inf included, except in the chunk from 2048 on
        if (i % 97 == 0) ref[i] = i % 2 ? INFINITY : NAN;
        out[i] = i >= 2048 && i % 300 == 0 ? ref[i] * 1.5 : ref[i];
        break;
      case Pattern::signed_zeros:
        if (ref[i] == 0.0) out[i] = gen() % 3 == 0 ? 1e-30 : -ref[i];
        break;
      case Pattern::tiny:
        out[i] = gen() % 2 ? ref[i] : ref[i] + normal(gen) * 1e-312;
        break;
      case Pattern::wide_errors:
        out[i] = ref[i] * (gen() % 4 == 0 ? -1.0 : 1.0 + static_cast<double>(gen() % 300) / 100.0);
        break;
      case Pattern::rounding:
        break;
    }
  }
  return out;
}

TEST(ElementStats, KernelsMatchThePlainDefinitions) {
  std::mt19937_64 gen(20261123);
  const DType out_dtypes[] = {DType::float32, DType::float64, DType::float16, DType::bfloat16, DType::int32};
  const std::size_t sizes[] = {1, 7, 129, 1023, 1024, 1025, 2048 + 37, 5000};  // blocks are 128, chunks 1024
  const Pattern patterns[] = {Pattern::rounding, Pattern::rare_failures, Pattern::nonfinite,
                              Pattern::ties,     Pattern::growing,       Pattern::huge,
                              Pattern::zeros,    Pattern::identical,     Pattern::signed_zeros,
                              Pattern::tiny,     Pattern::wide_errors};
  int trial = 0;
  for (DType out_dtype : out_dtypes) {
    for (Pattern pattern : patterns) {
      for (std::size_t n : sizes) {
        ++trial;
        std::vector<double> ref = make_reference(gen, n, pattern);
        std::vector<double> out = make_output(gen, ref, pattern);
        const DType ref_dtypes[] = {DType::float64, DType::float32, out_dtype};
        const DType ref_dtype = pattern == Pattern::identical ? out_dtype : ref_dtypes[trial % 3];
        ElementRules rules;
        rules.tolerance = pattern == Pattern::huge ? ToleranceSpec{1e300, 4.0}
                          : trial % 5 == 0         ? ToleranceSpec{0, 0}
                                                   : default_tolerance(out_dtype);
        rules.check_nan = gen() % 2 == 0;
        rules.check_inf = gen() % 2 == 0;
        const tensor::Shape shape = n % 2 == 1 ? tensor::Shape{static_cast<std::int64_t>(n)}
                                               : tensor::Shape{2, static_cast<std::int64_t>(n / 2)};
        const Tensor out_t = Tensor::from_doubles(out_dtype, shape, out);
        const Tensor ref_t = Tensor::from_doubles(ref_dtype, shape, ref);
        for (auto layout :
             {tensor::Layout::contiguous, tensor::Layout::transposed, tensor::Layout::strided}) {
          SCOPED_TRACE(testing::Message()
                       << "trial " << trial << " " << tensor::dtype_name(out_dtype) << " vs "
                       << tensor::dtype_name(ref_dtype) << ", " << n << " elements, pattern "
                       << static_cast<int>(pattern) << ", " << tensor::layout_name(layout));
          for (KernelChoice kernels : {KernelChoice::fastest, KernelChoice::avx2, KernelChoice::baseline}) {
            expect_matches_reference({{tensor::with_layout(out_t, layout), ref_t}}, rules, kernels);
          }
          if (testing::Test::HasFailure()) return;
        }
      }
    }
  }
}

// Long outputs where the pre-checks clear most blocks once the maxima have settled (float16 and
// bfloat16 against float64 and float32 references, float32 against float32), and the wide screen
// runs alone (float32 against float64), failing after a while or not: every kernel copy must still
// give the plain pass's statistics.
TEST(ElementStats, LongOutputsMatchThePlainDefinitionsOverManyChunks) {
  std::mt19937_64 gen(20261124);
  int trial = 0;
  const std::pair<DType, DType> kinds[] = {
      {DType::float16, DType::float64},  {DType::bfloat16, DType::float64}, {DType::float16, DType::float32},
      {DType::bfloat16, DType::float32}, {DType::float32, DType::float32},  {DType::float32, DType::float64}};
  for (const auto& [out_dtype, ref_dtype] : kinds) {
    for (Pattern pattern : {Pattern::rounding, Pattern::rare_failures, Pattern::ties, Pattern::growing,
                            Pattern::signed_zeros, Pattern::wide_errors}) {
      for (std::size_t n : {16u, 17u, 130u, 4096u + 5u, 30000u}) {
        ++trial;
        std::vector<double> ref = make_reference(gen, n, pattern);
        std::vector<double> out = make_output(gen, ref, pattern);
        ElementRules rules;
        rules.tolerance = trial % 4 == 0 ? ToleranceSpec{0, 0} : default_tolerance(out_dtype);
        const tensor::Shape shape = {static_cast<std::int64_t>(n)};
        SCOPED_TRACE(testing::Message() << "trial " << trial << " " << tensor::dtype_name(out_dtype) << " vs "
                                        << tensor::dtype_name(ref_dtype) << ", " << n << " elements, pattern "
                                        << static_cast<int>(pattern));
        for (KernelChoice kernels : {KernelChoice::fastest, KernelChoice::avx2, KernelChoice::baseline}) {
          expect_matches_reference(
              {{Tensor::from_doubles(out_dtype, shape, out), Tensor::from_doubles(ref_dtype, shape, ref)}},
              rules, kernels);
        }
        if (testing::Test::HasFailure()) return;
      }
    }
  }
}

// check_nan / check_inf off relax only the agreement with the reference's own NaN/Inf: an output
// that is all NaN or all +Inf against a finite reference fails in every dtype and on every kernel
// copy (the AVX-512 and AVX2 screens hand NaN/Inf chunks to the precise pass; it must not skip them).
TEST(ElementStats, NonFiniteOutputsAgainstFiniteReferencesFailWithTheChecksOff) {
  std::mt19937_64 gen(7);
  for (DType out_dtype : {DType::float32, DType::float64, DType::float16, DType::bfloat16}) {
    for (DType ref_dtype : {DType::float64, DType::float32, out_dtype}) {
      for (double special : {NAN, INFINITY, -INFINITY}) {
        for (std::size_t n : {5u, 1024u, 3000u}) {
          std::vector<double> ref = make_reference(gen, n, Pattern::rounding);
          const std::vector<double> out(n, special);
          const tensor::Shape shape = {static_cast<std::int64_t>(n)};
          const Tensor out_t = Tensor::from_doubles(out_dtype, shape, out);
          const Tensor ref_t = Tensor::from_doubles(ref_dtype, shape, ref);
          ElementRules rules{default_tolerance(out_dtype)};
          rules.check_nan = false;
          rules.check_inf = false;
          for (KernelChoice kernels : {KernelChoice::fastest, KernelChoice::avx2, KernelChoice::baseline}) {
            SCOPED_TRACE(testing::Message() << tensor::dtype_name(out_dtype) << " vs "
                                            << tensor::dtype_name(ref_dtype) << ", all " << special << ", "
                                            << n << " elements, kernels " << static_cast<int>(kernels));
            StatsAccumulator acc(rules, kernels);
            acc.add_output("out", out_t, ref_t);
            const ErrorStats stats = acc.finish();
            EXPECT_EQ(acc.unexpected_nonfinite(), static_cast<std::int64_t>(n));
            EXPECT_EQ(stats.mismatches, static_cast<std::int64_t>(n));
            EXPECT_EQ(stats.tolerance_used, INFINITY);
          }
          if (testing::Test::HasFailure()) return;
        }
      }
    }
  }
}

// With the checks off the reference's NaN (Inf) need not be matched: those elements are not compared.
TEST(ElementStats, ChecksOffRelaxOnlyAgreementWithTheReferencesNonFinites) {
  const std::vector<double> ref_values = {NAN, INFINITY, -INFINITY, 1.0};
  const std::vector<double> out_values = {2.0, -INFINITY, NAN, 1.0};
  const Tensor ref = Tensor::from_doubles(DType::float64, {4}, ref_values);
  const Tensor out = Tensor::from_doubles(DType::float32, {4}, out_values);
  for (KernelChoice kernels : {KernelChoice::fastest, KernelChoice::avx2, KernelChoice::baseline}) {
    ElementRules rules{default_tolerance(DType::float32)};
    rules.check_nan = false;
    rules.check_inf = false;
    StatsAccumulator relaxed(rules, kernels);
    relaxed.add_output("out", out, ref);
    EXPECT_EQ(relaxed.finish().mismatches, 0);
    rules.check_inf = true;  // the infinities must agree again; the NaN stays relaxed
    StatsAccumulator inf_checked(rules, kernels);
    inf_checked.add_output("out", out, ref);
    EXPECT_EQ(inf_checked.nonfinite_mismatches(), 2);
  }
}

TEST(ElementStats, SeveralOutputsShareOneWorstList) {
  std::mt19937_64 gen(99);
  std::vector<std::pair<Tensor, Tensor>> outputs;
  for (Pattern pattern : {Pattern::growing, Pattern::rare_failures, Pattern::ties, Pattern::nonfinite}) {
    auto ref = make_reference(gen, 3000, pattern);
    const auto out = make_output(gen, ref, pattern);
    outputs.emplace_back(Tensor::from_doubles(DType::float32, {3000}, out),
                         Tensor::from_doubles(DType::float64, {3000}, ref));
  }
  for (KernelChoice kernels : {KernelChoice::fastest, KernelChoice::avx2, KernelChoice::baseline}) {
    expect_matches_reference(outputs, ElementRules{default_tolerance(DType::float32)}, kernels);
  }
}

TEST(ElementStats, EmptyAndEqualOutputsLeaveEverythingAtZero) {
  const Tensor empty = Tensor::from_doubles(DType::float32, {0}, {});
  const std::vector<double> values(3000, 0.25);
  const Tensor same = Tensor::from_doubles(DType::float16, {3000}, values);
  StatsAccumulator acc(ElementRules{default_tolerance(DType::float16)});
  acc.add_output("empty", empty, empty);
  acc.add_output("same", same, Tensor::from_doubles(DType::float64, {3000}, values));
  const ErrorStats s = acc.finish();
  EXPECT_EQ(s.elements, 3000);
  EXPECT_EQ(s.mismatches, 0);
  EXPECT_EQ(s.max_abs, 0.0);
  EXPECT_EQ(s.max_ulp, 0.0);
  EXPECT_EQ(s.tolerance_used, 0.0);
  EXPECT_TRUE(s.worst.empty());
}

}  // namespace
}  // namespace gpuemu::check
