// The block pre-check for float16 and bfloat16 outputs against float64 references on CPUs with AVX2
// and F16C but no AVX-512 (internal to element_stats.cpp): half_precheck_body's tests, 8 lanes.
#pragma once

#if defined(__x86_64__) && defined(__GNUC__)

#include <immintrin.h>

#include <cfloat>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstring>

#include "check/float_precheck.hpp"

namespace gpuemu::check::kernels {

// The tests of half_precheck_body (float_precheck.hpp), written out so they run independently and
// are ANDed at the end (GCC's vectorisation chains them); the screen sees only the blocks this
// returns (bit b: block b). Where the form differs:
//  - the thresholds are tested as one compare of d against min(max_abs, bound, thr * bound,
//    rel * |ref|); the lane must also have |float(ref)| >= FLT_MIN and a bound <= FLT_MAX (so NaN
//    fails), which leaves no NaN among the minimum's operands;
//  - the ULP test clears a lane only when output and rounded reference have the same sign, so the
//    distance is the difference of their magnitude bits;
//  - float16 rounds float(ref) with vcvtps2ph (nearest even): the two roundings give the direct one
//    except when the float lands exactly on a float16 midpoint from a value that was not one. Those
//    lanes stay open: for a normal float16 result its low 13 bits are 0x1000, for a subnormal one
//    its low 12 bits are zero. The first pass takes the second test for all (one test), and only
//    blocks it leaves open take both.
// kCountFailures (for outputs that fail): a lane also clears when it surely fails, that is when
//   d_lo = fl(|x - fy|) (1 - 2^-20) - 2^-22 |fy| <= |x - y|
// exceeds bound_hi = (atol_up + rtol_up |fy|) + 2^-126 >= atol + rtol |y| (atol_up and rtol_up
// carry 2^-19, FloatScreen); such a lane changes no statistic, and the failures of the blocks that
// clear are added to *failures (docs/performance.md, benchmark (b), item 10).
// Vector masks stand in for mask registers: every test gives all-ones lanes where the element is
// not clear, ORed into one accumulator per block. The 16-bit ULP tests run in 16-bit lanes and are
// widened once. The last few elements of a chunk go through zero-padded copies.
template <bool kBf16, bool kCountFailures = false>
[[gnu::always_inline, gnu::target("avx2,f16c,popcnt")]] inline std::uint32_t half_precheck_avx2(
    const std::byte* out, const double* ref, std::size_t n, const FloatScreen& f,
    std::int64_t* failures = nullptr) {
  const __m256 up = _mm256_set1_ps(1.0f + 0x1p-20f);
  const __m256 ref_rounding = _mm256_set1_ps(0x1p-23f);
  const __m256 tiny = _mm256_set1_ps(0x1p-126f);
  const __m256 flt_min = _mm256_set1_ps(FLT_MIN);
  const __m256 flt_max = _mm256_set1_ps(FLT_MAX);
  const __m256 atol = _mm256_set1_ps(f.atol);
  const __m256 rtol = _mm256_set1_ps(f.rtol);
  const __m256 thr = _mm256_set1_ps(f.thr);
  const __m256 rel = _mm256_set1_ps(f.rel);
  const __m256 max_abs = _mm256_set1_ps(f.max_abs);
  const __m256 down = _mm256_set1_ps(1.0f - 0x1p-20f);
  const __m256 ref_rounding_lo = _mm256_set1_ps(0x1p-22f);
  const __m256 atol_up = _mm256_set1_ps(f.atol_up);
  const __m256 rtol_up = _mm256_set1_ps(f.rtol_up);
  const __m256 infinity = _mm256_set1_ps(INFINITY);
  const __m256i magnitude32 = _mm256_set1_epi32(0x7FFF'FFFF);
  // Distances compare as signed integers: bfloat16 ones are at most 2 * 0x7F80 and f.max_ulp at
  // most 2^22; float16 ones (16-bit lanes) at most 0x7FFF, the limit capped at 0x7C00.
  const __m256i max_ulp32 = _mm256_set1_epi32(static_cast<int>(f.max_ulp));
  const __m128i max_ulp16 = _mm_set1_epi16(static_cast<short>(f.max_ulp < 0x7C00u ? f.max_ulp : 0x7C00u));

  // Lanes (all ones) of the 8 elements whose outputs are `h` and references y[0..8) that are not
  // clear; `failing`: the lanes that surely fail (kCountFailures).
  const auto open_lanes = [&]<bool kExactMidpoints>(__m128i h, const double* y, __m256& failing)
      __attribute__((always_inline, target("avx2,f16c"))) {
    const __m256 fy = _mm256_insertf128_ps(_mm256_castps128_ps256(_mm256_cvtpd_ps(_mm256_loadu_pd(y))),
                                           _mm256_cvtpd_ps(_mm256_loadu_pd(y + 4)), 1);
    __m256 x;
    if constexpr (kBf16) {
      x = _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_cvtepu16_epi32(h), 16));
    } else {
      x = _mm256_cvtph_ps(h);
    }
    const __m256i y_bits = _mm256_castps_si256(fy);
    const __m256i y_mag = _mm256_and_si256(y_bits, magnitude32);
    const __m256 ay = _mm256_castsi256_ps(y_mag);
    const __m256 diff =
        _mm256_castsi256_ps(_mm256_and_si256(_mm256_castps_si256(_mm256_sub_ps(x, fy)), magnitude32));
    const __m256 d =
        _mm256_add_ps(_mm256_mul_ps(_mm256_add_ps(diff, _mm256_mul_ps(ay, ref_rounding)), up), tiny);
    const __m256 bound = _mm256_add_ps(atol, _mm256_mul_ps(rtol, ay));
    __m256 bound_in_limit = bound;
    if constexpr (kCountFailures) {
      const __m256 d_lo = _mm256_sub_ps(_mm256_mul_ps(diff, down), _mm256_mul_ps(ay, ref_rounding_lo));
      const __m256 bound_hi = _mm256_add_ps(_mm256_add_ps(atol_up, _mm256_mul_ps(rtol_up, ay)), tiny);
      failing = _mm256_cmp_ps(d_lo, bound_hi, _CMP_GT_OQ);
      bound_in_limit = _mm256_blendv_ps(bound, infinity, failing);
    }
    const __m256 limit = _mm256_min_ps(_mm256_min_ps(max_abs, bound_in_limit),
                                       _mm256_min_ps(_mm256_mul_ps(thr, bound), _mm256_mul_ps(rel, ay)));
    // Clear in float: a normal reference, a finite bound, d within the limit (NaN fails each).
    const __m256 clear = _mm256_and_ps(
        _mm256_and_ps(_mm256_cmp_ps(ay, flt_min, _CMP_GE_OQ), _mm256_cmp_ps(bound, flt_max, _CMP_LE_OQ)),
        _mm256_cmp_ps(d, limit, _CMP_LE_OQ));
    __m256i open = _mm256_castps_si256(_mm256_xor_ps(clear, _mm256_castsi256_ps(_mm256_set1_epi32(-1))));
    if constexpr (kBf16) {
      const __m256i x_bits = _mm256_castps_si256(x);
      const __m256i other_sign = _mm256_srai_epi32(_mm256_xor_si256(x_bits, y_bits), 31);
      const __m256i x_mag = _mm256_srli_epi32(_mm256_and_si256(x_bits, magnitude32), 16);
      // Ties to even; a carry moves into the exponent and past the largest finite value onto Inf.
      const __m256i lsb = _mm256_and_si256(_mm256_srli_epi32(y_mag, 16), _mm256_set1_epi32(1));
      const __m256i rounded =
          _mm256_srli_epi32(_mm256_add_epi32(_mm256_add_epi32(y_mag, _mm256_set1_epi32(0x7FFF)), lsb), 16);
      const __m256i too_far =
          _mm256_cmpgt_epi32(_mm256_abs_epi32(_mm256_sub_epi32(x_mag, rounded)), max_ulp32);
      const __m256i midpoint =
          _mm256_cmpeq_epi32(_mm256_and_si256(y_mag, _mm256_set1_epi32(0xFFFF)), _mm256_set1_epi32(0x8000));
      open = _mm256_or_si256(_mm256_or_si256(open, other_sign), _mm256_or_si256(too_far, midpoint));
    } else {
      const __m128i hy = _mm256_cvtps_ph(fy, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
      const __m128i magnitude16 = _mm_set1_epi16(0x7FFF);
      const __m128i other_sign = _mm_srai_epi16(_mm_xor_si128(h, hy), 15);
      const __m128i distance =
          _mm_abs_epi16(_mm_sub_epi16(_mm_and_si128(h, magnitude16), _mm_and_si128(hy, magnitude16)));
      const __m128i ulp_open = _mm_or_si128(other_sign, _mm_cmpgt_epi16(distance, max_ulp16));
      // Midpoint candidates (see above): low 12 bits zero in the first pass, the
      // exact pattern (low 13 bits 0x1000 for a normal float16 result) in the second.
      __m256i midpoint =
          _mm256_cmpeq_epi32(_mm256_and_si256(y_bits, _mm256_set1_epi32(0xFFF)), _mm256_setzero_si256());
      if constexpr (kExactMidpoints) {
        const __m256i f16_normal =
            _mm256_castps_si256(_mm256_cmp_ps(ay, _mm256_set1_ps(0x1p-14f), _CMP_GE_OQ));
        const __m256i normal_midpoint = _mm256_cmpeq_epi32(
            _mm256_and_si256(y_bits, _mm256_set1_epi32(0x1FFF)), _mm256_set1_epi32(0x1000));
        midpoint = _mm256_blendv_epi8(midpoint, normal_midpoint, f16_normal);
      }
      open = _mm256_or_si256(_mm256_or_si256(open, midpoint), _mm256_cvtepi16_epi32(ulp_open));
    }
    return open;
  };

  // Whether [begin, end) clears, with its surely failing elements in `block_failures`.
  const auto block_clear = [&]<bool kExactMidpoints>(std::size_t begin, std::size_t end, int& block_failures)
      __attribute__((always_inline, target("avx2,f16c,popcnt"))) {
    __m256i open = _mm256_setzero_si256();
    block_failures = 0;
    __m256 failing = _mm256_setzero_ps();
    const auto add = [&](__m256i lanes, unsigned valid) __attribute__((always_inline, target("avx2"))) {
      open = _mm256_or_si256(open, lanes);
      if constexpr (kCountFailures) {
        const auto clear_lanes =
            static_cast<unsigned>(~_mm256_movemask_ps(_mm256_castsi256_ps(lanes))) & valid;
        block_failures +=
            __builtin_popcount(clear_lanes & static_cast<unsigned>(_mm256_movemask_ps(failing)));
      }
    };
    std::size_t i = begin;
    for (; i + 8 <= end; i += 8) {
      const __m128i h = _mm_loadu_si128(reinterpret_cast<const __m128i*>(out + 2 * i));
      add(open_lanes.template operator()<kExactMidpoints>(h, ref + i, failing), 0xFFu);
    }
    if (i < end) {  // the last few elements, zero-padded; the padding lanes count as clear
      const std::size_t count = end - i;
      alignas(16) std::uint16_t h8[8] = {};
      double y8[8] = {};
      std::memcpy(h8, out + 2 * i, 2 * count);
      std::memcpy(y8, ref + i, sizeof(double) * count);
      const unsigned valid = (1u << count) - 1;
      const __m256i lanes = open_lanes.template operator()<kExactMidpoints>(
          _mm_load_si128(reinterpret_cast<const __m128i*>(h8)), y8, failing);
      const __m256i valid_lanes = _mm256_cmpgt_epi32(_mm256_set1_epi32(static_cast<int>(count)),
                                                     _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7));
      add(_mm256_and_si256(lanes, valid_lanes), valid);
    }
    return _mm256_testz_si256(open, open) != 0;
  };

  // The block loop is spelled out here: a shared generic driver cannot inline these
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

#endif
