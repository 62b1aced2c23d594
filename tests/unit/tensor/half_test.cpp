// Exhaustive and randomised checks of fp16/bf16 decoding and encoding against independent
// oracles: GCC's _Float16 (libgcc's soft-fp conversions) and a brute-force nearest-even search.
#include "tensor/half.hpp"

#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <random>

namespace gpuemu::tensor {
namespace {

std::uint16_t gcc_f16_bits(double v) {
  const _Float16 h = static_cast<_Float16>(v);
  std::uint16_t bits;
  std::memcpy(&bits, &h, 2);
  return bits;
}

double gcc_f16_value(std::uint16_t bits) {
  _Float16 h;
  std::memcpy(&h, &bits, 2);
  return static_cast<double>(h);
}

bool same_double(double a, double b) {
  return std::bit_cast<std::uint64_t>(a) == std::bit_cast<std::uint64_t>(b) ||
         (std::isnan(a) && std::isnan(b));
}

TEST(Half, EveryF16PatternDecodesLikeGcc) {
  for (std::uint32_t b = 0; b < 65536; ++b) {
    const auto bits = static_cast<std::uint16_t>(b);
    const double ours = f16_to_double(bits);
    ASSERT_TRUE(same_double(ours, gcc_f16_value(bits))) << std::hex << b;
    ASSERT_EQ(std::signbit(ours), (b & 0x8000) != 0) << std::hex << b;
    const bool is_nan = (b & 0x7C00) == 0x7C00 && (b & 0x3FF) != 0;
    ASSERT_EQ(std::isnan(ours), is_nan) << std::hex << b;
    if (!is_nan) {
      ASSERT_EQ(double_to_f16(ours), bits) << std::hex << b;
    } else {
      ASSERT_TRUE(std::isnan(f16_to_double(double_to_f16(ours)))) << std::hex << b;
    }
  }
}

TEST(Half, F16SubnormalsAndSpecials) {
  EXPECT_EQ(f16_to_double(0x0001), std::ldexp(1.0, -24));
  EXPECT_EQ(f16_to_double(0x03FF), 1023 * std::ldexp(1.0, -24));
  EXPECT_EQ(f16_to_double(0x0400), std::ldexp(1.0, -14));
  EXPECT_EQ(f16_to_double(0x7BFF), 65504.0);
  EXPECT_EQ(f16_to_double(0x7C00), INFINITY);
  EXPECT_EQ(f16_to_double(0xFC00), -INFINITY);
  EXPECT_TRUE(std::isnan(f16_to_double(0x7C01)));
  EXPECT_TRUE(std::isnan(f16_to_double(0xFE00)));
  EXPECT_TRUE(std::signbit(f16_to_double(0x8000)));
  EXPECT_EQ(f16_to_double(0x8000), 0.0);
}

TEST(Half, F16EncodeEdgeCases) {
  EXPECT_EQ(double_to_f16(65504.0), 0x7BFF);
  EXPECT_EQ(double_to_f16(65519.99999), 0x7BFF);
  EXPECT_EQ(double_to_f16(65520.0), 0x7C00);  // max + half ulp: tie to even goes to Inf
  EXPECT_EQ(double_to_f16(-65520.0), 0xFC00);
  EXPECT_EQ(double_to_f16(1e300), 0x7C00);
  EXPECT_EQ(double_to_f16(INFINITY), 0x7C00);
  EXPECT_EQ(double_to_f16(-INFINITY), 0xFC00);
  EXPECT_EQ(double_to_f16(std::ldexp(1.0, -24)), 0x0001);
  EXPECT_EQ(double_to_f16(std::ldexp(1.0, -25)), 0x0000);  // tie between 0 and 2^-24: even is 0
  EXPECT_EQ(double_to_f16(-std::ldexp(1.0, -25)), 0x8000);
  EXPECT_EQ(double_to_f16(std::nextafter(std::ldexp(1.0, -25), 1.0)), 0x0001);
  EXPECT_EQ(double_to_f16(3 * std::ldexp(1.0, -25)), 0x0002);  // 1.5 quanta: tie to even 2
  EXPECT_EQ(double_to_f16(5 * std::ldexp(1.0, -25)), 0x0002);  // 2.5 quanta: tie to even 2
  EXPECT_EQ(double_to_f16(std::ldexp(1023.5, -24)), 0x0400);   // rounds up into the smallest normal
  EXPECT_EQ(double_to_f16(5e-324), 0x0000);                    // double subnormal
  EXPECT_EQ(double_to_f16(-0.0), 0x8000);
  EXPECT_EQ(double_to_f16(0.0), 0x0000);
  EXPECT_EQ(double_to_f16(1.0), 0x3C00);
  EXPECT_EQ(double_to_f16(1.0 + std::ldexp(1.0, -11)), 0x3C00);  // tie: 1.0 is even
  EXPECT_EQ(double_to_f16(1.0 + 3 * std::ldexp(1.0, -11)), 0x3C02);
  EXPECT_EQ(double_to_f16(std::nextafter(1.0 + std::ldexp(1.0, -11), 2.0)), 0x3C01);
  EXPECT_TRUE(std::isnan(f16_to_double(double_to_f16(NAN))));
  EXPECT_TRUE(std::isnan(f16_to_double(double_to_f16(-NAN))));
}

// A value that float rounding would move first: 1 + 2^-11 + 2^-40 rounds up in fp16, but through
// float it becomes exactly the tie 1 + 2^-11 and then rounds down to even.
TEST(Half, F16EncodeHasNoDoubleRounding) {
  const double v = 1.0 + std::ldexp(1.0, -11) + std::ldexp(1.0, -40);
  EXPECT_EQ(static_cast<double>(static_cast<float>(v)), 1.0 + std::ldexp(1.0, -11));
  EXPECT_EQ(double_to_f16(v), 0x3C01);
  EXPECT_EQ(gcc_f16_bits(v), 0x3C01);
}

TEST(Half, F16EncodeMatchesGccOnRandomDoubles) {
  std::mt19937_64 gen(1234);
  std::uniform_int_distribution<int> exponent(-30, 17);
  std::uniform_int_distribution<std::uint16_t> pattern(0, 0xFFFF);
  for (int i = 0; i < 3'000'000; ++i) {
    double v;
    switch (i % 4) {
      case 0:  // any magnitude around the fp16 range, full double mantissa
        v = std::ldexp(std::uniform_real_distribution<double>(1.0, 2.0)(gen), exponent(gen));
        break;
      case 1: {  // exact halfway points between neighbours, and one double ulp either side
        const std::uint16_t b = pattern(gen) & 0x7BFE;
        const double lo = f16_to_double(b);
        const double hi = f16_to_double(static_cast<std::uint16_t>(b + 1));
        v = lo + (hi - lo) / 2;
        if (i % 3 == 1) v = std::nextafter(v, INFINITY);
        if (i % 3 == 2) v = std::nextafter(v, -INFINITY);
        break;
      }
      case 2:  // the subnormal range
        v = std::uniform_real_distribution<double>(0.0, std::ldexp(1.0, -13))(gen);
        break;
      default:  // arbitrary bit patterns of doubles
        v = std::bit_cast<double>(gen());
        break;
    }
    if (gen() & 1) v = -v;
    if (std::isnan(v)) continue;
    ASSERT_EQ(double_to_f16(v), gcc_f16_bits(v)) << std::hexfloat << v;
  }
}

double bf16_oracle_value(std::uint16_t bits) {
  return static_cast<double>(std::bit_cast<float>(static_cast<std::uint32_t>(bits) << 16));
}

TEST(Half, EveryBf16PatternDecodesAsTopHalfOfFloat) {
  for (std::uint32_t b = 0; b < 65536; ++b) {
    const auto bits = static_cast<std::uint16_t>(b);
    const double ours = bf16_to_double(bits);
    ASSERT_TRUE(same_double(ours, bf16_oracle_value(bits))) << std::hex << b;
    if (!std::isnan(ours)) {
      ASSERT_EQ(double_to_bf16(ours), bits) << std::hex << b;
    } else {
      ASSERT_TRUE(std::isnan(bf16_to_double(double_to_bf16(ours))));
    }
  }
  EXPECT_EQ(bf16_to_double(0x0001), std::ldexp(1.0, -133));
  EXPECT_EQ(bf16_to_double(0x7F7F), std::ldexp(255.0, 120));
}

// Independent bf16 oracle: search the two bracketing bf16 values among all non-negative finite
// patterns (they are monotonic in the bits) and pick the nearer, ties to the even pattern.
std::uint16_t bf16_brute_force(double v) {
  const bool neg = std::signbit(v);
  const double a = std::fabs(v);
  const double max_finite = bf16_oracle_value(0x7F7F);
  const double overflow = max_finite + (max_finite - bf16_oracle_value(0x7F7E)) / 2;
  std::uint16_t out;
  if (a >= overflow) {
    out = 0x7F80;
  } else {
    std::uint16_t lo = 0, hi = 0x7F7F;  // largest pattern whose value <= a
    while (lo < hi) {
      const std::uint16_t mid = static_cast<std::uint16_t>((lo + hi + 1) / 2);
      if (bf16_oracle_value(mid) <= a)
        lo = mid;
      else
        hi = static_cast<std::uint16_t>(mid - 1);
    }
    const double below = bf16_oracle_value(lo);
    const double above = lo == 0x7F7F ? overflow * 2 : bf16_oracle_value(static_cast<std::uint16_t>(lo + 1));
    const double dl = a - below, du = above - a;  // exact: all values are within 2^-133..2^128 of each other
    out = dl < du   ? lo
          : du < dl ? static_cast<std::uint16_t>(lo + 1)
                    : ((lo & 1) == 0 ? lo : static_cast<std::uint16_t>(lo + 1));
  }
  return static_cast<std::uint16_t>(out | (neg ? 0x8000 : 0));
}

TEST(Half, Bf16EncodeMatchesBruteForce) {
  std::mt19937_64 gen(99);
  std::uniform_int_distribution<int> exponent(-140, 129);
  std::uniform_int_distribution<std::uint16_t> pattern(0, 0x7F7E);
  for (int i = 0; i < 1'000'000; ++i) {
    double v;
    if (i % 2 == 0) {
      v = std::ldexp(std::uniform_real_distribution<double>(1.0, 2.0)(gen), exponent(gen));
    } else {
      const std::uint16_t b = pattern(gen);
      const double lo = bf16_oracle_value(b), hi = bf16_oracle_value(static_cast<std::uint16_t>(b + 1));
      v = lo + (hi - lo) / 2;
      if (i % 3 == 1) v = std::nextafter(v, INFINITY);
      if (i % 3 == 2) v = std::nextafter(v, -INFINITY);
    }
    if (gen() & 1) v = -v;
    ASSERT_EQ(double_to_bf16(v), bf16_brute_force(v)) << std::hexfloat << v;
  }
}

TEST(Half, Bf16OverflowBoundary) {
  const double max_finite = bf16_oracle_value(0x7F7F);
  const double boundary = std::ldexp(255.5, 120);  // max + half ulp
  EXPECT_EQ(double_to_bf16(max_finite), 0x7F7F);
  EXPECT_EQ(double_to_bf16(std::nextafter(boundary, 0.0)), 0x7F7F);
  EXPECT_EQ(double_to_bf16(boundary), 0x7F80);
  EXPECT_EQ(double_to_bf16(-boundary), 0xFF80);
  EXPECT_EQ(double_to_bf16(std::ldexp(1.0, -134)), 0x0000);  // half the smallest subnormal: even is 0
  EXPECT_EQ(double_to_bf16(std::ldexp(3.0, -135)), 0x0001);  // 0.75 quantum rounds to 1
  // float's own conversion agrees on values float represents exactly.
  EXPECT_EQ(double_to_bf16(static_cast<double>(std::bit_cast<float>(0x3F808000u))), 0x3F80);  // tie, even
  EXPECT_EQ(double_to_bf16(static_cast<double>(std::bit_cast<float>(0x3F818000u))), 0x3F82);  // tie, even up
}

TEST(Half, UlpDistances) {
  EXPECT_EQ(ulp_distance_f16(1.0, 1.0), 0);
  EXPECT_EQ(ulp_distance_f16(0.0, -0.0), 0);
  EXPECT_EQ(ulp_distance_f16(1.0, f16_to_double(0x3C01)), 1);
  EXPECT_EQ(ulp_distance_f16(f16_to_double(0x0001), f16_to_double(0x8001)), 2);
  EXPECT_EQ(ulp_distance_f16(65504.0, INFINITY), 1);
  EXPECT_EQ(ulp_distance_f16(1.0, 1.0 + 1e-6), 0);  // rounds to the same fp16 value
  EXPECT_EQ(ulp_distance_f16(1.0, 2.0), 1024);
  EXPECT_TRUE(std::isnan(ulp_distance_f16(NAN, 1.0)));
  EXPECT_EQ(ulp_distance_bf16(1.0, 2.0), 128);
  EXPECT_EQ(ulp_distance_bf16(-1.0, 1.0), 2 * 0x3F80);
  EXPECT_EQ(ulp_distance_f32(1.0, std::nextafter(1.0f, 2.0f)), 1);
  EXPECT_EQ(ulp_distance_f32(1.0, 2.0), 1 << 23);
  EXPECT_EQ(ulp_distance_f32(-0.0, 0.0), 0);
  EXPECT_EQ(ulp_distance_f64(1.0, std::nextafter(1.0, 2.0)), 1);
  EXPECT_EQ(ulp_distance_f64(-std::nextafter(0.0, 1.0), std::nextafter(0.0, 1.0)), 2);
  EXPECT_EQ(ulp_distance_f64(-1.0, 1.0), 2.0 * static_cast<double>(std::bit_cast<std::uint64_t>(1.0)));
}

}  // namespace
}  // namespace gpuemu::tensor
