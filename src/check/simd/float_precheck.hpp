// The comparison's block pre-checks in float lanes (internal to element_stats.cpp): a Screen's
// thresholds rounded into floats with margins, and the loops that clear blocks the double screen
// would neither flag nor count a failure in (float32 against float32, 16-bit against float64).
#pragma once

#include <algorithm>
#include <bit>
#include <cfloat>
#include <cmath>
#include <cstddef>
#include <cstdint>

#include "check/simd/element_kernels.hpp"

namespace gpuemu::check::kernels {

// The float32-vs-float32 pre-check's view of a Screen: every threshold scaled down by 2^-20 (the
// margin for a few float roundings, all below 2^-21 together) and rounded toward zero into a float,
// so a float test can only be stricter; `usable` false when one is not a finite float. The ULP
// limit is capped at 2^22, so a pair within it is also exactly subtracted in float.
// atol_up and rtol_up are the tolerance scaled up by 2^-19 and rounded away from zero (Inf beyond
// FLT_MAX): a pre-check that counts failures tests "surely beyond the bound" against them.
struct FloatScreen {
  float atol, rtol, thr, rel, max_abs;
  float atol_up, rtol_up;
  std::uint32_t max_ulp;
  bool usable;
};

[[gnu::always_inline]] inline float float_down(double v) {
  const float f = static_cast<float>(std::min(v, static_cast<double>(FLT_MAX)));
  return static_cast<double>(f) > v ? std::nextafter(f, 0.0f) : f;
}

inline float float_up(double v) {
  if (!(v <= FLT_MAX)) return INFINITY;
  const float f = static_cast<float>(v);
  return static_cast<double>(f) < v ? std::nextafter(f, INFINITY) : f;
}

inline FloatScreen float_screen(const Screen& s) {
  constexpr double kDown = 1.0 - 0x1p-20;
  FloatScreen f{};
  const double values[] = {s.atol, s.rtol, s.worst_threshold * kSlack, s.max_rel * kSlack};
  f.usable = true;
  for (double v : values) f.usable = f.usable && v >= 0 && v <= FLT_MAX;
  f.atol = float_down(s.atol * kDown);
  f.rtol = float_down(s.rtol * kDown);
  f.thr = float_down(s.worst_threshold * kSlack * kDown);
  f.rel = float_down(s.max_rel * kSlack * kDown);
  f.max_abs = float_down(s.max_abs);
  f.atol_up = float_up(s.atol * (1.0 + 0x1p-19));
  f.rtol_up = float_up(s.rtol * (1.0 + 0x1p-19));
  f.max_ulp = static_cast<std::uint32_t>(std::min(s.max_ulp, 0x1p22));
  return f;
}

// Returns the blocks (bit b: block b) of a chunk of stored float32 pairs that the double screen must
// see; every other block is clear: finite, no failure, and no element above any running maximum or
// the worst list's threshold. Only pairs of the same sign at most 2^22 ULPs apart can clear: their
// distance is the difference of their bit patterns, and x - y is exact in float (y/2 <= x <= 2y, or
// a multiple of the subnormal quantum), so max_abs, itself such a difference, is tested exactly and
// elements that tie it stay clear. The other thresholds carry margins: |x - y| is scaled up by
// 2^-20 and 2^-126 added (subnormal results' error is absolute). NaN/Inf fail the max_abs test;
// a float bound that overflowed fails too, and with |x - y| at most the bound any other product
// that overflows had a true value above |x - y|.
template <class Out, class Ref>
[[gnu::always_inline]] inline std::uint32_t f32_precheck_body(Out out, Ref ref, std::size_t n,
                                                              const FloatScreen& f) {
  constexpr float kUp = 1.0f + 0x1p-20f;
  const std::uint32_t ulp_span = 2 * f.max_ulp;
  std::uint32_t open = 0;
  for (std::size_t block = 0; block * kBlock < n; ++block) {
    std::uint32_t bad = 0;
    const std::size_t end = std::min(n, (block + 1) * kBlock);
    for (std::size_t i = block * kBlock; i < end; ++i) {
      const float x = out.stored(i);
      const float y = ref.stored(i);
      const auto bx = std::bit_cast<std::int32_t>(x);
      const auto by = std::bit_cast<std::int32_t>(y);
      // |bx - by| <= max_ulp, in wrapping unsigned arithmetic (exact: finite patterns differ by
      // less than 2^32 - 2^23 and max_ulp is at most 2^22).
      const bool near =
          static_cast<std::uint32_t>(bx) - static_cast<std::uint32_t>(by) + f.max_ulp <= ulp_span;
      const bool same_sign = (bx ^ by) >= 0;
      const float exact = std::fabs(x - y);
      const float d = exact * kUp + 0x1p-126f;
      const float ay = std::fabs(y);
      // The pass rule, check::within_tolerance (check/pass_rule.hpp), in float with the bound rounded down.
      const float bound = f.atol + f.rtol * ay;
      const bool clear = near & same_sign & (exact <= f.max_abs) & (bound <= FLT_MAX) & (d <= bound) &
                         (d <= f.thr * bound) & (d <= f.rel * ay);
      bad |= clear ? 0u : 1u;
    }
    open |= bad != 0 ? std::uint32_t{1} << block : 0;
  }
  return open;
}

// The same pre-check for 16-bit outputs against float64 references: float16 outputs as the float32
// the prepass decoded (whose ULP test it ran), bfloat16 outputs from their stored bits (exact in
// float), with the screen's bfloat16 ULP test when kBf16Ulp. The reference is rounded to float,
// |y - float(y)| <= 2^-24 |float(y)| for |float(y)| >= 2^-126 (smaller references never clear), so
// |x - y| is at most |x - float(y)| + 2^-23 |float(y)| (which also covers the subtraction's own
// rounding); that is scaled up by 2^-20 and 2^-126 added, and tested against every rounded-down
// threshold, max_abs included. A bfloat16 reference that rounds through float onto a bfloat16
// midpoint (low 16 bits 0x8000) never clears: the screen decides whether it was double-rounded.
// NaN/Inf on either side and overflowed bounds fail the tests, as in the float32 pre-check.
template <bool kBf16Ulp, class Out>
[[gnu::always_inline]] inline std::uint32_t half_precheck_body(Out out, Raw<double> ref, std::size_t n,
                                                               const FloatScreen& f) {
  constexpr float kUp = 1.0f + 0x1p-20f;
  std::uint32_t open = 0;
  for (std::size_t block = 0; block * kBlock < n; ++block) {
    std::uint32_t bad = 0;
    const std::size_t end = std::min(n, (block + 1) * kBlock);
    for (std::size_t i = block * kBlock; i < end; ++i) {
      float x;
      if constexpr (requires { out.bits(i); }) {
        x = std::bit_cast<float>(static_cast<std::uint32_t>(out.bits(i)) << 16);
      } else {
        x = out.stored(i);
      }
      const float y = static_cast<float>(ref.stored(i));
      const float ay = std::fabs(y);
      const float d = (std::fabs(x - y) + ay * 0x1p-23f) * kUp + 0x1p-126f;
      // The pass rule, check::within_tolerance (check/pass_rule.hpp), in float with the bound rounded down.
      const float bound = f.atol + f.rtol * ay;
      bool clear = (ay >= FLT_MIN) & (d <= f.max_abs) & (bound <= FLT_MAX) & (d <= bound) &
                   (d <= f.thr * bound) & (d <= f.rel * ay);
      if constexpr (kBf16Ulp) {
        // bf16_ulp_may_exceed without the double comparison: every midpoint candidate stays open.
        const auto bits = std::bit_cast<std::uint32_t>(y);
        const std::uint32_t mag = bits & 0x7FFF'FFFFu;
        const auto rounded = static_cast<std::int32_t>((mag + 0x7FFFu + ((mag >> 16) & 1u)) >> 16);
        const std::int32_t negative = static_cast<std::int32_t>(bits) >> 31;
        const std::int32_t oy = (rounded ^ negative) - negative;
        const std::int32_t ox = ordered_bits16(out.bits(i));
        clear &= (ordered_distance(ox, oy) <= f.max_ulp) & ((mag & 0xFFFFu) != 0x8000u);
      }
      bad |= clear ? 0u : 1u;
    }
    open |= bad != 0 ? std::uint32_t{1} << block : 0;
  }
  return open;
}

}  // namespace gpuemu::check::kernels
