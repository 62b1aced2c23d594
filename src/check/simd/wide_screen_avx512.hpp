// The comparison's screen on AVX-512 CPUs (internal to element_stats.cpp): contiguous float64,
// float32, float16 and bfloat16 outputs against float64/float32 references, in double lanes.
#pragma once

#include <algorithm>
#include <bit>
#include <cfloat>
#include <cstddef>
#include <cstdint>
#include <type_traits>

#include "check/simd/element_kernels.hpp"

namespace gpuemu::check::kernels {

// A Screen as the wide screen uses it. Flags are a superset of screen_body's: an element the
// wide screen leaves unflagged changes no statistic and, unless failures are counted, does not fail.
//
// - Thresholds are compared as integers: a non-negative double orders like its bit pattern, so
//   min() and ">" run on the integer pipes (on Zen 4 the floating-point adder is the bottleneck).
//   A NaN product (0 * Inf) has its sign set or a pattern above Inf, so the unsigned minimum
//   ignores it, as std::min(a, NaN) does in screen_body.
// - max_abs is capped at DBL_MAX, so a pair with NaN or Inf on either side (|x - y| is NaN or Inf)
//   is always flagged; the caller looks for NaN/Inf in flagged sub-blocks only (wide_nonfinite).
// - ULPs: in double bit patterns, the grid of a narrower float type is every 2^shift patterns
//   (shift 29 for float32, 42 float16, 45 bfloat16, 0 float64) and rounding to nearest in value is
//   rounding to nearest in patterns between neighbours; where the grid is coarser (subnormals)
//   each step spans more patterns. So |bits(y) - bits(x)| < (max_ulp + 1/2) 2^shift means that y
//   rounds within max_ulp steps of x. Pairs of opposite signs (also +0 against -0) differ by at
//   least 2^52 patterns and are flagged; max_ulp is capped so that the limit stays below 2^51.
// - thr * bound and rel * |y| are rounded toward zero (embedded rounding), so a product in the
//   subnormal range, whose rounding error is absolute rather than relative, still never exceeds
//   the exact one; thr and rel below 2^-1000 count as 0 (a quotient below DBL_MIN that the
//   precise pass compares with them has such an error itself).
// - failures: only when the worst list's threshold is 1 or more. Below 1 every failing element
//   is flagged (|x - y| > bound >= thr * bound), and the reduction counts them.
struct WideScreen {
  double atol, rtol, thr, rel;
  std::uint64_t max_abs_bits;
  std::uint64_t ulp_limit;  // largest |bits(y) - bits(x)| that is not flagged
  bool count_failures;
};

// shift: log2 of the patterns between neighbours of the output's type, in double bit patterns.
inline WideScreen wide_screen(const Screen& s, int shift) {
  WideScreen w{};
  w.atol = s.atol;
  w.rtol = s.rtol;
  w.thr = tiny_as_zero(s.worst_threshold * kSlack);
  w.rel = tiny_as_zero(s.max_rel * kSlack);
  w.max_abs_bits = std::bit_cast<std::uint64_t>(std::min(s.max_abs, DBL_MAX));
  const double cap = static_cast<double>(std::uint64_t{1} << (51 - shift));
  const auto ulp = static_cast<std::uint64_t>(std::min(s.max_ulp, cap));
  w.ulp_limit = shift == 0 ? ulp : (ulp << shift) + (std::uint64_t{1} << (shift - 1)) - 1;
  w.count_failures = !(w.thr < 1.0);
  return w;
}

template <class Out>
constexpr int wide_ulp_shift() {
  if constexpr (std::is_same_v<Out, Raw<double>>) return 0;
  if constexpr (std::is_same_v<Out, Raw<float>>) return 29;
  if constexpr (std::is_same_v<Out, RawF16>) return 42;
  return 45;  // RawBF16
}

// The wide screen flags pieces of this many elements: a pair that raises a statistic costs the
// reduction that many elements (most flagged pairs are such records).
constexpr std::size_t kPiece = 16;

// What the wide screen found: bit p of `flagged` for the kPiece elements from p * kPiece.
struct WideResult {
  std::uint64_t flagged = 0;
  std::int64_t failures = 0;  // counted when asked to
};

}  // namespace gpuemu::check::kernels

