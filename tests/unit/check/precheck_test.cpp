// The comparison's pre-checks and prepasses (float32 and 16-bit pre-checks, the float16 prepass, the
// screen's bfloat16 ULP test): whatever they clear must be what the exact screen clears, and they
// must flag every element the exact definitions would, at the edges of every margin.
#include <gtest/gtest.h>

#include <algorithm>
#include <bit>
#include <cfloat>
#include <cmath>
#include <iterator>
#include <limits>
#include <random>
#include <type_traits>
#include <utility>
#include <vector>

#include "check/simd/element_kernels.hpp"
#include "check/simd/float_precheck.hpp"
#include "check/simd/half_precheck_avx2.hpp"
#include "check/simd/ulp16.hpp"
#include "screen_cases.hpp"
#include "tensor/half.hpp"

namespace gpuemu::check {
namespace {

using testing_cases::for_each_half_case;
using testing_cases::threshold_near;

// The screen's bfloat16 ULP test rounds through float: it must flag every element whose exact
// distance exceeds max_ulp, including values just beside a midpoint that float rounding lands on.
TEST(Prechecks, Bf16ScreenFlagsEveryElementBeyondMaxUlp) {
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
TEST(Prechecks, F16PrepassFlagsEveryElementBeyondMaxUlp) {
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
TEST(Prechecks, F32PrecheckClearsOnlyWhatTheScreenClears) {
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
    const auto near = [&](double v) { return threshold_near(gen, exponent, v); };
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

// The portable 16-bit pre-check (GCC's vectorisation; the AVX2 and baseline copies run it for
// bfloat16) clears a pair only where the screen neither flags it nor counts a failure or NaN/Inf.
TEST(Prechecks, Bf16PrecheckClearsOnlyWhatTheScreenClears) {
  int cleared = 0;
  for_each_half_case<true>(1000000, [&](std::uint16_t bits, double y, const kernels::Screen& screen) {
    const kernels::RawBF16 out{reinterpret_cast<const std::byte*>(&bits)};
    const kernels::Raw<double> ref{reinterpret_cast<const std::byte*>(&y)};
    const kernels::FloatScreen fs = kernels::float_screen(screen);
    if (!fs.usable || kernels::half_precheck_body<true>(out, ref, 1, fs) != 0) return true;
    ++cleared;
    const kernels::ScreenResult r = kernels::screen_body<kernels::UlpMode::bf16>(out, ref, 1, screen);
    EXPECT_EQ(r.flagged_blocks, 0u) << bits << " vs " << y;
    EXPECT_EQ(r.failures, 0) << bits << " vs " << y;
    EXPECT_FALSE(r.nonfinite) << bits << " vs " << y;
    return !testing::Test::HasFailure();
  });
  // The test exercises clearing, not only fall-backs (fewer clear than for float32: max_abs near the
  // pair's own difference never clears here, the reference being rounded to float).
  EXPECT_GT(cleared, 500);
}

#if defined(__x86_64__) && defined(__GNUC__)
// The AVX2 intrinsics copy of the 16-bit pre-check, plain (failures null) and counting (the AVX-512
// CPUs take narrow_precheck_avx512.hpp instead: narrow_precheck_avx512_test.cpp).
template <bool kBf16>
[[gnu::target("avx2,f16c,popcnt")]] std::uint32_t precheck_on(const std::uint16_t* out, const double* ref,
                                                              std::size_t n, const kernels::FloatScreen& f,
                                                              std::int64_t* failures = nullptr) {
  const auto* bytes = reinterpret_cast<const std::byte*>(out);
  return failures != nullptr ? kernels::half_precheck_avx2<kBf16, true>(bytes, ref, n, f, failures)
                             : kernels::half_precheck_avx2<kBf16>(bytes, ref, n, f);
}

bool has_avx2_f16c() {
  __builtin_cpu_init();
  return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("f16c");
}

// The intrinsics pre-check (both 16-bit types) clears an element only where the screen neither
// flags it nor counts a failure or NaN/Inf, with every threshold at, beside and beyond the
// element's own values; and it decides the same for an element alone (the tail), in every lane of
// full vectors, and in a 45-element block (5 x 8 + 5). Its counting form may also clear an
// element the screen counts as a failure, and then must count the same failures.
template <bool kBf16>
void expect_half_precheck_clears_only_what_the_screen_clears() {
  int cleared = 0, cleared_failing = 0;
  // One pair's checks; false on the first failure (EXPECT_* inside, so the loop can stop).
  const auto check = [&](std::uint16_t bits, double y, const kernels::Screen& screen) {
    const double x = kBf16 ? tensor::bf16_to_double(bits) : tensor::f16_to_double(bits);
    const kernels::FloatScreen fs = kernels::float_screen(screen);
    if (!fs.usable) return true;
    const std::uint32_t alone = precheck_on<kBf16>(&bits, &y, 1, fs);
    // The same pair in all 45 lanes of one block: full vectors and a tail.
    std::uint16_t outs[45];
    double refs[45];
    std::fill(std::begin(outs), std::end(outs), bits);
    std::fill(std::begin(refs), std::end(refs), y);
    EXPECT_EQ(precheck_on<kBf16>(outs, refs, 16, fs), alone) << x << " vs " << y;
    EXPECT_EQ(precheck_on<kBf16>(outs, refs, 45, fs), alone) << x << " vs " << y;
    std::int64_t counted = 0, counted45 = 0;
    const std::uint32_t counting = precheck_on<kBf16>(&bits, &y, 1, fs, &counted);
    EXPECT_EQ(precheck_on<kBf16>(outs, refs, 45, fs, &counted45), counting) << x << " vs " << y;
    EXPECT_EQ(counted45, 45 * counted) << x << " vs " << y;
    if (alone == 0) {  // what the plain form clears, the counting form clears without a failure
      EXPECT_EQ(counting, 0u) << x << " vs " << y;
      EXPECT_EQ(counted, 0) << x << " vs " << y;
    }
    if (counting != 0) {
      EXPECT_EQ(counted, 0) << "an open block's failures are the screen's to count";
      return !testing::Test::HasFailure();
    }
    ++(counted != 0 ? cleared_failing : cleared);
    using Out = std::conditional_t<kBf16, kernels::RawBF16, kernels::RawF16>;
    constexpr auto kMode = kBf16 ? kernels::UlpMode::bf16 : kernels::UlpMode::f16;
    const kernels::ScreenResult r =
        kernels::screen_body<kMode>(Out{reinterpret_cast<const std::byte*>(&bits)},
                                    kernels::Raw<double>{reinterpret_cast<const std::byte*>(&y)}, 1, screen);
    EXPECT_EQ(r.flagged_blocks, 0u) << x << " vs " << y << " atol " << screen.atol << " rtol " << screen.rtol
                                    << " max_ulp " << screen.max_ulp;
    EXPECT_EQ(r.failures, counted) << x << " vs " << y << " atol " << screen.atol << " rtol " << screen.rtol;
    EXPECT_FALSE(r.nonfinite) << x << " vs " << y;
    return !testing::Test::HasFailure();
  };
  for_each_half_case<kBf16>(1000000, check);
  // The test exercises clearing, of passing and of failing elements, not only fall-backs.
  EXPECT_GT(cleared, 400);
  EXPECT_GT(cleared_failing, 200);
}

TEST(Prechecks, HalfPrecheckIntrinsicsClearOnlyWhatTheScreenClears) {
  if (!has_avx2_f16c()) GTEST_SKIP() << "no AVX2 with F16C";
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
TEST(Prechecks, HalfPrecheckIntrinsicsOpenTheBlockOfTheirElement) {
  if (!has_avx2_f16c()) GTEST_SKIP() << "no AVX2 with F16C";
  const kernels::Screen screen{1e-3, 1e-3, 1.0, 1e-2, 1e-2, 4.0};
  const kernels::FloatScreen fs = kernels::float_screen(screen);
  ASSERT_TRUE(fs.usable);
  {
    for (std::size_t n : {1u, 7u, 8u, 9u, 15u, 16u, 17u, 127u, 128u, 129u, 300u, 1024u}) {
      std::vector<double> ref(n);
      for (std::size_t i = 0; i < n; ++i) ref[i] = 0.25 + 0.001 * static_cast<double>(i % 97);
      std::vector<std::uint16_t> f16(n), bf16(n);
      for (std::size_t i = 0; i < n; ++i) {
        f16[i] = tensor::double_to_f16(ref[i]);
        bf16[i] = tensor::double_to_bf16(ref[i]);
      }
      ASSERT_EQ(precheck_on<false>(f16.data(), ref.data(), n, fs), 0u) << n;
      ASSERT_EQ(precheck_on<true>(bf16.data(), ref.data(), n, fs), 0u) << n;
      // References that are float16 values themselves look like midpoints to the first pass (their
      // low bits are zero); the exact test clears them.
      std::vector<double> exact(n);
      for (std::size_t i = 0; i < n; ++i) exact[i] = tensor::f16_to_double(f16[i]);
      ASSERT_EQ(precheck_on<false>(f16.data(), exact.data(), n, fs), 0u) << n;
      for (std::size_t bad = 0; bad < n; bad += 1 + n / 40) {
        const double kept = ref[bad];
        ref[bad] = kept * 1.5;  // beyond max_abs, the bound and max_rel
        const std::uint32_t block = std::uint32_t{1} << (bad / kernels::kBlock);
        EXPECT_EQ(precheck_on<false>(f16.data(), ref.data(), n, fs), block) << n << " at " << bad;
        EXPECT_EQ(precheck_on<true>(bf16.data(), ref.data(), n, fs), block) << n << " at " << bad;
        ref[bad] = std::numeric_limits<double>::quiet_NaN();
        EXPECT_EQ(precheck_on<false>(f16.data(), ref.data(), n, fs), block) << n << " NaN at " << bad;
        EXPECT_EQ(precheck_on<true>(bf16.data(), ref.data(), n, fs), block) << n << " NaN at " << bad;
        ref[bad] = kept;
      }
    }
  }
}
#endif

}  // namespace
}  // namespace gpuemu::check
