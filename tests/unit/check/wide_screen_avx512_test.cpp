// The wide screen's AVX-512 and AVX2 copies (wide_screen_avx512.hpp, wide_screen_avx2.hpp) against the
// definitions: each must flag every pair that could change a statistic or has NaN/Inf, count failures
// exactly, flag every failing pair when it does not count, and flag the sub-block of a pair and no other.
#include <gtest/gtest.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>
#include <type_traits>
#include <vector>

#include "check/simd/element_kernels.hpp"
#include "check/simd/wide_screen_avx2.hpp"
#include "check/simd/wide_screen_avx512.hpp"
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

std::uint32_t all_sub_blocks(std::size_t n) {
  const std::size_t subs = (n + kernels::kSubBlock - 1) / kernels::kSubBlock;
  return subs == 32 ? ~std::uint32_t{0} : (std::uint32_t{1} << subs) - 1;
}

template <class Out, class Ref, bool kCount>
[[gnu::target(GPUEMU_AVX512_TARGET)]] kernels::WideResult wide_avx512(const void* out, const void* ref,
                                                                      std::size_t n,
                                                                      const kernels::WideScreen& w,
                                                                      std::uint32_t subs) {
  return kernels::wide_screen_avx512<Out, Ref, kCount>(Out{static_cast<const std::byte*>(out)},
                                                       Ref{static_cast<const std::byte*>(ref)}, n, w, subs);
}

template <class Out, class Ref, bool kCount>
[[gnu::target(GPUEMU_AVX2_TARGET)]] kernels::WideResult wide_avx2(const void* out, const void* ref,
                                                                  std::size_t n, const kernels::WideScreen& w,
                                                                  std::uint32_t subs) {
  return kernels::wide_screen_avx2<Out, Ref, kCount>(Out{static_cast<const std::byte*>(out)},
                                                     Ref{static_cast<const std::byte*>(ref)}, n, w, subs);
}

// The wide screen of copy C over the sub-blocks `subs` (all of them by default).
template <Copy C, class Out, class Ref, bool kCount>
kernels::WideResult wide_on(const void* out, const void* ref, std::size_t n, const kernels::WideScreen& w,
                            std::uint32_t subs = ~std::uint32_t{0}) {
  if constexpr (C == Copy::avx512)
    return wide_avx512<Out, Ref, kCount>(out, ref, n, w, subs & all_sub_blocks(n));
  return wide_avx2<Out, Ref, kCount>(out, ref, n, w, subs & all_sub_blocks(n));
}

template <class Out, class Ref>
[[gnu::target(GPUEMU_AVX512_TARGET)]] bool nonfinite_avx512(Out out, Ref ref, std::size_t n,
                                                            std::uint64_t pieces) {
  return kernels::wide_nonfinite_avx512(out, ref, n, pieces);
}

template <class Out, class Ref>
[[gnu::target(GPUEMU_AVX2_TARGET)]] bool nonfinite_avx2(Out out, Ref ref, std::size_t n,
                                                        std::uint64_t pieces) {
  return kernels::wide_nonfinite_avx2(out, ref, n, pieces);
}

template <Copy C, class Out, class Ref>
bool nonfinite_on(const void* out, const void* ref, std::size_t n) {
  const std::size_t count = (n + kernels::kPiece - 1) / kernels::kPiece;
  const std::uint64_t pieces = count == 64 ? ~std::uint64_t{0} : (std::uint64_t{1} << count) - 1;
  const Out o{static_cast<const std::byte*>(out)};
  const Ref r{static_cast<const std::byte*>(ref)};
  if constexpr (C == Copy::avx512) return nonfinite_avx512(o, r, n, pieces);
  return nonfinite_avx2(o, r, n, pieces);
}

struct Tally {
  int quiet = 0, flagged = 0;
};

// The ULP distance in the output's type, as the statistics count it.
template <class Out>
double ulp_in(double x, double y) {
  if constexpr (std::is_same_v<Out, Raw<double>>) return tensor::ulp_distance_f64(x, y);
  if constexpr (std::is_same_v<Out, Raw<float>>) return tensor::ulp_distance_f32(x, y);
  if constexpr (std::is_same_v<Out, RawF16>) return tensor::ulp_distance_f16(x, y);
  return tensor::ulp_distance_bf16(x, y);
}

