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

#include "check/element_kernels.hpp"
#include "check/element_stats.hpp"
#include "check/half_precheck_avx512.hpp"
#include "check/ulp16.hpp"
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
        if (!(std::isnan(y) ? std::isnan(x) : x == y)) {
          ++e.nonfinite;
          if (!e.first_nonfinite) e.first_nonfinite = diff(INFINITY, INFINITY);
          ranked.push_back({INFINITY, diff(INFINITY, INFINITY)});
        }
        continue;
      }
      if (!std::isfinite(x)) {
        if (std::isnan(x) ? rules.check_nan : rules.check_inf) {
          ++e.unexpected;
          if (!e.first_unexpected) e.first_unexpected = diff(INFINITY, INFINITY);
          ranked.push_back({INFINITY, diff(INFINITY, INFINITY)});
        }
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
enum class Pattern { rounding, rare_failures, nonfinite, ties, growing, huge, zeros, identical };

std::vector<double> make_reference(std::mt19937_64& gen, std::size_t n, Pattern pattern) {
  std::normal_distribution<double> normal(0.0, 1.0);
  std::vector<double> ref(n);
  for (std::size_t i = 0; i < n; ++i) {
    const double scale = std::pow(10.0, static_cast<double>(gen() % 9) - 6);
    ref[i] = pattern == Pattern::ties ? 0.5 * static_cast<double>(1 + gen() % 3) : normal(gen) * scale;
    if (pattern == Pattern::huge && gen() % 50 == 0) ref[i] = (gen() % 2 ? 1 : -1) * DBL_MAX;
    if (pattern == Pattern::zeros && gen() % 3 == 0) ref[i] = 0.0;
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
                              Pattern::zeros,    Pattern::identical};
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

// The screen's bfloat16 ULP test rounds through float: it must flag every element whose exact
// distance exceeds max_ulp, including values just beside a midpoint that float rounding lands on.
TEST(ElementStats, Bf16ScreenFlagsEveryElementBeyondMaxUlp) {
  std::mt19937_64 gen(5);
  std::vector<double> values;
  for (int e = -140; e <= 128; ++e) {
    for (int k = 0; k < 4; ++k) {
      const double quantum = std::ldexp(1.0, e - 7);
      const double mid = std::ldexp(1.0, e) + (k + 0.5) * quantum;  // a bfloat16 midpoint
      for (double v : {mid, std::nextafter(mid, 0.0), std::nextafter(mid, 1e308), mid * (1 + 1e-12),
                       mid * (1 - 1e-12)}) {
        values.push_back(v);
        values.push_back(-v);
      }
    }
  }
  std::uniform_real_distribution<double> exponent(-140.0, 130.0);
  for (int i = 0; i < 100000; ++i) values.push_back((gen() & 1 ? -1.0 : 1.0) * std::exp2(exponent(gen)));
  values.push_back(std::numeric_limits<double>::max());
  values.push_back(0.0);
  values.push_back(-0.0);
  for (std::size_t i = 0; i < values.size(); ++i) {
    const double y = values[i];
    const auto exact_y = static_cast<std::int32_t>(ordered_small<7, 8>(y));
    // Outputs at, beside and far from the exact rounding, and a random one.
    const std::int32_t outputs[] = {
        exact_y, exact_y + 1, exact_y - 2,
        static_cast<std::int32_t>(ordered_small<7, 8>(values[gen() % values.size()]))};
    for (std::int32_t ox : outputs) {
      for (std::int32_t max_ulp : {0, 1, 3}) {
        const std::int32_t distance = std::abs(ox - exact_y);
        if (distance > max_ulp) {
          ASSERT_TRUE(kernels::bf16_ulp_may_exceed(ox, y, max_ulp))
              << y << " ox " << ox << " max_ulp " << max_ulp;
        }
      }
    }
  }
}

#if defined(__x86_64__) && defined(__GNUC__)
[[gnu::target("avx2,f16c")]] std::uint32_t f16_prepass_on(const std::uint16_t* out, const double* ref,
                                                          std::size_t n, std::int32_t max_ulp, float* out_f) {
  return kernels::f16_prepass(reinterpret_cast<const std::byte*>(out),
                              kernels::Raw<double>{reinterpret_cast<const std::byte*>(ref)}, n, max_ulp,
                              out_f);
}

// The float16 prepass rounds the reference through float (vcvtps2ph): it must decode outputs exactly
// and flag every element whose exact distance exceeds max_ulp, midpoints and subnormals included,
// in the vector loop and in the tail.
TEST(ElementStats, F16PrepassFlagsEveryElementBeyondMaxUlp) {
  __builtin_cpu_init();
  if (!__builtin_cpu_supports("avx2") || !__builtin_cpu_supports("f16c")) GTEST_SKIP() << "no AVX2/F16C";
  std::mt19937_64 gen(16);
  std::vector<double> values;
  for (int e = -25; e <= 16; ++e) {
    for (int k = 0; k < 4; ++k) {
      const double quantum = std::ldexp(1.0, std::max(e, -14) - 10);
      const double mid = std::ldexp(1.0, e) + (k + 0.5) * quantum;  // a float16 midpoint (or beyond)
      for (double v : {mid, std::nextafter(mid, 0.0), std::nextafter(mid, 1e308), mid * (1 + 1e-12),
                       mid * (1 - 1e-12), std::ldexp(1.0, e), 65519.999, 65520.0}) {
        values.push_back(v);
        values.push_back(-v);
      }
    }
  }
  std::uniform_real_distribution<double> exponent(-27.0, 17.0);
  for (int i = 0; i < 50000; ++i) values.push_back((gen() & 1 ? -1.0 : 1.0) * std::exp2(exponent(gen)));
  values.push_back(0.0);
  values.push_back(-0.0);
  const auto bits_of = [](std::int32_t ordered) {
    return static_cast<std::uint16_t>(ordered >= 0 ? ordered : 0x8000 | -ordered);
  };
  for (std::size_t i = 0; i < values.size(); ++i) {
    const double y = values[i];
    const auto exact_y = static_cast<std::int32_t>(ordered_small<10, 5>(y));
    const std::int32_t outputs[] = {
        exact_y, exact_y + 1, exact_y - 2,
        static_cast<std::int32_t>(ordered_small<10, 5>(values[gen() % values.size()]))};
    for (std::int32_t ox : outputs) {
      if (std::abs(ox) > 0x7C00) continue;  // not a float16 value (beyond Inf)
      for (std::int32_t max_ulp : {0, 1, 3}) {
        // The element alone (the tail path), and in lane i % 8 of eight otherwise exact pairs.
        std::uint16_t out[8] = {};
        double ref[8] = {};
        float decoded[8];
        const std::size_t lane = i % 8;
        out[lane] = bits_of(ox);
        ref[lane] = y;
        const bool beyond = std::abs(ox - exact_y) > max_ulp;
        const std::uint32_t alone = f16_prepass_on(out + lane, ref + lane, 1, max_ulp, decoded);
        ASSERT_EQ(decoded[0], static_cast<float>(tensor::f16_to_double(out[lane]))) << out[lane];
        const std::uint32_t eight = f16_prepass_on(out, ref, 8, max_ulp, decoded);
        if (beyond) {
          ASSERT_EQ(alone, 1u) << y << " ox " << ox << " max_ulp " << max_ulp;
          ASSERT_EQ(eight, 1u) << y << " ox " << ox << " max_ulp " << max_ulp;
        }
      }
    }
  }
}
#endif

// The float32 pre-check clears blocks in float arithmetic: a block it clears must be one the double
// screen neither flags nor counts a failure or NaN/Inf in, with every threshold set exactly at,
// just below and just above the element's own values (subnormals, huge values, NaN/Inf included).
TEST(ElementStats, F32PrecheckClearsOnlyWhatTheScreenClears) {
  std::mt19937_64 gen(32);
  std::uniform_real_distribution<double> exponent(-160.0, 128.0);
  const auto random_float = [&] {
    const std::uint64_t pick = gen() % 16;
    if (pick == 0) return std::bit_cast<float>(static_cast<std::uint32_t>(gen()));  // any bits, NaN too
    if (pick == 1) return (gen() & 1 ? -1.0f : 1.0f) * std::numeric_limits<float>::infinity();
    if (pick == 2) return std::bit_cast<float>(static_cast<std::uint32_t>(gen() % 0x800000));  // subnormal
    return static_cast<float>((gen() & 1 ? -1.0 : 1.0) * std::exp2(exponent(gen)));
  };
  const double tolerances[] = {0, 1e-45, 1e-8, 1e-5, 1e-3, 1.0, 1e30, 1e300};
  int cleared = 0;
  for (int trial = 0; trial < 1000000; ++trial) {
    float x = random_float(), y = random_float();
    const std::uint64_t relation = gen() % 4;
    if (relation == 1) x = std::nextafter(y, x);  // 1 ULP apart
    if (relation == 3) x = y;
    if (relation == 2)
      x = std::bit_cast<float>(static_cast<std::uint32_t>(std::bit_cast<std::uint32_t>(y) + gen() % 64));
    const double d = std::fabs(static_cast<double>(x) - y), ay = std::fabs(static_cast<double>(y));
    const double atol = tolerances[gen() % 8], rtol = tolerances[gen() % 8];
    const double bound = atol + rtol * ay;
    const auto near = [&](double v) {  // v, one step either side, just beyond the margins, unrelated
      switch (gen() % 7) {
        case 0:
          return v;
        case 1:
          return std::nextafter(v, 0.0);
        case 2:
          return std::nextafter(v, INFINITY);
        case 3:
          return v * (1 + 0x1p-19);
        case 4:
          return v * (1 + 0x1p-17);
        case 5:
          return v * 4;
        default:
          return std::exp2(exponent(gen));
      }
    };
    const kernels::Screen screen{atol,
                                 rtol,
                                 gen() % 8 == 0 ? 0.0 : near(d / bound / kernels::kSlack),
                                 near(d),
                                 gen() % 8 == 0 ? 0.0 : near(d / ay / kernels::kSlack),
                                 gen() % 2 ? static_cast<double>(gen() % 4) : 1e9};
    const kernels::Raw<float> out{reinterpret_cast<const std::byte*>(&x)};
    const kernels::Raw<float> ref{reinterpret_cast<const std::byte*>(&y)};
    const kernels::FloatScreen fs = kernels::float_screen(screen);
    if (!fs.usable || kernels::f32_precheck_body(out, ref, 1, fs) != 0) continue;
    ++cleared;
    const kernels::ScreenResult r = kernels::screen_body<kernels::UlpMode::f32>(out, ref, 1, screen);
    ASSERT_EQ(r.flagged_blocks, 0u) << x << " vs " << y << " atol " << atol << " rtol " << rtol;
    ASSERT_EQ(r.failures, 0) << x << " vs " << y << " atol " << atol << " rtol " << rtol;
    ASSERT_FALSE(r.nonfinite) << x << " vs " << y;
  }
  EXPECT_GT(cleared, 5000);  // the test exercises clearing, not only fall-backs
}

TEST(ElementStats, Bf16PrecheckClearsOnlyWhatTheScreenClears) {
  std::mt19937_64 gen(16);
  std::uniform_real_distribution<double> exponent(-160.0, 130.0);
  const auto random_double = [&] {
    switch (gen() % 16) {
      case 0:
        return std::bit_cast<double>(static_cast<std::uint64_t>(gen()));  // any bits, NaN too
      case 1:
        return (gen() & 1 ? -1.0 : 1.0) * std::numeric_limits<double>::infinity();
      case 2:
        return std::bit_cast<float>(static_cast<std::uint32_t>(gen() % 0x800000)) * 1.0;  // float subnormal
      case 3:
        return (gen() & 1 ? -1.0 : 1.0) * std::exp2(-140.0 - static_cast<double>(gen() % 20));
      case 4:
        return (gen() & 1 ? -1.0 : 1.0) * FLT_MAX * (1 + std::exp2(-24.0 - static_cast<double>(gen() % 3)));
      default:
        return (gen() & 1 ? -1.0 : 1.0) * std::exp2(exponent(gen));
    }
  };
  const double tolerances[] = {0, 1e-45, 1e-8, 1e-5, 1e-3, 1.0, 1e30, 1e300};
  int cleared = 0;
  for (int trial = 0; trial < 1000000; ++trial) {
    double y = random_double();
    std::uint16_t bits = static_cast<std::uint16_t>(gen());
    switch (gen() % 6) {
      case 0:  // the output is the reference rounded to bfloat16, the reference a little off it
      case 1:
        bits = static_cast<std::uint16_t>(std::bit_cast<std::uint32_t>(static_cast<float>(y)) >> 16);
        y *= 1 + std::ldexp(static_cast<double>(gen() % 1024) - 512, -static_cast<int>(8 + gen() % 40));
        break;
      case 2: {  // the reference a bfloat16 midpoint, or one float step either side of one
        const double x = bf16_bits_to_double(bits), next = bf16_bits_to_double(bits + 1);
        const double mid = (x + next) / 2;
        const double steps[] = {mid, static_cast<double>(std::nextafter(static_cast<float>(mid), 0.0f)),
                                static_cast<double>(std::nextafter(static_cast<float>(mid), INFINITY)),
                                std::nextafter(mid, 0.0), std::nextafter(mid, INFINITY)};
        y = steps[gen() % 5];
        break;
      }
      case 3:
        y = bf16_bits_to_double(bits);
        break;
      default:
        break;
    }
    const double x = bf16_bits_to_double(bits);
    const double d = std::fabs(x - y), ay = std::fabs(y);
    const double atol = tolerances[gen() % 8], rtol = tolerances[gen() % 8];
    const double bound = atol + rtol * ay;
    const auto near = [&](double v) {  // v, one step either side, inside and past the margins, unrelated
      switch (gen() % 9) {
        case 0:
          return v;
        case 1:
          return std::nextafter(v, 0.0);
        case 2:
          return std::nextafter(v, INFINITY);
        case 3:
          return v * (1 + 0x1p-22);
        case 4:
          return v * (1 + 0x1p-19);
        case 5:
          return v * (1 + 0x1p-17);
        case 6:
          return v * (1 + 0x1p-23) + 0x1p-126;
        case 7:
          return v * 4;
        default:
          return std::exp2(exponent(gen));
      }
    };
    const double ulp = ulp_bf16_inline(x, y);
    const kernels::Screen screen{
        atol,
        rtol,
        gen() % 8 == 0 ? 0.0 : near(d / bound / kernels::kSlack),
        near(d),
        gen() % 8 == 0 ? 0.0 : near(d / ay / kernels::kSlack),
        gen() % 2 ? static_cast<double>(gen() % 4)
                  : (std::isfinite(ulp) ? std::max(0.0, ulp + static_cast<double>(gen() % 3) - 1) : 1e9)};
    const kernels::RawBF16 out{reinterpret_cast<const std::byte*>(&bits)};
    const kernels::Raw<double> ref{reinterpret_cast<const std::byte*>(&y)};
    const kernels::FloatScreen fs = kernels::float_screen(screen);
    if (!fs.usable || kernels::half_precheck_body<true>(out, ref, 1, fs) != 0) continue;
    ++cleared;
    const kernels::ScreenResult r = kernels::screen_body<kernels::UlpMode::bf16>(out, ref, 1, screen);
    ASSERT_EQ(r.flagged_blocks, 0u) << x << " vs " << y << " atol " << atol << " rtol " << rtol;
    ASSERT_EQ(r.failures, 0) << x << " vs " << y << " atol " << atol << " rtol " << rtol;
    ASSERT_FALSE(r.nonfinite) << x << " vs " << y;
  }
  // The test exercises clearing, not only fall-backs (fewer clear than for float32: max_abs near the
  // pair's own difference never clears here, the reference being rounded to float).
  EXPECT_GT(cleared, 500);
}

// Long float16/bfloat16 outputs against float64 references, where the pre-check clears most blocks
// once the maxima have settled: every kernel copy must still give the plain pass's statistics.
TEST(ElementStats, HalfOutputsAgainstDoublesMatchThePlainDefinitionsOverManyChunks) {
  std::mt19937_64 gen(20261124);
  int trial = 0;
  for (DType out_dtype : {DType::float16, DType::bfloat16}) {
    for (Pattern pattern : {Pattern::rounding, Pattern::rare_failures, Pattern::ties, Pattern::growing}) {
      for (std::size_t n : {16u, 17u, 130u, 4096u + 5u, 30000u}) {
        ++trial;
        std::vector<double> ref = make_reference(gen, n, pattern);
        std::vector<double> out = make_output(gen, ref, pattern);
        ElementRules rules;
        rules.tolerance = trial % 4 == 0 ? ToleranceSpec{0, 0} : default_tolerance(out_dtype);
        const tensor::Shape shape = {static_cast<std::int64_t>(n)};
        SCOPED_TRACE(testing::Message() << "trial " << trial << " " << tensor::dtype_name(out_dtype) << ", "
                                        << n << " elements, pattern " << static_cast<int>(pattern));
        for (KernelChoice kernels : {KernelChoice::fastest, KernelChoice::avx2, KernelChoice::baseline}) {
          expect_matches_reference({{Tensor::from_doubles(out_dtype, shape, out),
                                     Tensor::from_doubles(DType::float64, shape, ref)}},
                                   rules, kernels);
        }
        if (testing::Test::HasFailure()) return;
      }
    }
  }
}

#if defined(__x86_64__) && defined(__GNUC__)
template <bool kBf16>
[[gnu::target("avx2,f16c,avx512f,avx512vl,avx512dq,avx512bw")]] std::uint32_t half_precheck_avx512_on(
    const std::uint16_t* out, const double* ref, std::size_t n, const kernels::FloatScreen& f) {
  return kernels::half_precheck_avx512<kBf16>(reinterpret_cast<const std::byte*>(out), ref, n, f);
}

template <bool kBf16>
[[gnu::target("avx2,f16c,avx512f,avx512vl,avx512dq,avx512bw,popcnt")]] std::uint32_t
half_precheck_counting_on(const std::uint16_t* out, const double* ref, std::size_t n,
                          const kernels::FloatScreen& f, std::int64_t* failures) {
  return kernels::half_precheck_avx512<kBf16, true>(reinterpret_cast<const std::byte*>(out), ref, n, f,
                                                    failures);
}

// The AVX-512 pre-check (both 16-bit types) clears an element only where the screen neither flags
// it nor counts a failure or NaN/Inf, with every threshold at, beside and beyond the element's own
// values; and it decides the same for an element alone (the masked tail), in every lane of a full
// vector, and in a block of 16 + 16 + 8. Its counting form may also clear an element the screen
// counts as a failure, and then must count the same failures.
template <bool kBf16>
void expect_half_precheck_clears_only_what_the_screen_clears() {
  std::mt19937_64 gen(kBf16 ? 1616 : 1610);
  std::uniform_real_distribution<double> exponent(kBf16 ? -160.0 : -30.0, kBf16 ? 130.0 : 17.0);
  const auto to_double = [](std::uint16_t bits) {
    return kBf16 ? tensor::bf16_to_double(bits) : tensor::f16_to_double(bits);
  };
  const auto to_bits = [](double v) { return kBf16 ? tensor::double_to_bf16(v) : tensor::double_to_f16(v); };
  const auto random_double = [&] {
    switch (gen() % 16) {
      case 0:
        return std::bit_cast<double>(static_cast<std::uint64_t>(gen()));  // any bits, NaN too
      case 1:
        return (gen() & 1 ? -1.0 : 1.0) * std::numeric_limits<double>::infinity();
      case 2:
        return std::bit_cast<float>(static_cast<std::uint32_t>(gen() % 0x800000)) * 1.0;  // float subnormal
      case 3:  // float16 subnormals and float32 values near FLT_MIN
        return (gen() & 1 ? -1.0 : 1.0) *
               std::exp2((kBf16 ? -140.0 : -14.0) - static_cast<double>(gen() % 20));
      case 4:  // just beyond the largest finite value of the output type, and of float
        return (gen() & 1 ? -1.0 : 1.0) * (gen() % 2 ? 65504.0 : FLT_MAX) *
               (1 + std::exp2(-11.0 - static_cast<double>(gen() % 16)));
      default:
        return (gen() & 1 ? -1.0 : 1.0) * std::exp2(exponent(gen));
    }
  };
  const double tolerances[] = {0, 1e-45, 1e-8, 1e-5, 1e-3, 1.0, 1e30, 1e300};
  int cleared = 0, cleared_failing = 0;
  for (int trial = 0; trial < 1000000; ++trial) {
    double y = random_double();
    auto bits = static_cast<std::uint16_t>(gen());
    switch (gen() % 6) {
      case 0:  // the output is the reference rounded, the reference a little off it
      case 1:
        bits = to_bits(y);
        y *= 1 + std::ldexp(static_cast<double>(gen() % 1024) - 512,
                            -static_cast<int>((kBf16 ? 8 : 11) + gen() % 40));
        break;
      case 2: {  // the reference a midpoint of the output type, or one float or double step beside it
        const double x = to_double(bits), next = to_double(static_cast<std::uint16_t>(bits + 1));
        const double mid = (x + next) / 2;
        const double steps[] = {mid, static_cast<double>(std::nextafter(static_cast<float>(mid), 0.0f)),
                                static_cast<double>(std::nextafter(static_cast<float>(mid), INFINITY)),
                                std::nextafter(mid, 0.0), std::nextafter(mid, INFINITY)};
        y = steps[gen() % 5];
        break;
      }
      case 3:
        y = to_double(bits);
        break;
      default:
        break;
    }
    const double x = to_double(bits);
    const double d = std::fabs(x - y), ay = std::fabs(y);
    double atol = tolerances[gen() % 8], rtol = tolerances[gen() % 8];
    if (gen() % 4 == 0 && ay > 0 && std::isfinite(d / ay)) {  // the bound at, beside or past |x - y|
      atol = 0;
      const double steps[] = {d / ay,
                              std::nextafter(d / ay, 0.0),
                              std::nextafter(d / ay, INFINITY),
                              d / ay * (1 + 0x1p-21),
                              d / ay * (1 - 0x1p-21),
                              d / ay * (1 + 0x1p-18),
                              d / ay * (1 - 0x1p-18)};
      rtol = steps[gen() % 7];
    }
    const double bound = atol + rtol * ay;
    const auto near = [&](double v) {  // v, one step either side, inside and past the margins, unrelated
      switch (gen() % 9) {
        case 0:
          return v;
        case 1:
          return std::nextafter(v, 0.0);
        case 2:
          return std::nextafter(v, INFINITY);
        case 3:
          return v * (1 + 0x1p-22);
        case 4:
          return v * (1 + 0x1p-19);
        case 5:
          return v * (1 + 0x1p-17);
        case 6:
          return v * (1 + 0x1p-23) + 0x1p-126;
        case 7:
          return v * 4;
        default:
          return std::exp2(exponent(gen));
      }
    };
    const double ulp = kBf16 ? ulp_bf16_inline(x, y) : ulp_f16_inline(x, y);
    const kernels::Screen screen{
        atol,
        rtol,
        gen() % 8 == 0 ? 0.0 : near(d / bound / kernels::kSlack),
        near(d),
        gen() % 8 == 0 ? 0.0 : near(d / ay / kernels::kSlack),
        gen() % 2 ? static_cast<double>(gen() % 4)
                  : (std::isfinite(ulp) ? std::max(0.0, ulp + static_cast<double>(gen() % 3) - 1) : 1e9)};
    const kernels::FloatScreen fs = kernels::float_screen(screen);
    if (!fs.usable) continue;
    const std::uint32_t alone = half_precheck_avx512_on<kBf16>(&bits, &y, 1, fs);
    // The same pair in all 40 lanes: two full vectors and a masked tail of 8 in one block.
    std::uint16_t outs[40];
    double refs[40];
    std::fill(std::begin(outs), std::end(outs), bits);
    std::fill(std::begin(refs), std::end(refs), y);
    ASSERT_EQ(half_precheck_avx512_on<kBf16>(outs, refs, 16, fs), alone) << x << " vs " << y;
    ASSERT_EQ(half_precheck_avx512_on<kBf16>(outs, refs, 40, fs), alone) << x << " vs " << y;
    std::int64_t counted = 0, counted40 = 0;
    const std::uint32_t counting = half_precheck_counting_on<kBf16>(&bits, &y, 1, fs, &counted);
    ASSERT_EQ(half_precheck_counting_on<kBf16>(outs, refs, 40, fs, &counted40), counting) << x << " vs " << y;
    ASSERT_EQ(counted40, 40 * counted) << x << " vs " << y;
    if (alone == 0) {  // what the plain form clears, the counting form clears without a failure
      ASSERT_EQ(counting, 0u) << x << " vs " << y;
      ASSERT_EQ(counted, 0) << x << " vs " << y;
    }
    if (counting != 0) {
      ASSERT_EQ(counted, 0) << "an open block's failures are the screen's to count";
      continue;
    }
    ++(counted != 0 ? cleared_failing : cleared);
    using Out = std::conditional_t<kBf16, kernels::RawBF16, kernels::RawF16>;
    constexpr auto kMode = kBf16 ? kernels::UlpMode::bf16 : kernels::UlpMode::f16;
    const kernels::ScreenResult r =
        kernels::screen_body<kMode>(Out{reinterpret_cast<const std::byte*>(&bits)},
                                    kernels::Raw<double>{reinterpret_cast<const std::byte*>(&y)}, 1, screen);
    ASSERT_EQ(r.flagged_blocks, 0u) << x << " vs " << y << " atol " << atol << " rtol " << rtol << " max_ulp "
                                    << screen.max_ulp;
    ASSERT_EQ(r.failures, counted) << x << " vs " << y << " atol " << atol << " rtol " << rtol;
    ASSERT_FALSE(r.nonfinite) << x << " vs " << y;
  }
  // The test exercises clearing, of passing and of failing elements, not only fall-backs.
  EXPECT_GT(cleared, 500);
  EXPECT_GT(cleared_failing, 200);
}

TEST(ElementStats, HalfPrecheckAvx512ClearsOnlyWhatTheScreenClears) {
  __builtin_cpu_init();
  if (!__builtin_cpu_supports("avx512f") || !__builtin_cpu_supports("avx512vl") ||
      !__builtin_cpu_supports("avx512dq") || !__builtin_cpu_supports("avx512bw") ||
      !__builtin_cpu_supports("f16c")) {
    GTEST_SKIP() << "no AVX-512 (F/VL/DQ/BW) and F16C";
  }
  {
    SCOPED_TRACE("float16");
    expect_half_precheck_clears_only_what_the_screen_clears<false>();
  }
  {
    SCOPED_TRACE("bfloat16");
    expect_half_precheck_clears_only_what_the_screen_clears<true>();
  }
}

// A block is open when any of its elements is: one element that the pre-check cannot clear, in
// any position of a block of otherwise clear pairs, opens that block and no other.
TEST(ElementStats, HalfPrecheckAvx512OpensTheBlockOfItsElement) {
  __builtin_cpu_init();
  if (!__builtin_cpu_supports("avx512f") || !__builtin_cpu_supports("avx512vl") ||
      !__builtin_cpu_supports("avx512dq") || !__builtin_cpu_supports("avx512bw") ||
      !__builtin_cpu_supports("f16c")) {
    GTEST_SKIP() << "no AVX-512 (F/VL/DQ/BW) and F16C";
  }
  const kernels::Screen screen{1e-3, 1e-3, 1.0, 1e-2, 1e-2, 4.0};
  const kernels::FloatScreen fs = kernels::float_screen(screen);
  ASSERT_TRUE(fs.usable);
  for (std::size_t n : {1u, 15u, 16u, 17u, 127u, 128u, 129u, 300u, 1024u}) {
    std::vector<double> ref(n);
    for (std::size_t i = 0; i < n; ++i) ref[i] = 0.25 + 0.001 * static_cast<double>(i % 97);
    std::vector<std::uint16_t> f16(n), bf16(n);
    for (std::size_t i = 0; i < n; ++i) {
      f16[i] = tensor::double_to_f16(ref[i]);
      bf16[i] = tensor::double_to_bf16(ref[i]);
    }
    ASSERT_EQ(half_precheck_avx512_on<false>(f16.data(), ref.data(), n, fs), 0u) << n;
    ASSERT_EQ(half_precheck_avx512_on<true>(bf16.data(), ref.data(), n, fs), 0u) << n;
    // References that are float16 values themselves look like midpoints to the first pass (their
    // low bits are zero); the exact test clears them.
    std::vector<double> exact(n);
    for (std::size_t i = 0; i < n; ++i) exact[i] = tensor::f16_to_double(f16[i]);
    ASSERT_EQ(half_precheck_avx512_on<false>(f16.data(), exact.data(), n, fs), 0u) << n;
    for (std::size_t bad = 0; bad < n; bad += 1 + n / 40) {
      const double kept = ref[bad];
      ref[bad] = kept * 1.5;  // beyond max_abs, the bound and max_rel
      const std::uint32_t block = std::uint32_t{1} << (bad / kernels::kBlock);
      EXPECT_EQ(half_precheck_avx512_on<false>(f16.data(), ref.data(), n, fs), block) << n << " at " << bad;
      EXPECT_EQ(half_precheck_avx512_on<true>(bf16.data(), ref.data(), n, fs), block) << n << " at " << bad;
      ref[bad] = std::numeric_limits<double>::quiet_NaN();
      EXPECT_EQ(half_precheck_avx512_on<false>(f16.data(), ref.data(), n, fs), block)
          << n << " NaN at " << bad;
      EXPECT_EQ(half_precheck_avx512_on<true>(bf16.data(), ref.data(), n, fs), block)
          << n << " NaN at " << bad;
      ref[bad] = kept;
    }
  }
}
#endif

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
