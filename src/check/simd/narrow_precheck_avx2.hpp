// The float-lane pre-check (narrow_precheck_avx512.hpp) for CPUs with AVX2, FMA and F16C but no
// AVX-512 (internal to element_stats.cpp): the same tests on 8 lanes, so the same sub-blocks clear.
#pragma once

#include "check/simd/narrow_precheck_avx512.hpp"
#include "check/simd/wide_screen_avx2.hpp"

#if defined(__x86_64__) && defined(__GNUC__)

#include <immintrin.h>

#include <bit>
#include <cfloat>
#include <cstddef>
#include <cstdint>
#include <type_traits>

namespace gpuemu::check::kernels {

// Eight stored outputs from x on as floats, exactly: float32 as they are, float16 by F16C,
// bfloat16 by a shift (subnormals and NaN/Inf included).
template <class Out>
[[gnu::always_inline, gnu::target(GPUEMU_AVX2_TARGET)]] inline __m256 load_narrow8_avx2(const std::byte* x) {
  if constexpr (std::is_same_v<Out, Raw<float>>) {
    return _mm256_loadu_ps(reinterpret_cast<const float*>(x));
  } else {
    const __m128i h = _mm_loadu_si128(reinterpret_cast<const __m128i*>(x));
    if constexpr (std::is_same_v<Out, RawF16>) return _mm256_cvtph_ps(h);
    return _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_cvtepu16_epi32(h), 16));
  }
}

// Eight references from y on rounded to float (nearest), as the AVX-512 form rounds them.
template <class Ref>
[[gnu::always_inline, gnu::target(GPUEMU_AVX2_TARGET)]] inline __m256 load_ref8_avx2(const std::byte* y) {
  if constexpr (std::is_same_v<Ref, Raw<double>>) {
    const auto* p = reinterpret_cast<const double*>(y);
    return _mm256_set_m128(_mm256_cvtpd_ps(_mm256_loadu_pd(p + 4)), _mm256_cvtpd_ps(_mm256_loadu_pd(p)));
  } else {
    return _mm256_loadu_ps(reinterpret_cast<const float*>(y));
  }
}

