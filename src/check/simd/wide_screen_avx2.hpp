// The wide screen (wide_screen_avx512.hpp) for CPUs with AVX2 but no AVX-512 (internal to
// element_stats.cpp): the same flags per 16-element piece, or more, and the same failure counts.
#pragma once

#include "check/simd/wide_screen_avx512.hpp"

#if defined(__x86_64__) && defined(__GNUC__)

#include <immintrin.h>

#include <bit>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <type_traits>

namespace gpuemu::check::kernels {

#define GPUEMU_AVX2_TARGET "avx2,f16c,fma,popcnt"

// What the AVX-512 form gets from its instruction set, done with AVX2 (4 double lanes):
//
// - Products rounded toward zero: AVX2 has no embedded rounding, so thr * bound and rel * |y| are
//   rounded to nearest, p, and a pair is left unflagged by them only when d < p: the product
//   rounded toward zero is p or the double just below it, so d is at most that product. A d of 0
//   is never flagged by them (nor by the AVX-512 form): the limit is at least the least subnormal.
// - Thresholds compared as doubles, not as integers: every value compared is a non-negative double
//   (or a NaN), where the two orders agree; min_pd leaves a NaN product out, as the unsigned
//   minimum does, and a NaN d is never below the limit (flagged, as max_abs flags it on AVX-512).
// - ULPs: the same integer test on double bit patterns, |bits(y) - bits(x)| > ulp_limit written as
//   two signed comparisons (no 64-bit abs in AVX2).
// - Failures: d > bound as doubles, as the precise pass decides.
// - Tails are copied into zeroed lanes: a pair of zeros is never flagged and never fails.

// Calls body(i, x, y) for every 16 elements from i on of the sub-blocks in `subs` (bit b: the
// kSubBlock elements from b * kSubBlock, within n), x and y pointing at those 16 stored outputs and
// references (the last few copied into zeroed storage), then done(b) after each sub-block.
template <class Out, class Ref, class Body, class Done>
[[gnu::always_inline, gnu::target(GPUEMU_AVX2_TARGET)]] inline void for_each_sub_block_avx2(
    Out out, Ref ref, std::uint32_t subs, std::size_t n, Body&& body, Done&& done) {
  static_assert(kSubBlock % 16 == 0);
  constexpr std::size_t kOutSize = std::is_same_v<Out, Raw<double>>  ? 8
                                   : std::is_same_v<Out, Raw<float>> ? 4
                                                                     : 2;
  constexpr std::size_t kRefSize = std::is_same_v<Ref, Raw<double>> ? 8 : 4;
  for (; subs != 0; subs &= subs - 1) {
    const auto b = static_cast<std::size_t>(std::countr_zero(subs));
    const std::size_t begin = b * kSubBlock;
    if (begin >= n) break;
    const std::size_t end = std::min(n, begin + kSubBlock);
    std::size_t i = begin;
    for (; i + 16 <= end; i += 16) body(i, out.p + kOutSize * i, ref.p + kRefSize * i);
    if (i < end) {
      alignas(32) std::byte x_tail[16 * kOutSize] = {};
      alignas(32) std::byte y_tail[16 * kRefSize] = {};
      std::memcpy(x_tail, out.p + kOutSize * i, kOutSize * (end - i));
      std::memcpy(y_tail, ref.p + kRefSize * i, kRefSize * (end - i));
      body(i, static_cast<const std::byte*>(x_tail), static_cast<const std::byte*>(y_tail));
    }
    done(b);
  }
}

// Four pairs from x and y on (element k of each: 0..3), exactly as doubles.
template <class Out, class Ref>
[[gnu::always_inline, gnu::target(GPUEMU_AVX2_TARGET)]] inline void load4_avx2(const std::byte* x,
                                                                               const std::byte* y, int k,
                                                                               __m256d& xd, __m256d& yd) {
  if constexpr (std::is_same_v<Ref, Raw<double>>) {
    yd = _mm256_loadu_pd(reinterpret_cast<const double*>(y) + 4 * k);
  } else {
    yd = _mm256_cvtps_pd(_mm_loadu_ps(reinterpret_cast<const float*>(y) + 4 * k));
  }
  if constexpr (std::is_same_v<Out, Raw<double>>) {
    xd = _mm256_loadu_pd(reinterpret_cast<const double*>(x) + 4 * k);
  } else if constexpr (std::is_same_v<Out, Raw<float>>) {
    xd = _mm256_cvtps_pd(_mm_loadu_ps(reinterpret_cast<const float*>(x) + 4 * k));
  } else {
    const __m128i h = _mm_loadl_epi64(reinterpret_cast<const __m128i*>(x + 8 * k));
    if constexpr (std::is_same_v<Out, RawF16>) {
      xd = _mm256_cvtps_pd(_mm_cvtph_ps(h));
    } else {
      xd = _mm256_cvtps_pd(_mm_castsi128_ps(_mm_slli_epi32(_mm_cvtepu16_epi32(h), 16)));
    }
  }
}

// Flags (per piece) among the sub-blocks in `subs`, and with kCountFailures their failures.
template <class Out, class Ref, bool kCountFailures>
[[gnu::always_inline, gnu::target(GPUEMU_AVX2_TARGET)]] inline WideResult wide_screen_avx2(
    Out out, Ref ref, std::size_t n, const WideScreen& w, std::uint32_t subs) {
  const __m256d sign = _mm256_set1_pd(-0.0);
  const __m256d atol = _mm256_set1_pd(w.atol);
  const __m256d rtol = _mm256_set1_pd(w.rtol);
  const __m256d thr = _mm256_set1_pd(w.thr);
  const __m256d rel = _mm256_set1_pd(w.rel);
  // max_abs as the double just above it: d < that is d <= max_abs (max_abs_bits <= DBL_MAX's).
  const __m256d above_max_abs =
      _mm256_castsi256_pd(_mm256_set1_epi64x(static_cast<long long>(w.max_abs_bits + 1)));
  const __m256d smallest = _mm256_castsi256_pd(_mm256_set1_epi64x(1));  // the least subnormal
  const __m256i ulp_limit = _mm256_set1_epi64x(static_cast<long long>(w.ulp_limit));
  const __m256i minus_ulp_limit = _mm256_set1_epi64x(-static_cast<long long>(w.ulp_limit));
  __m256i failures = _mm256_setzero_si256();
  WideResult result;
  for_each_sub_block_avx2(
      out, ref, subs, n,
      [&](std::size_t i, const std::byte* x,
          const std::byte* y) __attribute__((always_inline, target(GPUEMU_AVX2_TARGET))) {
        // Sign bits set in lanes that are flagged.
        __m256i flags = _mm256_setzero_si256();
        for (int k = 0; k < 4; ++k) {
          __m256d xd, yd;
          load4_avx2<Out, Ref>(x, y, k, xd, yd);
          const __m256d d = _mm256_andnot_pd(sign, _mm256_sub_pd(xd, yd));
          const __m256d ay = _mm256_andnot_pd(sign, yd);
          // The pass rule, check::within_tolerance (check/pass_rule.hpp), in double lanes.
          const __m256d bound = _mm256_add_pd(atol, _mm256_mul_pd(rtol, ay));
          if constexpr (kCountFailures) {
            // -1 where failing, as the precise pass decides it (a NaN fails nothing here)
            failures = _mm256_sub_epi64(failures, _mm256_castpd_si256(_mm256_cmp_pd(d, bound, _CMP_GT_OQ)));
          }
          // The limit d must stay below: max_abs's successor, the products (a NaN product is
          // left out, as min_pd returns its second operand), and at least the least subnormal
          // so that d = 0 stays quiet when a product is 0.
          const __m256d limit = _mm256_max_pd(
              _mm256_min_pd(_mm256_mul_pd(rel, ay), _mm256_min_pd(_mm256_mul_pd(thr, bound), above_max_abs)),
              smallest);
          const __m256d quiet = _mm256_cmp_pd(d, limit, _CMP_LT_OQ);  // a NaN d is never quiet
          const __m256i diff = _mm256_sub_epi64(_mm256_castpd_si256(yd), _mm256_castpd_si256(xd));
          // |diff| > ulp_limit; +0 against -0 (diff = INT64_MIN) is flagged too, as on AVX-512
          const __m256i beyond_ulp =
              _mm256_or_si256(_mm256_cmpgt_epi64(diff, ulp_limit), _mm256_cmpgt_epi64(minus_ulp_limit, diff));
          flags =
              _mm256_or_si256(flags, _mm256_or_si256(_mm256_castpd_si256(_mm256_xor_pd(
                                                         quiet, _mm256_castsi256_pd(_mm256_set1_epi64x(-1)))),
                                                     beyond_ulp));
        }
        if (_mm256_movemask_pd(_mm256_castsi256_pd(flags)) != 0)
          result.flagged |= std::uint64_t{1} << (i / kPiece);
      },
      [](std::size_t) {});
  if constexpr (kCountFailures) {
    alignas(32) std::int64_t lanes[4];
    _mm256_store_si256(reinterpret_cast<__m256i*>(lanes), failures);
    for (const std::int64_t lane : lanes) result.failures += lane;
  }
  return result;
}

// Whether some pair of the pieces in `pieces` has NaN or Inf on either side (or a difference that
// overflows): those chunks take the precise pass.
template <class Out, class Ref>
[[gnu::always_inline, gnu::target(GPUEMU_AVX2_TARGET)]] inline bool wide_nonfinite_avx2(
    Out out, Ref ref, std::size_t n, std::uint64_t pieces) {
  const __m256i magnitude = _mm256_set1_epi64x(0x7FFF'FFFF'FFFF'FFFF);
  const __m256i largest_finite = _mm256_set1_epi64x(0x7FEF'FFFF'FFFF'FFFF);
  __m256i any = _mm256_setzero_si256();
  std::uint32_t subs = 0;  // the sub-blocks holding the pieces
  for (std::uint64_t p = pieces; p != 0; p &= p - 1)
    subs |= std::uint32_t{1} << (std::countr_zero(p) * kPiece / kSubBlock);
  for_each_sub_block_avx2(
      out, ref, subs, n,
      [&](std::size_t i, const std::byte* x, const std::byte* y)
          __attribute__((always_inline, target(GPUEMU_AVX2_TARGET))) {
            if (((pieces >> (i / kPiece)) & 1) == 0) return;
            for (int k = 0; k < 4; ++k) {
              __m256d xd, yd;
              load4_avx2<Out, Ref>(x, y, k, xd, yd);
              const __m256i d = _mm256_and_si256(_mm256_castpd_si256(_mm256_sub_pd(xd, yd)), magnitude);
              any = _mm256_or_si256(any, _mm256_cmpgt_epi64(d, largest_finite));
            }
          },
      [](std::size_t) {});
  return _mm256_movemask_pd(_mm256_castsi256_pd(any)) != 0;
}

}  // namespace gpuemu::check::kernels

#endif