// One pair (x stored as the output's type, y as the reference's) alone, and in 45 lanes (a full
// sub-block and a tail); false on the first failure.
template <Copy C, class Out, class Ref, class X, class Y>
bool check_pair(X x, Y y, const kernels::Screen& screen, Tally& tally) {
  const Out out{reinterpret_cast<const std::byte*>(&x)};
  const Ref ref{reinterpret_cast<const std::byte*>(&y)};
  const double xd = out(0), yd = ref(0);
  const testing_cases::Needed need = testing_cases::needed(xd, yd, ulp_in<Out>(xd, yd), screen);
  const kernels::WideScreen w = kernels::wide_screen(screen, kernels::wide_ulp_shift<Out>());
  const kernels::WideResult counted = wide_on<C, Out, Ref, true>(&x, &y, 1, w);
  const kernels::WideResult flagged = wide_on<C, Out, Ref, false>(&x, &y, 1, w);
  const bool has_nonfinite = !std::isfinite(xd) || !std::isfinite(yd);
  ::testing::Message what;
  what << xd << " vs " << yd << " atol " << screen.atol << " rtol " << screen.rtol << " thr "
       << screen.worst_threshold << " max_abs " << screen.max_abs << " max_rel " << screen.max_rel
       << " max_ulp " << screen.max_ulp;
  EXPECT_EQ(counted.flagged, flagged.flagged) << what;
  if (need.flag) {
    EXPECT_EQ(flagged.flagged, 1u) << what;
  }
  if (!has_nonfinite) {
    EXPECT_EQ(counted.failures, need.fails ? 1 : 0) << what;
  }
  if (!w.count_failures && need.fails) {
    EXPECT_EQ(flagged.flagged, 1u) << what;
  }
  const bool nonfinite = nonfinite_on<C, Out, Ref>(&x, &y, 1);
  EXPECT_EQ(nonfinite, has_nonfinite || !(std::fabs(xd - yd) <= DBL_MAX)) << what;
  std::vector<X> xs(45, x);
  std::vector<Y> ys(45, y);
  const kernels::WideResult many = wide_on<C, Out, Ref, true>(xs.data(), ys.data(), 45, w);
  EXPECT_EQ(many.flagged, flagged.flagged != 0 ? 7u : 0u) << what;  // pieces of 16
  if (!has_nonfinite) {
    EXPECT_EQ(many.failures, 45 * counted.failures) << what;
  }
  ++(flagged.flagged != 0 ? tally.flagged : tally.quiet);
  return !::testing::Test::HasFailure();
}

template <Copy C, class Out, class Ref>
void expect_wide_screen_flags_what_the_screen_flags() {
  Tally tally;
  using RefStored = std::conditional_t<std::is_same_v<Ref, Raw<double>>, double, float>;
  if constexpr (std::is_same_v<Out, RawF16> || std::is_same_v<Out, RawBF16>) {
    testing_cases::for_each_half_case<std::is_same_v<Out, RawBF16>>(
        100000, [&](std::uint16_t bits, double y, const kernels::Screen& screen) {
          return check_pair<C, Out, Ref>(bits, static_cast<RefStored>(y), screen, tally);
        });
  } else {
    using X = std::conditional_t<std::is_same_v<Out, Raw<double>>, double, float>;
    testing_cases::for_each_float_case<X>(100000, [&](X x, double y, const kernels::Screen& screen) {
      return check_pair<C, Out, Ref>(x, static_cast<RefStored>(y), screen, tally);
    });
  }
  // Both outcomes happen: the test is not one of flags everywhere.
  EXPECT_GT(tally.quiet, 1000);
  EXPECT_GT(tally.flagged, 1000);
}