// The sub-blocks (bit b: the kSubBlock elements from b * kSubBlock) that stay open; with
// kCountFailures the failures of the sub-blocks that clear are added to *failures. Tails are
// zeroed lanes, which are left out of the tests as the AVX-512 form masks them.
template <class Out, class Ref, bool kCountFailures>
[[gnu::always_inline, gnu::target(GPUEMU_AVX2_TARGET)]] inline std::uint32_t narrow_precheck_avx2(
    Out out, Ref ref, std::size_t n, const NarrowScreen& f, std::int64_t* failures) {
  constexpr bool kExact = std::is_same_v<Out, Raw<float>>;  // float32 against float32
  static_assert(!kExact || std::is_same_v<Ref, Raw<float>>);
  constexpr std::size_t kOutSize = kExact ? 4 : 2;
  constexpr std::size_t kRefSize = std::is_same_v<Ref, Raw<double>> ? 8 : 4;
  const __m256i magnitude = _mm256_set1_epi32(0x7FFF'FFFF);
  const __m256i largest = _mm256_set1_epi32(std::bit_cast<std::int32_t>(FLT_MAX));
  const __m256i sign = _mm256_set1_epi32(static_cast<std::int32_t>(0x8000'0000u));
  const __m256 a1 = _mm256_set1_ps(f.a1), b1 = _mm256_set1_ps(f.b1);
  const __m256 a23 = _mm256_set1_ps(f.a23), b23 = _mm256_set1_ps(f.b23);
  const __m256 a2 = _mm256_set1_ps(f.a2), b2 = _mm256_set1_ps(f.b2);
  const __m256 a4 = _mm256_set1_ps(f.a4), b4 = _mm256_set1_ps(f.b4);
  // The pass rule, check::within_tolerance (check/pass_rule.hpp) from above (narrow_precheck_avx512.hpp).
  const __m256 ah = _mm256_set1_ps(f.ah), bh = _mm256_set1_ps(f.bh);
  // Unsigned comparison as signed one with both sides' sign bits flipped.
  const __m256i ulp_limit = _mm256_xor_si256(_mm256_set1_epi32(static_cast<std::int32_t>(f.ulp_limit)), sign);
  const __m256i lane = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);

  __m256i flags = _mm256_setzero_si256();
  int sub_failures = 0;
  std::int64_t cleared_failures = 0;
  std::uint32_t open = 0;
  // Eight pairs; `valid`: all ones in the lanes that hold elements.
  const auto eight = [&](__m256 x, __m256 y, __m256i valid)
      __attribute__((always_inline, target(GPUEMU_AVX2_TARGET))) {
    const __m256i y_bits = _mm256_castps_si256(y);
    __m256 ay = _mm256_castsi256_ps(_mm256_and_si256(y_bits, magnitude));
    if constexpr (!kExact) ay = _mm256_castsi256_ps(_mm256_min_epu32(_mm256_castps_si256(ay), largest));
    const __m256i diff = _mm256_and_si256(_mm256_castps_si256(_mm256_sub_ps(x, y)), magnitude);
    const __m256i t1 = kExact ? _mm256_castps_si256(a1) : _mm256_castps_si256(_mm256_fmadd_ps(b1, ay, a1));
    __m256i t23 = _mm256_castps_si256(_mm256_fmadd_ps(b23, ay, a23));
    if constexpr (kCountFailures) {
      const __m256i beyond =
          _mm256_and_si256(valid, _mm256_cmpgt_epi32(diff, _mm256_castps_si256(_mm256_fmadd_ps(bh, ay, ah))));
      t23 = _mm256_castps_si256(_mm256_blendv_ps(_mm256_castsi256_ps(t23), _mm256_fmadd_ps(b2, ay, a2),
                                                 _mm256_castsi256_ps(beyond)));
      sub_failures += std::popcount(static_cast<unsigned>(_mm256_movemask_ps(_mm256_castsi256_ps(beyond))));
    }
    const __m256i t4 = _mm256_castps_si256(_mm256_fmadd_ps(b4, ay, a4));
    const __m256i limit = _mm256_min_epi32(_mm256_min_epi32(t1, t23), t4);
    const __m256i patterns = _mm256_abs_epi32(_mm256_sub_epi32(y_bits, _mm256_castps_si256(x)));
    const __m256i lane_flags = _mm256_or_si256(
        _mm256_cmpgt_epi32(diff, limit), _mm256_cmpgt_epi32(_mm256_xor_si256(patterns, sign), ulp_limit));
    flags = _mm256_or_si256(flags, _mm256_and_si256(lane_flags, valid));
  };
  const __m256i all = _mm256_set1_epi32(-1);
  for_each_sub_block_avx2(
      out, ref, ~std::uint32_t{0}, n,
      [&](std::size_t i, const std::byte* x, const std::byte* y)
          __attribute__((always_inline, target(GPUEMU_AVX2_TARGET))) {
            const std::size_t left = n - i;
            if (left >= 16) {
              eight(load_narrow8_avx2<Out>(x), load_ref8_avx2<Ref>(y), all);
              eight(load_narrow8_avx2<Out>(x + 8 * kOutSize), load_ref8_avx2<Ref>(y + 8 * kRefSize), all);
            } else {
              const __m256i count = _mm256_set1_epi32(static_cast<int>(left));
              eight(load_narrow8_avx2<Out>(x), load_ref8_avx2<Ref>(y), _mm256_cmpgt_epi32(count, lane));
              eight(load_narrow8_avx2<Out>(x + 8 * kOutSize), load_ref8_avx2<Ref>(y + 8 * kRefSize),
                    _mm256_cmpgt_epi32(count, _mm256_add_epi32(lane, _mm256_set1_epi32(8))));
            }
          },
      [&](std::size_t b) __attribute__((always_inline, target(GPUEMU_AVX2_TARGET))) {
        const bool clear = _mm256_testz_si256(flags, flags) != 0;
        open |= clear ? 0 : std::uint32_t{1} << b;
        cleared_failures += clear ? sub_failures : 0;
        flags = _mm256_setzero_si256();
        sub_failures = 0;
      });
  if constexpr (kCountFailures) *failures += cleared_failures;
  return open;
}

}  // namespace gpuemu::check::kernels

#endif
