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

#include "check/simd/float_precheck.hpp"

namespace gpuemu::check::kernels {

// The thresholds of a FloatScreen and the constants of the tests, broadcast to 8 lanes once per call.
struct HalfPrecheckLanes {
  __m256 up, ref_rounding, tiny, flt_min, flt_max, atol, rtol, thr, rel, max_abs;
  __m256 down, ref_rounding_lo, atol_up, rtol_up, infinity;  // the counting form's
  __m256i magnitude32, max_ulp32;
  __m128i max_ulp16;
};

[[gnu::always_inline, gnu::target("avx2,f16c")]] inline HalfPrecheckLanes half_precheck_lanes(
    const FloatScreen& f) {
  HalfPrecheckLanes c;
  c.up = _mm256_set1_ps(1.0f + 0x1p-20f);
  c.ref_rounding = _mm256_set1_ps(0x1p-23f);
  c.tiny = _mm256_set1_ps(0x1p-126f);
  c.flt_min = _mm256_set1_ps(FLT_MIN);
  c.flt_max = _mm256_set1_ps(FLT_MAX);
  c.atol = _mm256_set1_ps(f.atol);
  c.rtol = _mm256_set1_ps(f.rtol);
  c.thr = _mm256_set1_ps(f.thr);
  c.rel = _mm256_set1_ps(f.rel);
  c.max_abs = _mm256_set1_ps(f.max_abs);
  c.down = _mm256_set1_ps(1.0f - 0x1p-20f);
  c.ref_rounding_lo = _mm256_set1_ps(0x1p-22f);
  c.atol_up = _mm256_set1_ps(f.atol_up);
  c.rtol_up = _mm256_set1_ps(f.rtol_up);
  c.infinity = _mm256_set1_ps(INFINITY);
  c.magnitude32 = _mm256_set1_epi32(0x7FFF'FFFF);
  // Distances compare as signed integers: bfloat16 ones are at most 2 * 0x7F80 and f.max_ulp at
  // most 2^22; float16 ones (16-bit lanes) at most 0x7FFF, the limit capped at 0x7C00.
  c.max_ulp32 = _mm256_set1_epi32(static_cast<int>(f.max_ulp));
  c.max_ulp16 = _mm_set1_epi16(static_cast<short>(f.max_ulp < 0x7C00u ? f.max_ulp : 0x7C00u));
  return c;
}

// Step 1, the thresholds: lanes (all ones) of outputs `x` against references rounded to float
// `fy` that the tolerance and statistics tests leave open; `failing` gets the lanes that surely
// fail (kCountFailures). See the form above half_precheck_avx2.
template <bool kCountFailures>
[[gnu::always_inline, gnu::target("avx2,f16c")]] inline __m256i threshold_open_lanes(
    __m256 x, __m256 fy, const HalfPrecheckLanes& c, __m256& failing) {
  const __m256 ay = _mm256_castsi256_ps(_mm256_and_si256(_mm256_castps_si256(fy), c.magnitude32));
  const __m256 diff =
      _mm256_castsi256_ps(_mm256_and_si256(_mm256_castps_si256(_mm256_sub_ps(x, fy)), c.magnitude32));
  const __m256 d =
      _mm256_add_ps(_mm256_mul_ps(_mm256_add_ps(diff, _mm256_mul_ps(ay, c.ref_rounding)), c.up), c.tiny);
  // The pass rule, check::within_tolerance (check/pass_rule.hpp), in float lanes.
  const __m256 bound = _mm256_add_ps(c.atol, _mm256_mul_ps(c.rtol, ay));
  __m256 bound_in_limit = bound;
  if constexpr (kCountFailures) {
    const __m256 d_lo = _mm256_sub_ps(_mm256_mul_ps(diff, c.down), _mm256_mul_ps(ay, c.ref_rounding_lo));
    const __m256 bound_hi = _mm256_add_ps(_mm256_add_ps(c.atol_up, _mm256_mul_ps(c.rtol_up, ay)), c.tiny);
    failing = _mm256_cmp_ps(d_lo, bound_hi, _CMP_GT_OQ);
    bound_in_limit = _mm256_blendv_ps(bound, c.infinity, failing);
  }
  const __m256 limit = _mm256_min_ps(_mm256_min_ps(c.max_abs, bound_in_limit),
                                     _mm256_min_ps(_mm256_mul_ps(c.thr, bound), _mm256_mul_ps(c.rel, ay)));
  // Clear in float: a normal reference, a finite bound, d within the limit (NaN fails each).
  const __m256 clear = _mm256_and_ps(
      _mm256_and_ps(_mm256_cmp_ps(ay, c.flt_min, _CMP_GE_OQ), _mm256_cmp_ps(bound, c.flt_max, _CMP_LE_OQ)),
      _mm256_cmp_ps(d, limit, _CMP_LE_OQ));
  return _mm256_castps_si256(_mm256_xor_ps(clear, _mm256_castsi256_ps(_mm256_set1_epi32(-1))));
}

// Step 2 for bfloat16, the ULP test: lanes whose output `x` is more than max_ulp steps from the
// reference rounded to bfloat16 (ties to even) from `fy`, has the other sign, or whose reference
// sits on a bfloat16 midpoint.
[[gnu::always_inline, gnu::target("avx2")]] inline __m256i bf16_ulp_open_lanes(__m256 x, __m256 fy,
                                                                               const HalfPrecheckLanes& c) {
  const __m256i y_bits = _mm256_castps_si256(fy);
  const __m256i y_mag = _mm256_and_si256(y_bits, c.magnitude32);
  const __m256i x_bits = _mm256_castps_si256(x);
  const __m256i other_sign = _mm256_srai_epi32(_mm256_xor_si256(x_bits, y_bits), 31);
  const __m256i x_mag = _mm256_srli_epi32(_mm256_and_si256(x_bits, c.magnitude32), 16);
  // Ties to even; a carry moves into the exponent and past the largest finite value onto Inf.
  const __m256i lsb = _mm256_and_si256(_mm256_srli_epi32(y_mag, 16), _mm256_set1_epi32(1));
  const __m256i rounded =
      _mm256_srli_epi32(_mm256_add_epi32(_mm256_add_epi32(y_mag, _mm256_set1_epi32(0x7FFF)), lsb), 16);
  const __m256i too_far = _mm256_cmpgt_epi32(_mm256_abs_epi32(_mm256_sub_epi32(x_mag, rounded)), c.max_ulp32);
  const __m256i midpoint =
      _mm256_cmpeq_epi32(_mm256_and_si256(y_mag, _mm256_set1_epi32(0xFFFF)), _mm256_set1_epi32(0x8000));
  return _mm256_or_si256(_mm256_or_si256(other_sign, too_far), midpoint);
}

// Step 2 for float16, the ULP test in 16-bit lanes against vcvtps2ph's rounding of `fy`, widened
// once; plus the midpoint candidates (see above): low 12 bits zero in the first pass, the exact
// pattern (low 13 bits 0x1000 for a normal float16 result) in the second (kExactMidpoints).
template <bool kExactMidpoints>
[[gnu::always_inline, gnu::target("avx2,f16c")]] inline __m256i f16_ulp_open_lanes(
    __m128i h, __m256 fy, const HalfPrecheckLanes& c) {
  const __m256i y_bits = _mm256_castps_si256(fy);
  const __m128i hy = _mm256_cvtps_ph(fy, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
  const __m128i magnitude16 = _mm_set1_epi16(0x7FFF);
  const __m128i other_sign = _mm_srai_epi16(_mm_xor_si128(h, hy), 15);
  const __m128i distance =
      _mm_abs_epi16(_mm_sub_epi16(_mm_and_si128(h, magnitude16), _mm_and_si128(hy, magnitude16)));
  const __m128i ulp_open = _mm_or_si128(other_sign, _mm_cmpgt_epi16(distance, c.max_ulp16));
  __m256i midpoint =
      _mm256_cmpeq_epi32(_mm256_and_si256(y_bits, _mm256_set1_epi32(0xFFF)), _mm256_setzero_si256());
  if constexpr (kExactMidpoints) {
    const __m256 ay = _mm256_castsi256_ps(_mm256_and_si256(y_bits, c.magnitude32));
    const __m256i f16_normal = _mm256_castps_si256(_mm256_cmp_ps(ay, _mm256_set1_ps(0x1p-14f), _CMP_GE_OQ));
    const __m256i normal_midpoint =
        _mm256_cmpeq_epi32(_mm256_and_si256(y_bits, _mm256_set1_epi32(0x1FFF)), _mm256_set1_epi32(0x1000));
    midpoint = _mm256_blendv_epi8(midpoint, normal_midpoint, f16_normal);
  }
  return _mm256_or_si256(midpoint, _mm256_cvtepi16_epi32(ulp_open));
}

// Lanes (all ones) of the 8 elements whose outputs are `h` and references y[0..8) that are not
// clear: step 1 or step 2 left them open; `failing`: the lanes that surely fail (kCountFailures).
template <bool kBf16, bool kCountFailures, bool kExactMidpoints>
[[gnu::always_inline, gnu::target("avx2,f16c")]] inline __m256i half_open_lanes(__m128i h, const double* y,
                                                                                const HalfPrecheckLanes& c,
                                                                                __m256& failing) {
  const __m256 fy = _mm256_insertf128_ps(_mm256_castps128_ps256(_mm256_cvtpd_ps(_mm256_loadu_pd(y))),
                                         _mm256_cvtpd_ps(_mm256_loadu_pd(y + 4)), 1);
  __m256 x;
  if constexpr (kBf16) {
    x = _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_cvtepu16_epi32(h), 16));
  } else {
    x = _mm256_cvtph_ps(h);
  }
  const __m256i open = threshold_open_lanes<kCountFailures>(x, fy, c, failing);
  if constexpr (kBf16) {
    return _mm256_or_si256(open, bf16_ulp_open_lanes(x, fy, c));
  } else {
    return _mm256_or_si256(open, f16_ulp_open_lanes<kExactMidpoints>(h, fy, c));
  }
}

// Whether elements [begin, end) of a block clear, with its surely failing elements in
// `block_failures` (kCountFailures). The last few elements of a chunk go through zero-padded copies
// whose padding lanes count as clear.
template <bool kBf16, bool kCountFailures, bool kExactMidpoints>
[[gnu::always_inline, gnu::target("avx2,f16c,popcnt")]] inline bool half_block_clear(
    const std::byte* out, const double* ref, std::size_t begin, std::size_t end, const HalfPrecheckLanes& c,
    int& block_failures) {
  __m256i open = _mm256_setzero_si256();
  block_failures = 0;
  __m256 failing = _mm256_setzero_ps();
  const auto add = [&](__m256i lanes, unsigned valid) __attribute__((always_inline, target("avx2,popcnt"))) {
    open = _mm256_or_si256(open, lanes);
    if constexpr (kCountFailures) {
      const auto clear_lanes = static_cast<unsigned>(~_mm256_movemask_ps(_mm256_castsi256_ps(lanes))) & valid;
      block_failures += __builtin_popcount(clear_lanes & static_cast<unsigned>(_mm256_movemask_ps(failing)));
    }
  };
  std::size_t i = begin;
  for (; i + 8 <= end; i += 8) {
    const __m128i h = _mm_loadu_si128(reinterpret_cast<const __m128i*>(out + 2 * i));
    add(half_open_lanes<kBf16, kCountFailures, kExactMidpoints>(h, ref + i, c, failing), 0xFFu);
  }
  if (i < end) {
    const std::size_t count = end - i;
    alignas(16) std::uint16_t h8[8] = {};
    double y8[8] = {};
    std::memcpy(h8, out + 2 * i, 2 * count);
    std::memcpy(y8, ref + i, sizeof(double) * count);
    const unsigned valid = (1u << count) - 1;
    const __m256i lanes = half_open_lanes<kBf16, kCountFailures, kExactMidpoints>(
        _mm_load_si128(reinterpret_cast<const __m128i*>(h8)), y8, c, failing);
    const __m256i valid_lanes = _mm256_cmpgt_epi32(_mm256_set1_epi32(static_cast<int>(count)),
                                                   _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7));
    add(_mm256_and_si256(lanes, valid_lanes), valid);
  }
  return _mm256_testz_si256(open, open) != 0;
}

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
// clear are added to *failures (docs/performance-log.md, (b)'s portable-path history, item 10).
// Vector masks stand in for mask registers: every test gives all-ones lanes where the element is
// not clear, ORed into one accumulator per block (the steps below).
template <bool kBf16, bool kCountFailures = false>
[[gnu::always_inline, gnu::target("avx2,f16c,popcnt")]] inline std::uint32_t half_precheck_avx2(
    const std::byte* out, const double* ref, std::size_t n, const FloatScreen& f,
    std::int64_t* failures = nullptr) {
  const HalfPrecheckLanes c = half_precheck_lanes(f);
  // float16 takes the cheap midpoint test first, and both only on the blocks it leaves open.
  // The block loop calls always_inline steps: a generic driver calling non-inlined target-specific
  // code measured slower (docs/performance.md, "Measurements behind the kernels").
  std::uint32_t open = 0;
  std::int64_t cleared_failures = 0;
  for (std::size_t begin = 0; begin < n; begin += kBlock) {
    const std::size_t end = begin + kBlock < n ? begin + kBlock : n;
    int block_failures;
    bool clear = half_block_clear<kBf16, kCountFailures, kBf16>(out, ref, begin, end, c, block_failures);
    if constexpr (!kBf16) {
      if (!clear)
        clear = half_block_clear<kBf16, kCountFailures, true>(out, ref, begin, end, c, block_failures);
    }
    open |= clear ? 0 : std::uint32_t{1} << (begin / kBlock);
    cleared_failures += clear ? block_failures : 0;
  }
  if constexpr (kCountFailures) *failures += cleared_failures;
  return open;
}

}  // namespace gpuemu::check::kernels

#endif