#if defined(__x86_64__) && defined(__GNUC__)

#include <immintrin.h>

#define GPUEMU_AVX512_TARGET "avx2,f16c,avx512f,avx512vl,avx512dq,avx512bw,popcnt"

// GCC 12's AVX-512 intrinsics start from an "undefined" register that -Wmaybe-uninitialized (or,
// inlined into a test, -Wuninitialized) reports wherever they are inlined (GCC bug 105593, fixed
// in 13): the headers that call them put their code between these two.
#if defined(__clang__)
#define GPUEMU_AVX512_WARNINGS_OFF _Pragma("GCC diagnostic push")
#else
#define GPUEMU_AVX512_WARNINGS_OFF                                                           \
  _Pragma("GCC diagnostic push") _Pragma("GCC diagnostic ignored \"-Wmaybe-uninitialized\"") \
      _Pragma("GCC diagnostic ignored \"-Wuninitialized\"")
#endif
#define GPUEMU_AVX512_WARNINGS_ON _Pragma("GCC diagnostic pop")

GPUEMU_AVX512_WARNINGS_OFF

namespace gpuemu::check::kernels {

// Sixteen stored float16 (Out RawF16) or bfloat16 outputs from p on as floats, exactly (subnormals
// and NaN/Inf included). kTail: only the lanes of `valid` are read, the others are zeros.
template <class Out, bool kTail>
[[gnu::always_inline, gnu::target(GPUEMU_AVX512_TARGET)]] inline __m512 load_half16(const std::byte* p,
                                                                                    __mmask16 valid) {
  const __m256i h =
      kTail ? _mm256_maskz_loadu_epi16(valid, p) : _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p));
  if constexpr (std::is_same_v<Out, RawF16>) {
    return _mm512_cvtph_ps(h);
  } else {
    return _mm512_castsi512_ps(_mm512_slli_epi32(_mm512_cvtepu16_epi32(h), 16));
  }
}

// Sixteen pairs from element i on, exactly as doubles (x0/y0 elements i..i+7, x1/y1 the next
// eight). kTail: only the lanes of `valid` are read, the others are zeros.
template <class Out, class Ref, bool kTail>
[[gnu::always_inline, gnu::target(GPUEMU_AVX512_TARGET)]] inline void load16(Out out, Ref ref, std::size_t i,
                                                                             __mmask16 valid, __m512d& x0,
                                                                             __m512d& x1, __m512d& y0,
                                                                             __m512d& y1) {
  const auto lo = static_cast<__mmask8>(valid), hi = static_cast<__mmask8>(valid >> 8);
  if constexpr (std::is_same_v<Ref, Raw<double>>) {
    const auto* y = reinterpret_cast<const double*>(ref.p) + i;
    y0 = kTail ? _mm512_maskz_loadu_pd(lo, y) : _mm512_loadu_pd(y);
    y1 = kTail ? _mm512_maskz_loadu_pd(hi, y + 8) : _mm512_loadu_pd(y + 8);
  } else {
    const auto* y = reinterpret_cast<const float*>(ref.p) + i;
    y0 = _mm512_cvtps_pd(kTail ? _mm256_maskz_loadu_ps(lo, y) : _mm256_loadu_ps(y));
    y1 = _mm512_cvtps_pd(kTail ? _mm256_maskz_loadu_ps(hi, y + 8) : _mm256_loadu_ps(y + 8));
  }
  if constexpr (std::is_same_v<Out, Raw<double>>) {
    const auto* x = reinterpret_cast<const double*>(out.p) + i;
    x0 = kTail ? _mm512_maskz_loadu_pd(lo, x) : _mm512_loadu_pd(x);
    x1 = kTail ? _mm512_maskz_loadu_pd(hi, x + 8) : _mm512_loadu_pd(x + 8);
  } else if constexpr (std::is_same_v<Out, Raw<float>>) {
    const auto* x = reinterpret_cast<const float*>(out.p) + i;
    x0 = _mm512_cvtps_pd(kTail ? _mm256_maskz_loadu_ps(lo, x) : _mm256_loadu_ps(x));
    x1 = _mm512_cvtps_pd(kTail ? _mm256_maskz_loadu_ps(hi, x + 8) : _mm256_loadu_ps(x + 8));
  } else {
    const __m512 f = load_half16<Out, kTail>(out.p + 2 * i, valid);
    x0 = _mm512_cvtps_pd(_mm512_castps512_ps256(f));
    x1 = _mm512_cvtps_pd(_mm512_extractf32x8_ps(f, 1));
  }
}

