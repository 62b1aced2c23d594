// The comparison's pre-check on AVX-512 CPUs (internal to element_stats.cpp): clears sub-blocks of
// float16/bfloat16 outputs against float64/float32 references, and of float32 against float32, in
// float lanes, so that only the rest go through the wide screen (wide_screen_avx512.hpp).
#pragma once

#include <algorithm>
#include <bit>
#include <cfloat>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <type_traits>

#include "check/simd/element_kernels.hpp"
#include "check/simd/float_precheck.hpp"
#include "check/simd/wide_screen_avx512.hpp"

namespace gpuemu::check::kernels {

// A sub-block is clear when each of its pairs (x, y) changes no statistic and does not fail; the
// counting form also clears pairs that surely fail and change no statistic otherwise, and adds up
// their failures. With fy = float(y) (nearest) and ay = |fy|, a pair clears when
// diff = fl(|x - fy|) is at most every threshold T = fl(a + b ay) (one FMA), which stands for a
// double threshold A + B |y|: max_abs (A = max_abs, B = 0), the pass bound (atol, rtol), the worst
// list's bound (thr atol, thr rtol; with the pass bound, min(thr, 1) times it) and max_rel
// (0, rel). The error budget (docs/performance-log.md, (b), item 2 of the AVX-512 path):
//
// - |y - fy| <= 2^-24 ay + 2^-150 and |x - fy| <= diff (1 + 2^-24), so it is enough that
//   diff <= (A - 2^-150 (1 + B) + (B (1 - 2^-24) - 2^-24) ay) (1 - 2^-23). a and b are those
//   coefficients pushed down by 2^-21 of their size and by 2^-140 (1 + B), rounded toward -Inf:
//   the FMA's rounding (2^-24 relative, 2^-150 below FLT_MIN) then stays inside, and a threshold
//   whose true value is not positive comes out negative. For float32 outputs against float32
//   references fy = y, and a pair that passes the ULP test (same sign, at most 2^22 ULPs apart)
//   subtracts exactly, so the terms for the reference's rounding go, and max_abs is tested exactly:
//   the many pairs that tie it (a kernel one ULP off) still clear.
// - Comparisons are on bit patterns as signed integers: a negative threshold (or -0, or a NaN with
//   its sign set) clears nothing. ay is clamped to FLT_MAX (NaN and Inf too), so the max_abs
//   threshold is a number at most FLT_MAX (1 - 2^-20), below the pattern of a NaN or Inf diff:
//   NaN and Inf never clear. A threshold of +Inf (rel or thr Inf) is left out.
// - ULPs: in float bit patterns, float16's grid is every 2^13 patterns and bfloat16's every 2^16
//   (float32's every pattern), coarser below float16's normal range. fy is within half a pattern
//   of y, so |bits(fy) - bits(x)| <= (max_ulp + 1/2) 2^shift - 1 means that y itself rounds
//   within max_ulp steps of x: there is no double rounding to catch. Opposite signs differ by at
//   least 2^23 patterns; max_ulp is capped so the limit stays below that.
// - Counting: diff > fl(ah + bh ay) means |x - y| > atol + rtol |y| in double, with ah and bh the
//   coefficients of (atol + 2^-150 (1 + rtol)) + (rtol (1 + 2^-24) + 2^-24) ay pushed up by 2^-21
//   and 2^-140 (float32 against float32: atol + rtol ay). For such a pair the pass bound leaves
//   the minimum (the worst list's bound with thr itself stands in).
struct NarrowScreen {
  float a1, b1;             // max_abs (float32 against float32: exactly, and b1 is unused)
  float a23, b23;           // min(thr, 1) times the pass bound
  float a2, b2;             // thr times the pass bound (counting form)
  float a4, b4;             // max_rel
  float ah, bh;             // the pass bound, from above (counting form)
  std::uint32_t ulp_limit;  // largest |bits(fy) - bits(x)| that clears
  bool usable;
};

namespace narrow {

inline float floor_float(double v) {
  const float f = static_cast<float>(v);
  return static_cast<double>(f) > v ? std::nextafter(f, -INFINITY) : f;
}

inline float ceil_float(double v) {
  const float f = static_cast<float>(v);
  return static_cast<double>(f) < v ? std::nextafter(f, INFINITY) : f;
}

// Coefficients for a double threshold A + B |y| (A, B >= 0, +Inf: no threshold).
inline void below(double A, double B, bool exact, float& a, float& b) {
  if (A == INFINITY || B == INFINITY) {
    a = INFINITY;
    b = 0;
    return;
  }
  double av = A - 0x1p-140 * (1 + B);
  double bv = B;
  if (!exact) {
    av -= 0x1p-150 * (1 + B);
    bv = B * (1 - 0x1p-24) - 0x1p-24;
  }
  a = floor_float(av - std::fabs(av) * 0x1p-21);
  b = floor_float(bv - std::fabs(bv) * 0x1p-21);
}

}  // namespace narrow

// shift: log2 of the float bit patterns between neighbours of the output's type (13 float16,
// 16 bfloat16, 0 float32). exact: float32 outputs against float32 references.
inline NarrowScreen narrow_screen(const Screen& s, int shift, bool exact) {
  constexpr double kBelow = 1.0 - 0x1p-50;  // the double bound's own roundings
  NarrowScreen f{};
  const double thr = s.worst_threshold * kSlack;
  const double rel = s.max_rel * kSlack;
  f.usable = s.atol >= 0 && s.atol <= FLT_MAX && s.rtol >= 0 && s.rtol <= FLT_MAX && thr >= 0 && rel >= 0 &&
             s.max_abs >= 0;
  const double max_abs = std::min(s.max_abs, FLT_MAX * (1.0 - 0x1p-20));
  if (exact) {
    f.a1 = float_down(max_abs);
    f.b1 = 0;
  } else {
    narrow::below(max_abs, 0, false, f.a1, f.b1);
  }
  const double thr1 = std::min(thr, 1.0);
  narrow::below(thr1 * s.atol * kBelow, thr1 * s.rtol * kBelow, exact, f.a23, f.b23);
  narrow::below(thr * s.atol * kBelow, thr * s.rtol * kBelow, exact, f.a2, f.b2);
  narrow::below(0, rel, exact, f.a4, f.b4);
  // The pass rule, check::within_tolerance (check/pass_rule.hpp) as float coefficients pushed up.
  double ah = s.atol + 0x1p-140 * (1 + s.rtol);
  double bh = s.rtol;
  if (!exact) {
    ah += 0x1p-150 * (1 + s.rtol);
    bh = s.rtol * (1 + 0x1p-24) + 0x1p-24;
  }
  f.ah = narrow::ceil_float(ah * (1 + 0x1p-21));
  f.bh = narrow::ceil_float(bh * (1 + 0x1p-21));
  const auto ulp = static_cast<std::uint32_t>(std::min(s.max_ulp, static_cast<double>(1u << (22 - shift))));
  f.ulp_limit = shift == 0 ? ulp : (ulp << shift) + (1u << (shift - 1)) - 1;
  return f;
}

template <class Out>
constexpr int narrow_ulp_shift() {
  if constexpr (std::is_same_v<Out, Raw<float>>) return 0;
  if constexpr (std::is_same_v<Out, RawF16>) return 13;
  return 16;  // RawBF16
}

}  // namespace gpuemu::check::kernels

