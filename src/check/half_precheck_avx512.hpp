// The block pre-check for float16 and bfloat16 outputs against float64 references, written with
// AVX-512 intrinsics (internal to element_stats.cpp): one pass, 16 elements per step.
#pragma once

#if defined(__x86_64__) && defined(__GNUC__)

#include <immintrin.h>

#include <cfloat>
#include <cstddef>
#include <cstdint>

#include "check/float_precheck.hpp"

// GCC 12's AVX-512 intrinsics start from an "undefined" register that -Wmaybe-uninitialized
// reports wherever they are inlined (GCC bug 105593, fixed in 13).
#pragma GCC diagnostic push
#if !defined(__clang__)
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif

namespace gpuemu::check::kernels {

// The same tests as half_precheck_body, in 16-lane AVX-512 registers, for float16 (kBf16 false)
// and bfloat16 outputs against float64 references; the screen sees only the blocks it returns
// (bit b: block b). GCC's vectorisation of half_precheck_body spills at this width and chains its tests
// through one mask register (perf: twice a memcpy's time), so the loop is spelled out: the tests
// are independent compares, ANDed at the end.
//
// The arithmetic is half_precheck_body's, operation by operation (no FMA: each product and sum is
// rounded on its own, which its margins assume). Where it differs in form:
//  - the thresholds are tested as one compare of d against min(max_abs, bound, thr * bound,
//    rel * |ref|); the lane must also have |float(ref)| >= FLT_MIN and a bound <= FLT_MAX (so
//    NaN fails), which leaves no NaN among the minimum's operands (vminps would drop one);
//  - the ULP test clears a lane only when output and rounded reference have the same sign, so
//    the distance is the difference of their magnitude bits (no ordered-integer conversion) and
//    |a - b| <= max_ulp is the one unsigned test a - b + max_ulp <= 2 max_ulp;
//  - bfloat16 rounds float(ref) to nearest even in 32-bit lanes, as the screen does; references
//    that land on a bfloat16 midpoint through float stay open (the screen decides);
//  - float16 rounds float(ref) with vcvtps2ph (nearest even, subnormals and overflow to Inf like
//    the direct rounding): the two roundings give the direct one except when the float lands
//    exactly on a float16 midpoint from a value that was not one. Those lanes stay open: for a
//    normal float16 result its low 13 bits are 0x1000, for a subnormal one (|ref| < 2^-14) its
//    low 12 bits are zero (f16_prepass uses the second test for all, which also opens exact
//    float16 references).
//
// kCountFailures (for outputs that fail): a lane also clears when it surely fails, that is when a
// lower estimate of |x - y| exceeds an upper estimate of its bound, and it changes no statistic;
// the failures of the blocks that clear are added to `*failures` (the screen counts the others').
// The estimates (docs/performance.md, benchmark (b), item 10): with fy = float(y),
//   d_lo = fl(|x - fy|) (1 - 2^-20) - 2^-22 |fy|
//     <= |x - fy| - 2^-24 |fy| <= |x - y| rounded in double: the reference's rounding is at most
//        2^-24 |fy|, each float rounding stays inside the margins, and |fy| >= FLT_MIN leaves
//        room for a subnormal product's absolute error;
//   bound_hi = (atol_up + rtol_up |fy|) + 2^-126
//     >= atol + rtol |y| rounded in double: atol_up and rtol_up carry 2^-19 (FloatScreen), the
//        roundings and |y| <= (1 + 2^-24) |fy| need less than 2^-22, 2^-126 covers subnormals.
template <bool kBf16, bool kCountFailures = false>
[[gnu::always_inline,
  gnu::target("avx2,f16c,avx512f,avx512vl,avx512dq,avx512bw,popcnt")]] inline std::uint32_t
half_precheck_avx512(const std::byte* out, const double* ref, std::size_t n, const FloatScreen& f,
                     std::int64_t* failures = nullptr) {
  const __m512 up = _mm512_set1_ps(1.0f + 0x1p-20f);
  const __m512 ref_rounding = _mm512_set1_ps(0x1p-23f);
  const __m512 tiny = _mm512_set1_ps(0x1p-126f);
  const __m512 flt_min = _mm512_set1_ps(FLT_MIN);
  const __m512 flt_max = _mm512_set1_ps(FLT_MAX);
  const __m512 atol = _mm512_set1_ps(f.atol);
  const __m512 rtol = _mm512_set1_ps(f.rtol);
  const __m512 thr = _mm512_set1_ps(f.thr);
  const __m512 rel = _mm512_set1_ps(f.rel);
  const __m512 max_abs = _mm512_set1_ps(f.max_abs);
  const __m512 down = _mm512_set1_ps(1.0f - 0x1p-20f);
  const __m512 ref_rounding_lo = _mm512_set1_ps(0x1p-22f);
  const __m512 atol_up = _mm512_set1_ps(f.atol_up);
  const __m512 rtol_up = _mm512_set1_ps(f.rtol_up);
  const __m512i magnitude32 = _mm512_set1_epi32(0x7FFF'FFFF);
  // bfloat16 distances in 32-bit lanes (f.max_ulp <= 2^22, so no wrap); float16 distances in
  // 16-bit lanes, the limit capped at 0x7C00 (no finite same-sign pair is further apart).
  const std::uint32_t max_ulp16 = f.max_ulp < 0x7C00u ? f.max_ulp : 0x7C00u;
  const __m512i ulp_shift32 = _mm512_set1_epi32(static_cast<int>(f.max_ulp));
  const __m512i ulp_span32 = _mm512_set1_epi32(static_cast<int>(2 * f.max_ulp));
  const __m256i ulp_shift16 = _mm256_set1_epi16(static_cast<short>(max_ulp16));
  const __m256i ulp_span16 = _mm256_set1_epi16(static_cast<short>(2 * max_ulp16));

  // 16 lanes from element i on. kTail: only the lanes of `valid` are read (the others are zeros);
  // the main loop's loads are unmasked.
  const auto clear_lanes = [&]<bool kTail, bool kExactMidpoints>(std::size_t i, __mmask16 valid,
                                                                 __mmask16 & failing)
      __attribute__((always_inline, target("avx2,f16c,avx512f,avx512vl,avx512dq,avx512bw"))) {
    __m512d y_low, y_high;
    __m256i h;  // the stored 16-bit outputs
    if constexpr (kTail) {
      y_low = _mm512_maskz_loadu_pd(static_cast<__mmask8>(valid), ref + i);
      y_high = _mm512_maskz_loadu_pd(static_cast<__mmask8>(valid >> 8), ref + i + 8);
      h = _mm256_maskz_loadu_epi16(valid, out + 2 * i);
    } else {
      y_low = _mm512_loadu_pd(ref + i);
      y_high = _mm512_loadu_pd(ref + i + 8);
      h = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(out + 2 * i));
    }
    const __m512 y =
        _mm512_insertf32x8(_mm512_castps256_ps512(_mm512_cvtpd_ps(y_low)), _mm512_cvtpd_ps(y_high), 1);
    __m512 x;
    if constexpr (kBf16) {
      x = _mm512_castsi512_ps(_mm512_slli_epi32(_mm512_cvtepu16_epi32(h), 16));
    } else {
      x = _mm512_cvtph_ps(h);
    }
    const __m512i y_bits = _mm512_castps_si512(y);
    const __m512i y_mag = _mm512_and_si512(y_bits, magnitude32);
    const __m512 ay = _mm512_castsi512_ps(y_mag);
    const __m512 diff =
        _mm512_castsi512_ps(_mm512_and_si512(_mm512_castps_si512(_mm512_sub_ps(x, y)), magnitude32));
    const __m512 d =
        _mm512_add_ps(_mm512_mul_ps(_mm512_add_ps(diff, _mm512_mul_ps(ay, ref_rounding)), up), tiny);
    const __m512 bound = _mm512_add_ps(atol, _mm512_mul_ps(rtol, ay));
    const __mmask16 normal_ref = _mm512_cmp_ps_mask(ay, flt_min, _CMP_GE_OQ);
    const __mmask16 finite_bound = _mm512_cmp_ps_mask(bound, flt_max, _CMP_LE_OQ);
    __mmask16 within;
    if constexpr (kCountFailures) {
      // Within every statistic's threshold, and either within the bound or surely beyond it: a lane
      // surely beyond it takes Inf for the bound in the minimum.
      const __m512 d_lo = _mm512_sub_ps(_mm512_mul_ps(diff, down), _mm512_mul_ps(ay, ref_rounding_lo));
      const __m512 bound_hi = _mm512_add_ps(_mm512_add_ps(atol_up, _mm512_mul_ps(rtol_up, ay)), tiny);
      const __mmask16 beyond = _mm512_cmp_ps_mask(d_lo, bound_hi, _CMP_GT_OQ);
      const __m512 bound_unless_beyond = _mm512_mask_blend_ps(beyond, bound, _mm512_set1_ps(INFINITY));
      const __m512 limit = _mm512_min_ps(_mm512_min_ps(max_abs, bound_unless_beyond),
                                         _mm512_min_ps(_mm512_mul_ps(thr, bound), _mm512_mul_ps(rel, ay)));
      within = _mm512_cmp_ps_mask(d, limit, _CMP_LE_OQ);
      failing = beyond;
    } else {
      const __m512 limit = _mm512_min_ps(_mm512_min_ps(max_abs, bound),
                                         _mm512_min_ps(_mm512_mul_ps(thr, bound), _mm512_mul_ps(rel, ay)));
      within = _mm512_cmp_ps_mask(d, limit, _CMP_LE_OQ);
      failing = 0;
    }
    __mmask16 ulp_clear;
    if constexpr (!kBf16) {
      const __m256i hy = _mm512_cvtps_ph(y, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
      const __m256i magnitude16 = _mm256_set1_epi16(0x7FFF);
      const __mmask16 same_sign =
          _mm256_testn_epi16_mask(_mm256_xor_si256(h, hy), _mm256_set1_epi16(INT16_MIN));
      const __m256i distance =
          _mm256_sub_epi16(_mm256_and_si256(h, magnitude16), _mm256_and_si256(hy, magnitude16));
      const __mmask16 near = _mm256_cmple_epu16_mask(_mm256_add_epi16(distance, ulp_shift16), ulp_span16);
      // Midpoint candidates: a float16 normal result drops 13 bits, so its midpoints end in 0x1000;
      // a subnormal one drops more, so its midpoints have at least their low 12 bits zero. The
      // first pass takes the second test for all (one mask test: 1 in 4096 random references, but
      // every reference that is itself a float16 value); only the blocks it leaves open take both.
      __mmask16 midpoint = _mm512_testn_epi32_mask(y_bits, _mm512_set1_epi32(0xFFF));
      if constexpr (kExactMidpoints) {
        const __mmask16 f16_normal = _mm512_cmp_ps_mask(ay, _mm512_set1_ps(0x1p-14f), _CMP_GE_OQ);
        const __mmask16 normal_midpoint = _mm512_cmpeq_epi32_mask(
            _mm512_and_si512(y_bits, _mm512_set1_epi32(0x1FFF)), _mm512_set1_epi32(0x1000));
        midpoint = static_cast<__mmask16>((f16_normal & normal_midpoint) | (~f16_normal & midpoint));
      }
      ulp_clear = static_cast<__mmask16>(same_sign & near & ~midpoint);
    } else {
      const __m512i x_bits = _mm512_castps_si512(x);
      const __mmask16 same_sign =
          _mm512_testn_epi32_mask(_mm512_xor_si512(x_bits, y_bits), _mm512_set1_epi32(INT32_MIN));
      const __m512i x_mag = _mm512_srli_epi32(_mm512_and_si512(x_bits, magnitude32), 16);
      // Ties to even; a carry moves into the exponent and past the largest finite value onto Inf.
      const __m512i lsb = _mm512_and_si512(_mm512_srli_epi32(y_mag, 16), _mm512_set1_epi32(1));
      const __m512i rounded =
          _mm512_srli_epi32(_mm512_add_epi32(_mm512_add_epi32(y_mag, _mm512_set1_epi32(0x7FFF)), lsb), 16);
      const __mmask16 near = _mm512_cmple_epu32_mask(
          _mm512_add_epi32(_mm512_sub_epi32(x_mag, rounded), ulp_shift32), ulp_span32);
      const __mmask16 no_midpoint = _mm512_cmpneq_epi32_mask(
          _mm512_and_si512(y_mag, _mm512_set1_epi32(0xFFFF)), _mm512_set1_epi32(0x8000));
      ulp_clear = same_sign & near & no_midpoint;
    }
    return static_cast<__mmask16>(valid & normal_ref & finite_bound & within & ulp_clear);
  };

  // Whether [begin, end) clears, with its surely failing elements in `block_failures`.
  const auto block_clear = [&]<bool kExactMidpoints>(std::size_t begin, std::size_t end, int& block_failures)
      __attribute__((always_inline, target("avx2,f16c,avx512f,avx512vl,avx512dq,avx512bw,popcnt"))) {
    __mmask16 all_clear = 0xFFFF;
    block_failures = 0;
    std::size_t i = begin;
    for (; i + 16 <= end; i += 16) {
      __mmask16 failing;
      const __mmask16 clear = clear_lanes.template operator()<false, kExactMidpoints>(i, 0xFFFF, failing);
      all_clear &= clear;
      if constexpr (kCountFailures) block_failures += __builtin_popcount(clear & failing);
    }
    if (i < end) {  // the last few elements: the lanes past the end count as clear
      const auto valid = static_cast<__mmask16>((1u << (end - i)) - 1);
      __mmask16 failing;
      const __mmask16 clear = clear_lanes.template operator()<true, kExactMidpoints>(i, valid, failing);
      all_clear &= clear | static_cast<__mmask16>(~valid);
      if constexpr (kCountFailures) block_failures += __builtin_popcount(clear & failing);
    }
    return all_clear == 0xFFFF;
  };

  // The same block loop as half_precheck_avx2.hpp's: a shared generic driver cannot inline these
  // target-specific lambdas, and calling them measured slower (bf16 1% failing 88 -> 107 us).
  std::uint32_t open = 0;
  std::int64_t cleared_failures = 0;
  for (std::size_t begin = 0; begin < n; begin += kBlock) {
    const std::size_t end = begin + kBlock < n ? begin + kBlock : n;
    int block_failures;
    bool clear = block_clear.template operator()<kBf16>(begin, end, block_failures);
    if constexpr (!kBf16) {
      if (!clear) clear = block_clear.template operator()<true>(begin, end, block_failures);
    }
    open |= clear ? 0 : std::uint32_t{1} << (begin / kBlock);
    cleared_failures += clear ? block_failures : 0;
  }
  if constexpr (kCountFailures) *failures += cleared_failures;
  return open;
}

}  // namespace gpuemu::check::kernels

#pragma GCC diagnostic pop

#endif