template <Copy C>
void expect_flags_what_the_plain_screen_flags(){
#define GPUEMU_CASE(Out, Ref)                                           \
  {                                                                     \
    SCOPED_TRACE(#Out " against " #Ref);                                \
    expect_wide_screen_flags_what_the_screen_flags<C, Out, Raw<Ref>>(); \
    if (::testing::Test::HasFailure()) return;                          \
  }
    GPUEMU_CASE(Raw<double>, double) GPUEMU_CASE(Raw<double>, float) GPUEMU_CASE(Raw<float>, double)
        GPUEMU_CASE(Raw<float>, float) GPUEMU_CASE(RawF16, double) GPUEMU_CASE(RawF16, float)
            GPUEMU_CASE(RawBF16, double) GPUEMU_CASE(RawBF16, float)
#undef GPUEMU_CASE
}

TEST(WideScreen, FlagsWhatThePlainScreenFlags) {
  if (!has_copy(Copy::avx512)) GTEST_SKIP() << "no AVX-512";
  expect_flags_what_the_plain_screen_flags<Copy::avx512>();
}

TEST(WideScreen, Avx2CopyFlagsWhatThePlainScreenFlags) {
  if (!has_copy(Copy::avx2)) GTEST_SKIP() << "no AVX2 with FMA and F16C";
  expect_flags_what_the_plain_screen_flags<Copy::avx2>();
}

// A product in the subnormal range rounds by up to half a quantum: thr * bound = 4.7 quanta rounds
// to 5 to nearest, the difference of 5 quanta is above it, and the pair's ratio 5/3 is above thr
// (and its relative error above max_rel): the screen must flag it, so it rounds toward zero.
template <Copy C>
void expect_flags_pairs_beyond_subnormal_products() {
  const double quantum = std::ldexp(1.0, -1074);
  const double y = 3 * quantum, x = 8 * quantum;  // bound = rtol * |y| = 3 quanta, d = 5 quanta
  const double threshold = 4.7 / 3;
  for (bool by_ratio : {true, false}) {
    kernels::Screen screen{0.0,
                           1.0,
                           by_ratio ? threshold / kernels::kSlack : 100.0,
                           1.0,
                           by_ratio ? 100.0 : threshold / kernels::kSlack,
                           1e9};
    const testing_cases::Needed need = testing_cases::needed(x, y, tensor::ulp_distance_f64(x, y), screen);
    ASSERT_TRUE(need.flag);
    const kernels::WideScreen w = kernels::wide_screen(screen, 0);
    const auto r = wide_on<C, Raw<double>, Raw<double>, true>(&x, &y, 1, w);
    EXPECT_EQ(r.flagged, 1u) << (by_ratio ? "thr * bound" : "rel * |y|");
  }
}

TEST(WideScreen, FlagsPairsBeyondSubnormalProducts) {
  for (const Copy copy : {Copy::avx512, Copy::avx2}) {
    if (!has_copy(copy)) continue;
    SCOPED_TRACE(copy == Copy::avx512 ? "AVX-512" : "AVX2");
    copy == Copy::avx512 ? expect_flags_pairs_beyond_subnormal_products<Copy::avx512>()
                         : expect_flags_pairs_beyond_subnormal_products<Copy::avx2>();
  }
}

// One pair beyond max_abs, a NaN, or an Inf, anywhere in a run of quiet pairs, flags its piece and
// no other; only the sub-blocks asked for are screened.
template <Copy C>
void expect_flags_the_piece_of_its_pair() {
  const kernels::Screen screen{1e-3, 1e-3, 0.5, 1e-2, 1e-2, 4.0};
  const kernels::WideScreen w = kernels::wide_screen(screen, kernels::wide_ulp_shift<Raw<float>>());
  for (std::size_t n : {1u, 15u, 16u, 17u, 31u, 32u, 33u, 100u, 1000u, 1024u}) {
    std::vector<double> ref(n);
    std::vector<float> out(n);
    for (std::size_t i = 0; i < n; ++i) {
      ref[i] = 0.25 + 0.001 * static_cast<double>(i % 97);
      out[i] = static_cast<float>(ref[i]);
    }
    const auto flags_of = [&](std::uint32_t subs) {
      return wide_on<C, Raw<float>, Raw<double>, false>(out.data(), ref.data(), n, w, subs).flagged;
    };
    ASSERT_EQ(flags_of(~0u), 0u) << n;
    for (std::size_t bad = 0; bad < n; bad += 1 + n / 50) {
      const std::uint32_t sub = std::uint32_t{1} << (bad / kernels::kSubBlock);
      const std::uint64_t piece = std::uint64_t{1} << (bad / kernels::kPiece);
      for (double value : {ref[bad] * 1.5, double{NAN}, double{INFINITY}}) {
        const double kept = ref[bad];
        ref[bad] = value;
        EXPECT_EQ(flags_of(~0u), piece) << n << " at " << bad << ": " << value;
        const bool nonfinite = nonfinite_on<C, Raw<float>, Raw<double>>(out.data(), ref.data(), n);
        EXPECT_EQ(nonfinite, !std::isfinite(value)) << n << " at " << bad;
        EXPECT_EQ(flags_of(~sub), 0u) << n << " at " << bad;
        ref[bad] = kept;
      }
    }
  }
}

TEST(WideScreen, FlagsThePieceOfItsPair) {
  for (const Copy copy : {Copy::avx512, Copy::avx2}) {
    if (!has_copy(copy)) continue;
    SCOPED_TRACE(copy == Copy::avx512 ? "AVX-512" : "AVX2");
    copy == Copy::avx512 ? expect_flags_the_piece_of_its_pair<Copy::avx512>()
                         : expect_flags_the_piece_of_its_pair<Copy::avx2>();
  }
}

}  // namespace
}  // namespace gpuemu::check

#endif
