// The screen's inline float16/bfloat16 ULP distances must equal the tensor module's definitions
// for every finite value: normals, subnormals, ties at every magnitude, zeros and overflow.
#include "check/simd/ulp16.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <random>
#include <vector>

#include "tensor/half.hpp"

namespace gpuemu::check {
namespace {

// Values around every power of two the formats can reach, exact ties between neighbours
// (half a quantum above a representable value), and random bit patterns.
std::vector<double> probe_values() {
  std::vector<double> values = {0.0,
                                -0.0,
                                1.0,
                                -1.0,
                                65504.0,
                                65519.99,
                                65520.0,
                                65536.0,
                                3.4e38,
                                3.39e38,
                                std::numeric_limits<double>::max(),
                                std::numeric_limits<double>::min(),
                                std::numeric_limits<double>::denorm_min(),
                                1e-300};
  for (int e = -140; e <= 130; ++e) {
    const double p = std::ldexp(1.0, e);
    for (int mant_bits : {7, 10}) {
      const double quantum = std::ldexp(p, -mant_bits);
      for (double k : {0.0, 1.0, 2.0, 3.0}) {
        for (double half : {0.5, 0.49999999, 0.50000001, 1.5}) {
          values.push_back(p + (k + half) * quantum);
          values.push_back(-(p + (k + half) * quantum));
        }
      }
      values.push_back(std::nextafter(p, 0.0));
      values.push_back(std::nextafter(p, 1e308));
    }
  }
  std::mt19937_64 rng(20261123);
  for (int i = 0; i < 200000; ++i) {
    double v;
    do {
      v = std::bit_cast<double>(rng());
    } while (!std::isfinite(v));
    values.push_back(v);
    // Most random bit patterns are far out of range: also draw magnitudes the formats hold.
    std::uniform_real_distribution<double> exponent(-150.0, 140.0);
    values.push_back((rng() & 1 ? -1.0 : 1.0) * std::exp2(exponent(rng)));
  }
  return values;
}

TEST(Ulp16, Float16MatchesTheTensorDefinition) {
  const auto values = probe_values();
  std::mt19937_64 rng(7);
  for (std::size_t i = 0; i < values.size(); ++i) {
    const double a = values[i];
    const double b = values[rng() % values.size()];
    ASSERT_EQ(ulp_f16_inline(a, b), tensor::ulp_distance_f16(a, b)) << a << " vs " << b;
    ASSERT_EQ(ulp_f16_inline(a, a * 1.0009765625), tensor::ulp_distance_f16(a, a * 1.0009765625)) << a;
  }
}

TEST(Ulp16, BFloat16MatchesTheTensorDefinition) {
  const auto values = probe_values();
  std::mt19937_64 rng(8);
  for (std::size_t i = 0; i < values.size(); ++i) {
    const double a = values[i];
    const double b = values[rng() % values.size()];
    ASSERT_EQ(ulp_bf16_inline(a, b), tensor::ulp_distance_bf16(a, b)) << a << " vs " << b;
    ASSERT_EQ(ulp_bf16_inline(a, a * 1.0078125), tensor::ulp_distance_bf16(a, a * 1.0078125)) << a;
  }
}

// The kernels read stored 16-bit values in place: decoding and the ordered integer of the stored
// bits must agree with the tensor module for all 65536 codes (NaN codes: any NaN).
TEST(Ulp16, RawDecodingMatchesTheTensorModuleForEveryCode) {
  for (std::uint32_t code = 0; code <= 0xFFFF; ++code) {
    const auto bits = static_cast<std::uint16_t>(code);
    const double f16 = tensor::f16_to_double(bits);
    const double bf16 = tensor::bf16_to_double(bits);
    if (std::isnan(f16)) {
      ASSERT_TRUE(std::isnan(f16_bits_to_double(bits))) << code;
    } else {
      ASSERT_EQ(std::bit_cast<std::uint64_t>(f16_bits_to_double(bits)), std::bit_cast<std::uint64_t>(f16))
          << code;
      ASSERT_EQ(ordered_bits16(bits), (ordered_small<10, 5>(f16))) << code;
    }
    if (std::isnan(bf16)) {
      ASSERT_TRUE(std::isnan(bf16_bits_to_double(bits))) << code;
    } else {
      ASSERT_EQ(std::bit_cast<std::uint64_t>(bf16_bits_to_double(bits)), std::bit_cast<std::uint64_t>(bf16))
          << code;
      ASSERT_EQ(ordered_bits16(bits), (ordered_small<7, 8>(bf16))) << code;
    }
  }
}

}  // namespace
}  // namespace gpuemu::check
