// ULP distances in float16 and bfloat16 for the comparison screen: inline and free of branches and
// calls, so the screen's loop stays tight. Equal to tensor::ulp_distance_f16/bf16 for finite values.
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
template <int kMantBits, int kExpBits>
inline std::int64_t ordered_small(double v) {
  constexpr int kBias = (1 << (kExpBits - 1)) - 1;
  constexpr int kEmin = 1 - kBias;
  constexpr int kShift = 52 - kMantBits;
  constexpr std::uint64_t kInf = ((std::uint64_t{1} << kExpBits) - 1) << kMantBits;
  constexpr std::uint64_t kRebias = static_cast<std::uint64_t>(1023 - kBias) << kMantBits;
  constexpr std::uint64_t kSmallestNormal = static_cast<std::uint64_t>(kEmin + 1023) << 52;
  constexpr double kSubnormalLimit = pow2(kEmin);
  constexpr double kQuantaPerUnit = pow2(kMantBits - kEmin);  // 1 / subnormal quantum
  const auto bits = std::bit_cast<std::uint64_t>(v);
  const std::uint64_t mag = bits & 0x7FFF'FFFF'FFFF'FFFFull;
  // Normal results: round the double's fraction to kMantBits bits (ties to even); a carry moves
  // into the exponent, and a carry out of the largest exponent lands exactly on Inf.
  const std::uint64_t rounded =
      (mag + ((std::uint64_t{1} << (kShift - 1)) - 1) + ((mag >> kShift) & 1)) >> kShift;
  const std::uint64_t normal = std::min(rounded - kRebias, kInf);
  // Subnormal results: the number of quanta, rounded to even by adding and removing 2^52 (exact for
  // values below 2^52, which the clamp guarantees; the clamp also maps NaN to the limit, so the
  // conversion below is always defined).
  const double a = std::fabs(v);
  const double quanta = (a < kSubnormalLimit ? a : kSubnormalLimit) * kQuantaPerUnit;
  const auto subnormal = static_cast<std::uint64_t>((quanta + 0x1p52) - 0x1p52);
  const auto magnitude = static_cast<std::int64_t>(mag >= kSmallestNormal ? normal : subnormal);
  return (bits >> 63) != 0 ? -magnitude : magnitude;
}

inline double ulp_f16_inline(double a, double b) {
  return static_cast<double>(std::abs(ordered_small<10, 5>(a) - ordered_small<10, 5>(b)));
}

inline double ulp_bf16_inline(double a, double b) {
  return static_cast<double>(std::abs(ordered_small<7, 8>(a) - ordered_small<7, 8>(b)));
}

}  // namespace gpuemu::check