#if defined(__x86_64__) && defined(__GNUC__)

#include <immintrin.h>

GPUEMU_AVX512_WARNINGS_OFF

namespace gpuemu::check::kernels {

// The sub-blocks (bit b: the kSubBlock elements from b * kSubBlock) that stay open; with
// kCountFailures the failures of the sub-blocks that clear are added to *failures.
template <class Out, class Ref, bool kCountFailures>
[[gnu::always_inline, gnu::target(GPUEMU_AVX512_TARGET)]] inline std::uint32_t narrow_precheck_avx512(
    Out out, Ref ref, std::size_t n, const NarrowScreen& f, std::int64_t* failures) {
  constexpr bool kExact = std::is_same_v<Out, Raw<float>>;  // float32 against float32
  static_assert(!kExact || std::is_same_v<Ref, Raw<float>>);
  const __m512i magnitude = _mm512_set1_epi32(0x7FFF'FFFF);
  const __m512i largest = _mm512_set1_epi32(std::bit_cast<std::int32_t>(FLT_MAX));
  const __m512 a1 = _mm512_set1_ps(f.a1), b1 = _mm512_set1_ps(f.b1);
  const __m512 a23 = _mm512_set1_ps(f.a23), b23 = _mm512_set1_ps(f.b23);
  const __m512 a2 = _mm512_set1_ps(f.a2), b2 = _mm512_set1_ps(f.b2);
  const __m512 a4 = _mm512_set1_ps(f.a4), b4 = _mm512_set1_ps(f.b4);
  const __m512 ah = _mm512_set1_ps(f.ah), bh = _mm512_set1_ps(f.bh);
  const __m512i ulp_limit = _mm512_set1_epi32(static_cast<std::int32_t>(f.ulp_limit));
  const auto x_base = out.p;
  const auto y_base = ref.p;

  __mmask16 flags = 0;
  int sub_failures = 0;
  std::int64_t cleared_failures = 0;
  std::uint32_t open = 0;
  const auto sixteen = [&]<bool kTail>(std::size_t i, __mmask16 valid)
      __attribute__((always_inline, target(GPUEMU_AVX512_TARGET))) {
    __m512 x, y;
    if constexpr (std::is_same_v<Ref, Raw<double>>) {
      const auto* p = reinterpret_cast<const double*>(y_base) + i;
      const __m256 lo = _mm512_cvtpd_ps(kTail ? _mm512_maskz_loadu_pd(static_cast<__mmask8>(valid), p)
                                              : _mm512_loadu_pd(p));
      const __m256 hi = _mm512_cvtpd_ps(
          kTail ? _mm512_maskz_loadu_pd(static_cast<__mmask8>(valid >> 8), p + 8) : _mm512_loadu_pd(p + 8));
      y = _mm512_insertf32x8(_mm512_castps256_ps512(lo), hi, 1);
    } else {
      const auto* p = reinterpret_cast<const float*>(y_base) + i;
      y = kTail ? _mm512_maskz_loadu_ps(valid, p) : _mm512_loadu_ps(p);
    }
    if constexpr (kExact) {
      const auto* p = reinterpret_cast<const float*>(x_base) + i;
      x = kTail ? _mm512_maskz_loadu_ps(valid, p) : _mm512_loadu_ps(p);
    } else {
      x = load_half16<Out, kTail>(x_base + 2 * i, valid);
    }
    const __m512i y_bits = _mm512_castps_si512(y);
    // |fy|, with NaN and Inf as FLT_MAX: the thresholds stay numbers, and max_abs's below a NaN's
    // pattern (float32 against float32 tests the constant max_abs, so needs no clamp).
    __m512 ay = _mm512_castsi512_ps(_mm512_and_si512(y_bits, magnitude));
    if constexpr (!kExact) ay = _mm512_castsi512_ps(_mm512_min_epu32(_mm512_castps_si512(ay), largest));
    const __m512i diff = _mm512_and_si512(_mm512_castps_si512(_mm512_sub_ps(x, y)), magnitude);
    const __m512i t1 = kExact ? _mm512_castps_si512(a1) : _mm512_castps_si512(_mm512_fmadd_ps(b1, ay, a1));
    __m512i t23 = _mm512_castps_si512(_mm512_fmadd_ps(b23, ay, a23));
    if constexpr (kCountFailures) {
      // Signed comparison of the patterns (diff and the bound are not negative).
      // The pass rule, check::within_tolerance (check/pass_rule.hpp), from above.
      __mmask16 beyond = _mm512_cmpgt_epi32_mask(diff, _mm512_castps_si512(_mm512_fmadd_ps(bh, ay, ah)));
      if constexpr (kTail) beyond &= valid;
      t23 = _mm512_mask_mov_epi32(t23, beyond, _mm512_castps_si512(_mm512_fmadd_ps(b2, ay, a2)));
      sub_failures += __builtin_popcount(beyond);
    }
    const __m512i t4 = _mm512_castps_si512(_mm512_fmadd_ps(b4, ay, a4));
    const __m512i limit = _mm512_min_epi32(_mm512_min_epi32(t1, t23), t4);
    // Signed comparisons, not a difference's sign: a negative limit's pattern minus a large diff
    // would overflow.
    const __m512i patterns = _mm512_abs_epi32(_mm512_sub_epi32(y_bits, _mm512_castps_si512(x)));
    __mmask16 lane_flags =
        _mm512_cmpgt_epi32_mask(diff, limit) | _mm512_cmpgt_epu32_mask(patterns, ulp_limit);
    if constexpr (kTail) lane_flags &= valid;
    flags |= lane_flags;
  };
  for_each_sub_block(
      ~std::uint32_t{0}, n,
      sixteen, [&](std::size_t b) __attribute__((always_inline, target(GPUEMU_AVX512_TARGET))) {
        const bool clear = flags == 0;
        open |= clear ? 0 : std::uint32_t{1} << b;
        cleared_failures += clear ? sub_failures : 0;
        flags = 0;
        sub_failures = 0;
      });
  if constexpr (kCountFailures) *failures += cleared_failures;
  return open;
}

}  // namespace gpuemu::check::kernels

GPUEMU_AVX512_WARNINGS_ON

#endif