// Calls body(i, valid) for every 16 elements of the sub-blocks in `subs` (bit b: the kSubBlock
// elements from b * kSubBlock, within n), valid masking the last few; then done(b) per sub-block.
template <class Body, class Done>
[[gnu::always_inline, gnu::target(GPUEMU_AVX512_TARGET)]] inline void for_each_sub_block(std::uint32_t subs,
                                                                                         std::size_t n,
                                                                                         Body&& body,
                                                                                         Done&& done) {
  static_assert(kSubBlock % 16 == 0);
  for (; subs != 0; subs &= subs - 1) {
    const auto b = static_cast<std::size_t>(std::countr_zero(subs));
    const std::size_t begin = b * kSubBlock;
    if (begin >= n) break;
    const std::size_t end = std::min(n, begin + kSubBlock);
    std::size_t i = begin;
    for (; i + 16 <= end; i += 16) body.template operator()<false>(i, __mmask16{0xFFFF});
    if (i < end) body.template operator()<true>(i, static_cast<__mmask16>((1u << (end - i)) - 1));
    done(b);
  }
}

// Flags (per piece) among the sub-blocks in `subs`, and with kCountFailures their failures.
template <class Out, class Ref, bool kCountFailures>
[[gnu::always_inline, gnu::target(GPUEMU_AVX512_TARGET)]] inline WideResult wide_screen_avx512(
    Out out, Ref ref, std::size_t n, const WideScreen& w, std::uint32_t subs) {
  const __m512i magnitude = _mm512_set1_epi64(0x7FFF'FFFF'FFFF'FFFF);
  const __m512d atol = _mm512_set1_pd(w.atol);
  const __m512d rtol = _mm512_set1_pd(w.rtol);
  const __m512d thr = _mm512_set1_pd(w.thr);
  const __m512d rel = _mm512_set1_pd(w.rel);
  const __m512i max_abs = _mm512_set1_epi64(static_cast<long long>(w.max_abs_bits));
  const __m512i ulp_limit = _mm512_set1_epi64(static_cast<long long>(w.ulp_limit));
  const __m512i minus_one = _mm512_set1_epi64(-1);
  __m512i failures = _mm512_setzero_si512();
  __m512i flags = _mm512_setzero_si512();

  // Eight pairs: flags in the sign bits ORed into `flags`, failures counted per lane.
  const auto eight = [&](__m512d x, __m512d y) __attribute__((always_inline, target(GPUEMU_AVX512_TARGET))) {
    const __m512i d = _mm512_and_si512(_mm512_castpd_si512(_mm512_sub_pd(x, y)), magnitude);
    const __m512d ay = _mm512_castsi512_pd(_mm512_and_si512(_mm512_castpd_si512(y), magnitude));
    // The pass rule, check::within_tolerance (check/pass_rule.hpp), in double lanes.
    const __m512d bound = _mm512_add_pd(atol, _mm512_mul_pd(rtol, ay));
    if constexpr (kCountFailures) {
      const __mmask8 failing = _mm512_cmpgt_epu64_mask(d, _mm512_castpd_si512(bound));
      failures = _mm512_mask_sub_epi64(failures, failing, failures, minus_one);
    }
    constexpr int kDown = _MM_FROUND_TO_ZERO | _MM_FROUND_NO_EXC;
    const __m512i limit = _mm512_min_epu64(
        _mm512_min_epu64(max_abs, _mm512_castpd_si512(_mm512_mul_round_pd(thr, bound, kDown))),
        _mm512_castpd_si512(_mm512_mul_round_pd(rel, ay, kDown)));
    const __m512i beyond = _mm512_sub_epi64(limit, d);  // negative where d > limit
    const __m512i patterns =
        _mm512_abs_epi64(_mm512_sub_epi64(_mm512_castpd_si512(y), _mm512_castpd_si512(x)));
    const __m512i ulp_beyond = _mm512_sub_epi64(ulp_limit, patterns);    // negative past the limit
    flags = _mm512_ternarylogic_epi64(flags, beyond, ulp_beyond, 0xFE);  // a | b | c
  };
  static_assert(kPiece == 16, "one piece per 16-element step");
  WideResult result;
  for_each_sub_block(
      subs, n,
      [&]<bool kTail>(std::size_t i, __mmask16 valid)
          __attribute__((always_inline, target(GPUEMU_AVX512_TARGET))) {
            __m512d x0, x1, y0, y1;
            load16<Out, Ref, kTail>(out, ref, i, valid, x0, x1, y0, y1);
            eight(x0, y0);
            eight(x1, y1);
            result.flagged |= _mm512_movepi64_mask(flags) != 0 ? std::uint64_t{1} << (i / kPiece) : 0;
            flags = _mm512_setzero_si512();
          },
      [](std::size_t) {});
  if constexpr (kCountFailures) {
    alignas(64) std::int64_t lanes[8];  // not _mm512_reduce_add_epi64: GCC 12 warns inside it
    _mm512_store_si512(lanes, failures);
    for (const std::int64_t lane : lanes) result.failures += lane;
  }
  return result;
}

// Whether some pair of the pieces in `pieces` has NaN or Inf on either side (or a difference that
// overflows, which the reduction would handle too): those chunks take the precise pass.
template <class Out, class Ref>
[[gnu::always_inline, gnu::target(GPUEMU_AVX512_TARGET)]] inline bool wide_nonfinite_avx512(
    Out out, Ref ref, std::size_t n, std::uint64_t pieces) {
  const __m512i magnitude = _mm512_set1_epi64(0x7FFF'FFFF'FFFF'FFFF);
  __m512i largest = _mm512_setzero_si512();
  for (; pieces != 0; pieces &= pieces - 1) {
    const std::size_t i = static_cast<std::size_t>(std::countr_zero(pieces)) * kPiece;
    if (i >= n) break;
    __m512d x0, x1, y0, y1;
    if (i + 16 <= n) {
      load16<Out, Ref, false>(out, ref, i, 0xFFFF, x0, x1, y0, y1);
    } else {
      load16<Out, Ref, true>(out, ref, i, static_cast<__mmask16>((1u << (n - i)) - 1), x0, x1, y0, y1);
    }
    const __m512i d0 = _mm512_and_si512(_mm512_castpd_si512(_mm512_sub_pd(x0, y0)), magnitude);
    const __m512i d1 = _mm512_and_si512(_mm512_castpd_si512(_mm512_sub_pd(x1, y1)), magnitude);
    largest = _mm512_max_epu64(largest, _mm512_max_epu64(d0, d1));
  }
  return _mm512_cmpge_epu64_mask(largest, _mm512_set1_epi64(0x7FF0'0000'0000'0000)) != 0;
}

}  // namespace gpuemu::check::kernels

GPUEMU_AVX512_WARNINGS_ON

#endif
