// The float-lane pre-check's AVX-512 and AVX2 copies (narrow_precheck_avx512.hpp,
// narrow_precheck_avx2.hpp) against the definitions: a pair it clears changes no statistic and does
// not fail (counting form: or surely fails, counted exactly), at every margin's edge; one pair it
// cannot clear opens its sub-block and no other; and both copies open the same sub-blocks.
#include <gtest/gtest.h>

#include <array>
#include <cmath>
#include <cstdint>
#include <type_traits>
#include <vector>

#include "check/simd/element_kernels.hpp"
#include "check/simd/narrow_precheck_avx2.hpp"
#include "check/simd/narrow_precheck_avx512.hpp"
#include "screen_cases.hpp"
#include "tensor/half.hpp"

#if defined(__x86_64__) && defined(__GNUC__)

namespace gpuemu::check {
namespace {

using kernels::Raw;
using kernels::RawBF16;
using kernels::RawF16;
using testing_cases::Copy;
using testing_cases::has_copy;

template <class Out, class Ref>
[[gnu::target(GPUEMU_AVX512_TARGET)]] std::uint32_t narrow_avx512(Out o, Ref r, std::size_t n,
                                                                  const kernels::NarrowScreen& f,
                                                                  std::int64_t* failures) {
  if (failures != nullptr) return kernels::narrow_precheck_avx512<Out, Ref, true>(o, r, n, f, failures);
  std::int64_t unused = 0;
  return kernels::narrow_precheck_avx512<Out, Ref, false>(o, r, n, f, &unused);
}

template <class Out, class Ref>
[[gnu::target(GPUEMU_AVX2_TARGET)]] std::uint32_t narrow_avx2(Out o, Ref r, std::size_t n,
                                                              const kernels::NarrowScreen& f,
                                                              std::int64_t* failures) {
  if (failures != nullptr) return kernels::narrow_precheck_avx2<Out, Ref, true>(o, r, n, f, failures);
  std::int64_t unused = 0;
  return kernels::narrow_precheck_avx2<Out, Ref, false>(o, r, n, f, &unused);
}

// Copy C's open sub-blocks; counting form when `failures` is given. Where the CPU runs both copies,
// the other one must open the same sub-blocks and count the same failures.
template <Copy C, class Out, class Ref>
std::uint32_t narrow_on(const void* out, const void* ref, std::size_t n, const kernels::NarrowScreen& f,
                        std::int64_t* failures = nullptr) {
  const Out o{static_cast<const std::byte*>(out)};
  const Ref r{static_cast<const std::byte*>(ref)};
  const std::int64_t before = failures != nullptr ? *failures : 0;
  const std::uint32_t open =
      C == Copy::avx512 ? narrow_avx512(o, r, n, f, failures) : narrow_avx2(o, r, n, f, failures);
  constexpr Copy kOther = C == Copy::avx512 ? Copy::avx2 : Copy::avx512;
  if (has_copy(kOther)) {
    std::int64_t other_failures = before;
    const std::uint32_t other_open = kOther == Copy::avx512
                                         ? narrow_avx512(o, r, n, f, failures ? &other_failures : nullptr)
                                         : narrow_avx2(o, r, n, f, failures ? &other_failures : nullptr);
    EXPECT_EQ(other_open, open) << "the AVX2 and AVX-512 copies differ, n " << n;
    if (failures != nullptr) {
      EXPECT_EQ(other_failures, *failures) << "n " << n;
    }
  }
  return open;
}

template <class Out>
double ulp_in(double x, double y) {
  if constexpr (std::is_same_v<Out, Raw<float>>) return tensor::ulp_distance_f32(x, y);
  if constexpr (std::is_same_v<Out, RawF16>) return tensor::ulp_distance_f16(x, y);
  return tensor::ulp_distance_bf16(x, y);
}

struct Tally {
  int cleared = 0, cleared_failing = 0;
};

// One pair alone and in 45 lanes (a full sub-block and a tail); false on the first failure.
template <Copy C, class Out, class Ref, class X, class Y>
bool check_pair(X x, Y y, const kernels::Screen& screen, Tally& tally) {
  constexpr bool kExact = std::is_same_v<Out, Raw<float>>;
  const kernels::NarrowScreen f = kernels::narrow_screen(screen, kernels::narrow_ulp_shift<Out>(), kExact);
  if (!f.usable) return true;
  const double xd = Out{reinterpret_cast<const std::byte*>(&x)}(0);
  const double yd = Ref{reinterpret_cast<const std::byte*>(&y)}(0);
  const testing_cases::Needed need = testing_cases::needed(xd, yd, ulp_in<Out>(xd, yd), screen);
  ::testing::Message what;
  what << xd << " vs " << yd << " atol " << screen.atol << " rtol " << screen.rtol << " thr "
       << screen.worst_threshold << " max_abs " << screen.max_abs << " max_rel " << screen.max_rel
       << " max_ulp " << screen.max_ulp;
  const std::uint32_t plain = narrow_on<C, Out, Ref>(&x, &y, 1, f);
  std::int64_t counted = 0;
  const std::uint32_t counting = narrow_on<C, Out, Ref>(&x, &y, 1, f, &counted);
  if (plain == 0) {
    EXPECT_FALSE(need.flag) << what;
    EXPECT_FALSE(need.fails) << what;
    EXPECT_EQ(counting, 0u) << "what the plain form clears, the counting form clears: " << what;
  }
  if (counting == 0) {
    EXPECT_FALSE(need.flag) << what;
    EXPECT_EQ(counted, need.fails ? 1 : 0) << what;
    ++(need.fails ? tally.cleared_failing : tally.cleared);
  } else {
    EXPECT_EQ(counted, 0) << "an open sub-block's failures are the screen's to count: " << what;
  }
  std::array<X, 45> xs;
  std::array<Y, 45> ys;
  xs.fill(x);
  ys.fill(y);
  const std::uint32_t plain45 = narrow_on<C, Out, Ref>(xs.data(), ys.data(), 45, f);
  EXPECT_EQ(plain45, plain != 0 ? 3u : 0u) << what;
  std::int64_t counted45 = 0;
  const std::uint32_t counting45 = narrow_on<C, Out, Ref>(xs.data(), ys.data(), 45, f, &counted45);
  EXPECT_EQ(counting45, counting != 0 ? 3u : 0u) << what;
  EXPECT_EQ(counted45, 45 * counted) << what;
  return !::testing::Test::HasFailure();
}

template <Copy C, class Out, class Ref>
void expect_clears_only_quiet_pairs(int min_cleared, int min_cleared_failing) {
  Tally tally;
  using RefStored = std::conditional_t<std::is_same_v<Ref, Raw<double>>, double, float>;
  if constexpr (std::is_same_v<Out, Raw<float>>) {
    testing_cases::for_each_float_case<float>(300000, [&](float x, double y, const kernels::Screen& screen) {
      return check_pair<C, Out, Ref>(x, static_cast<float>(y), screen, tally);
    });
  } else {
    testing_cases::for_each_half_case<std::is_same_v<Out, RawBF16>>(
        300000, [&](std::uint16_t bits, double y, const kernels::Screen& screen) {
          return check_pair<C, Out, Ref>(bits, static_cast<RefStored>(y), screen, tally);
        });
  }
  // The test exercises clearing, of passing and of failing pairs, not only fall-backs.
  EXPECT_GT(tally.cleared, min_cleared);
  EXPECT_GT(tally.cleared_failing, min_cleared_failing);
}

template <Copy C>
void expect_clears_only_pairs_that_change_nothing() {
  {
    SCOPED_TRACE("float16 against float64");
    expect_clears_only_quiet_pairs<C, RawF16, Raw<double>>(100, 30);
  }
  {
    SCOPED_TRACE("float16 against float32");
    expect_clears_only_quiet_pairs<C, RawF16, Raw<float>>(100, 30);
  }
  {
    SCOPED_TRACE("bfloat16 against float64");
    expect_clears_only_quiet_pairs<C, RawBF16, Raw<double>>(100, 30);
  }
  {
    SCOPED_TRACE("bfloat16 against float32");
    expect_clears_only_quiet_pairs<C, RawBF16, Raw<float>>(100, 30);
  }
  {
    SCOPED_TRACE("float32 against float32");
    expect_clears_only_quiet_pairs<C, Raw<float>, Raw<float>>(3000, 300);
  }
}

TEST(NarrowPrecheck, ClearsOnlyPairsThatChangeNothing) {
  if (!has_copy(Copy::avx512)) GTEST_SKIP() << "no AVX-512";
  expect_clears_only_pairs_that_change_nothing<Copy::avx512>();
}

TEST(NarrowPrecheck, Avx2CopyClearsOnlyPairsThatChangeNothing) {
  if (!has_copy(Copy::avx2)) GTEST_SKIP() << "no AVX2 with FMA and F16C";
  expect_clears_only_pairs_that_change_nothing<Copy::avx2>();
}

// Outputs that are a correctly rounded reference clear once the statistics have settled, one ULP
// off included for float32 (max_abs tested exactly); one pair beyond the thresholds, or NaN/Inf,
// opens its sub-block and no other.
template <Copy C>
void expect_opens_the_sub_block_of_its_pair() {
  const kernels::Screen screen{1e-3, 1e-3, 0.9, 1e-2, 1e-2, 4.0};
  for (std::size_t n : {1u, 15u, 16u, 17u, 31u, 32u, 33u, 100u, 1000u, 1024u}) {
    std::vector<double> ref(n);
    std::vector<float> ref32(n), out32(n);
    std::vector<std::uint16_t> f16(n), bf16(n);
    for (std::size_t i = 0; i < n; ++i) {
      ref[i] = 0.25 + 0.001 * static_cast<double>(i % 97);
      ref32[i] = static_cast<float>(ref[i]);
      out32[i] = i % 2 ? std::nextafter(ref32[i], 1.0f) : ref32[i];
      f16[i] = tensor::double_to_f16(ref[i]);
      bf16[i] = tensor::double_to_bf16(ref[i]);
    }
    const auto f16_screen = kernels::narrow_screen(screen, 13, false);
    const auto bf16_screen = kernels::narrow_screen(screen, 16, false);
    const auto f32_screen = kernels::narrow_screen(screen, 0, true);
    const auto open = [&] {
      return std::array<std::uint32_t, 3>{
          narrow_on<C, RawF16, Raw<double>>(f16.data(), ref.data(), n, f16_screen),
          narrow_on<C, RawBF16, Raw<double>>(bf16.data(), ref.data(), n, bf16_screen),
          narrow_on<C, Raw<float>, Raw<float>>(out32.data(), ref32.data(), n, f32_screen)};
    };
    ASSERT_EQ(open(), (std::array<std::uint32_t, 3>{})) << n;
    for (std::size_t bad = 0; bad < n; bad += 1 + n / 50) {
      const std::uint32_t sub = std::uint32_t{1} << (bad / kernels::kSubBlock);
      for (double value : {ref[bad] * 1.5, double{NAN}, double{INFINITY}}) {
        const double kept = ref[bad];
        ref[bad] = value;
        ref32[bad] = static_cast<float>(value);
        EXPECT_EQ(open(), (std::array<std::uint32_t, 3>{sub, sub, sub}))
            << n << " at " << bad << ": " << value;
        ref[bad] = kept;
        ref32[bad] = static_cast<float>(kept);
      }
    }
  }
}

TEST(NarrowPrecheck, OpensTheSubBlockOfItsPair) {
  for (const Copy copy : {Copy::avx512, Copy::avx2}) {
    if (!has_copy(copy)) continue;
    SCOPED_TRACE(copy == Copy::avx512 ? "AVX-512" : "AVX2");
    copy == Copy::avx512 ? expect_opens_the_sub_block_of_its_pair<Copy::avx512>()
                         : expect_opens_the_sub_block_of_its_pair<Copy::avx2>();
  }
}

}  // namespace
}  // namespace gpuemu::check

#endif
