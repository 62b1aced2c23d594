// ULP distances and raw decoding of float16 and bfloat16 for the comparison's hot loops: inline and
// free of branches and calls so they vectorise. Equal to tensor::ulp_distance_f16/bf16 and
// tensor::f16_to_double/bf16_to_double (ulp16_test pins both).
#pragma once

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>

namespace gpuemu::check {

// 2^e at compile time (exact: every power used here is a normal double).
consteval double pow2(int e) {
  double r = 1.0;
  for (; e > 0; --e) r *= 2.0;
  for (; e < 0; ++e) r /= 2.0;
  return r;
}

// The ordered integer (sign-magnitude folded, -0 and +0 both 0) of `v` rounded to nearest-even in a
// format with kMantBits fraction and kExpBits exponent bits, as tensor::double_to_f16/bf16 rounds:
// values beyond the largest finite one give Inf. NaN gives some value (callers flag NaN themselves).
// Always inlined: the kernels that call this are compiled for several targets (AVX2, AVX-512), and
// an out-of-line copy would run at the baseline target and stop the loop vectorising.
template <int kMantBits, int kExpBits>
[[gnu::always_inline]] inline std::int64_t ordered_small(double v) {
  constexpr int kBias = (1 << (kExpBits - 1)) - 1;
  constexpr int kEmin = 1 - kBias;
  constexpr int kShift = 52 - kMantBits;
  constexpr std::uint64_t kInf = ((std::uint64_t{1} << kExpBits) - 1) << kMantBits;
  constexpr std::uint64_t kRebias = static_cast<std::uint64_t>(1023 - kBias) << kMantBits;
  constexpr std::uint64_t kSmallestNormal = static_cast<std::uint64_t>(kEmin + 1023) << 52;
  constexpr double kSubnormalLimit = pow2(kEmin);
  constexpr double kQuantaPerUnit = pow2(kMantBits - kEmin);  // 1 / subnormal quantum
  const auto bits = std::bit_cast<std::int64_t>(v);
  const std::int64_t mag = bits & 0x7FFF'FFFF'FFFF'FFFFll;
  // Normal results: round the double's fraction to kMantBits bits (ties to even); a carry moves
  // into the exponent, and a carry out of the largest exponent lands exactly on Inf. Everything is
  // signed 64-bit integer arithmetic (all values are below 2^63) and every choice a mask, so loops
  // over this vectorise.
  const std::int64_t rounded =
      (mag + ((std::int64_t{1} << (kShift - 1)) - 1) + ((mag >> kShift) & 1)) >> kShift;
  const std::int64_t unclamped = rounded - static_cast<std::int64_t>(kRebias);
  const std::int64_t overflow = -static_cast<std::int64_t>(unclamped > static_cast<std::int64_t>(kInf));
  const std::int64_t normal = (unclamped & ~overflow) | (static_cast<std::int64_t>(kInf) & overflow);
  // Subnormal results: the number of quanta, rounded to even by adding 2^52, read from the sum's
  // low mantissa bits (exact for values below 2^52, which the clamp guarantees). The clamp compares
  // bit patterns, which order non-negative doubles, and maps NaN to the limit too.
  const double a = std::bit_cast<double>(std::min(mag, std::bit_cast<std::int64_t>(kSubnormalLimit)));
  const std::int64_t subnormal =
      std::bit_cast<std::int64_t>(a * kQuantaPerUnit + 0x1p52) - std::bit_cast<std::int64_t>(0x1p52);
  const std::int64_t is_normal =
      -static_cast<std::int64_t>(mag >= static_cast<std::int64_t>(kSmallestNormal));
  const std::int64_t magnitude = (normal & is_normal) | (subnormal & ~is_normal);
  const std::int64_t negative = bits >> 63;  // all ones for a negative value
  return (magnitude ^ negative) - negative;
}

// The ordered integer of a stored 16-bit value (sign-magnitude folded, -0 and +0 both 0): equal to
// ordered_small of its decoded value for every finite value, without rounding anything.
[[gnu::always_inline]] inline std::int32_t ordered_bits16(std::uint16_t bits) {
  const std::int32_t magnitude = bits & 0x7FFF;
  return (bits & 0x8000) != 0 ? -magnitude : magnitude;
}

// Stored float16 to double: the three cases are computed and one selected, so loops vectorise.
[[gnu::always_inline]] inline double f16_bits_to_double(std::uint16_t bits) {
  const std::uint64_t magnitude = bits & 0x7FFFu;
  const std::uint64_t exponent = magnitude >> 10;
  const std::uint64_t sign = static_cast<std::uint64_t>(bits & 0x8000u) << 48;
  // Normal: rebias the exponent (15 -> 1023) and widen the mantissa (10 -> 52 bits) in one add.
  const std::uint64_t normal = (magnitude << 42) + (std::uint64_t{1023 - 15} << 52);
  // Zero and subnormals: the mantissa counts quanta of 2^-24 (exact).
  const std::uint64_t subnormal =
      std::bit_cast<std::uint64_t>(static_cast<double>(static_cast<std::int32_t>(magnitude)) * 0x1p-24);
  // Inf and NaN: all-ones exponent, the NaN payload carried over.
  const std::uint64_t special = (magnitude << 42) | 0x7FF0'0000'0000'0000ull;
  // Masks rather than conditional expressions: GCC 12 vectorises these.
  const std::uint64_t is_subnormal = -static_cast<std::uint64_t>(exponent == 0);
  const std::uint64_t is_special = -static_cast<std::uint64_t>(exponent == 31);
  const std::uint64_t chosen =
      (subnormal & is_subnormal) | (special & is_special) | (normal & ~(is_subnormal | is_special));
  return std::bit_cast<double>(chosen | sign);
}

// Stored bfloat16 to double: the upper half of a float32, converted exactly.
[[gnu::always_inline]] inline double bf16_bits_to_double(std::uint16_t bits) {
  return static_cast<double>(std::bit_cast<float>(static_cast<std::uint32_t>(bits) << 16));
}

inline double ulp_f16_inline(double a, double b) {
  return static_cast<double>(std::abs(ordered_small<10, 5>(a) - ordered_small<10, 5>(b)));
}

inline double ulp_bf16_inline(double a, double b) {
  return static_cast<double>(std::abs(ordered_small<7, 8>(a) - ordered_small<7, 8>(b)));
}

}  // namespace gpuemu::check
