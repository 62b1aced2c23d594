// fp16 and bf16 decoding and round-to-nearest-even encoding straight from double, plus ULP
// distances. One implementation for the whole product: encoding must never go through float.
#include "tensor/half.hpp"

#include <bit>
#include <cmath>
#include <cstdlib>

namespace gpuemu::tensor {
namespace {

// A binary format with `kMantBits` stored mantissa bits and `kExpBits` exponent bits, stored
// in the low 16 bits of a uint16 with the sign in bit 15 (fp16: 10/5, bf16: 7/8).
template <int kMantBits, int kExpBits>
struct Small {
  static constexpr int kBias = (1 << (kExpBits - 1)) - 1;
  static constexpr int kEmin = 1 - kBias;  // exponent of the smallest normal
  static constexpr int kEmax = kBias;      // exponent of the largest finite value
  static constexpr std::uint16_t kExpMask = ((1u << kExpBits) - 1) << kMantBits;
  static constexpr std::uint16_t kMantMask = (1u << kMantBits) - 1;
};

// Rounds |value| (a double) to the small format by integer arithmetic on the double's own
// mantissa, so there is exactly one rounding step (ties to even) for normals and subnormals.
template <int kMantBits, int kExpBits>
std::uint16_t encode(double value) {
  using F = Small<kMantBits, kExpBits>;
  const auto bits = std::bit_cast<std::uint64_t>(value);
  const auto sign = static_cast<std::uint16_t>((bits >> 48) & 0x8000u);
  const int biased = static_cast<int>((bits >> 52) & 0x7FF);
  const std::uint64_t frac = bits & ((std::uint64_t{1} << 52) - 1);
  if (biased == 0x7FF) {
    if (frac != 0) {  // NaN: quiet, keep the top payload bits that fit
      const auto payload = static_cast<std::uint16_t>(frac >> (52 - kMantBits));
      return sign | F::kExpMask | static_cast<std::uint16_t>(1u << (kMantBits - 1)) | payload;
    }
    return sign | F::kExpMask;  // Inf
  }
  const int e = biased - 1023;  // exponent of a normal double; double subnormals are far below zero
  // Below half the smallest subnormal: rounds to zero (exactly half is e == kEmin-kMantBits-1, a
  // tie that the general path rounds to the even value zero).
  if (biased == 0 || e < F::kEmin - kMantBits - 1) {
    return sign;
  }
  if (e > F::kEmax) {
    return sign | F::kExpMask;
  }
  const std::uint64_t mant = frac | (std::uint64_t{1} << 52);  // value = mant * 2^(e-52)
  // The quantum of the target at this magnitude: 2^(max(e, emin) - kMantBits).
  const int shift = (52 - kMantBits) + (e < F::kEmin ? F::kEmin - e : 0);  // 42..53 for fp16
  std::uint64_t q = mant >> shift;
  const std::uint64_t rem = mant & ((std::uint64_t{1} << shift) - 1);
  const std::uint64_t half = std::uint64_t{1} << (shift - 1);
  if (rem > half || (rem == half && (q & 1) != 0)) {
    ++q;
  }
  // For normals q includes the implicit bit, so adding the exponent field (minus one) lets a
  // rounding carry move into the exponent; a carry out of kEmax lands exactly on Inf.
  const std::uint64_t exp_field = e < F::kEmin ? 0 : static_cast<std::uint64_t>(e - F::kEmin) << kMantBits;
  return sign | static_cast<std::uint16_t>(exp_field + q);
}

// Maps a sign-magnitude encoding to a signed integer whose order is the order of the values,
// with -0 and +0 both mapped to 0.
inline std::int64_t ordered16(std::uint16_t bits) {
  const std::int64_t magnitude = bits & 0x7FFF;
  return (bits & 0x8000) != 0 ? -magnitude : magnitude;
}

}  // namespace

// Branch-free so bulk decoding vectorises: all three cases are computed and one is selected.
double f16_to_double(std::uint16_t bits) {
  const std::uint64_t magnitude = bits & 0x7FFFu;
  const std::uint64_t exp = magnitude >> 10;
  // Normal: exponent rebias 15 -> 1023 and mantissa 10 -> 52 bits is one shift and one add.
  const double normal = std::bit_cast<double>((magnitude << 42) + (std::uint64_t{1023 - 15} << 52));
  // Zero and subnormals: the mantissa counts quanta of 2^-24 (exact int-to-double conversion).
  const double subnormal = static_cast<double>(magnitude) * 0x1p-24;
  // Inf and NaN: all-ones exponent, the mantissa (NaN payload) carried over.
  const double special = std::bit_cast<double>((magnitude << 42) | (std::uint64_t{0x7FF} << 52));
  const double value = exp == 0 ? subnormal : exp == 0x1F ? special : normal;
  const std::uint64_t sign = static_cast<std::uint64_t>(bits & 0x8000u) << 48;
  return std::bit_cast<double>(std::bit_cast<std::uint64_t>(value) | sign);
}

std::uint16_t double_to_f16(double value) {
  return encode<10, 5>(value);
}

double bf16_to_double(std::uint16_t bits) {
  // bfloat16 is the top half of a float32, so widening is exact (NaN stays NaN).
  return static_cast<double>(std::bit_cast<float>(static_cast<std::uint32_t>(bits) << 16));
}

std::uint16_t double_to_bf16(double value) {
  return encode<7, 8>(value);
}

float double_to_f32(double value) {
  return static_cast<float>(value);
}

// ULP distances: both values are first rounded to the dtype (a value that is not representable
// counts as its nearest representable neighbour; there is no fractional part), then mapped to
// ordered integers; the distance is the number of steps between them. 0 for equal values
// (including -0 vs +0); Inf counts as the step after the largest finite value; NaN gives NaN.
double ulp_distance_f16(double a, double b) {
  if (std::isnan(a) || std::isnan(b)) {
    return NAN;
  }
  return static_cast<double>(std::llabs(ordered16(double_to_f16(a)) - ordered16(double_to_f16(b))));
}

double ulp_distance_bf16(double a, double b) {
  if (std::isnan(a) || std::isnan(b)) {
    return NAN;
  }
  return static_cast<double>(std::llabs(ordered16(double_to_bf16(a)) - ordered16(double_to_bf16(b))));
}

double ulp_distance_f32(double a, double b) {
  if (std::isnan(a) || std::isnan(b)) {
    return NAN;
  }
  auto ordered = [](float f) {
    const auto bits = std::bit_cast<std::uint32_t>(f);
    const std::int64_t magnitude = bits & 0x7FFFFFFFu;
    return (bits & 0x80000000u) != 0 ? -magnitude : magnitude;
  };
  return static_cast<double>(std::llabs(ordered(static_cast<float>(a)) - ordered(static_cast<float>(b))));
}

double ulp_distance_f64(double a, double b) {
  if (std::isnan(a) || std::isnan(b)) {
    return NAN;
  }
  // Magnitudes fit in 63 bits, but their sum for opposite signs needs all 64: work unsigned.
  const auto ba = std::bit_cast<std::uint64_t>(a);
  const auto bb = std::bit_cast<std::uint64_t>(b);
  const std::uint64_t ma = ba & 0x7FFFFFFFFFFFFFFFull;
  const std::uint64_t mb = bb & 0x7FFFFFFFFFFFFFFFull;
  const bool na = (ba >> 63) != 0;
  const bool nb = (bb >> 63) != 0;
  if (na == nb) {
    return static_cast<double>(ma > mb ? ma - mb : mb - ma);
  }
  return static_cast<double>(ma + mb);
}

}  // namespace gpuemu::tensor
