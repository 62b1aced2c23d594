// Random cases for the comparison's screen and pre-check tests: thresholds at, beside and past a
// pair's own values, and 16-bit output/reference pairs at every edge the kernels have.
#pragma once

#include <algorithm>
#include <bit>
#include <cfloat>
#include <cmath>
#include <cstdint>
#include <limits>
#include <random>

#include "check/simd/element_kernels.hpp"
#include "check/simd/ulp16.hpp"
#include "tensor/half.hpp"

namespace gpuemu::check::testing_cases {

// A threshold for a pair whose own value is v: v itself, one step either side, inside and just past
// the pre-checks' margins (2^-22 .. 2^-17 relative, the subnormal quantum), well beyond, or unrelated
// (also for a NaN pair's NaN difference).
inline double threshold_near(std::mt19937_64& gen, std::uniform_real_distribution<double>& exponent,
                             double v) {
  if (std::isnan(v)) return std::exp2(exponent(gen));  // statistics are never NaN
  switch (gen() % 9) {
    case 0:
      return v;
    case 1:
      return std::nextafter(v, 0.0);
    case 2:
      return std::nextafter(v, INFINITY);
    case 3:
      return v * (1 + 0x1p-22);
    case 4:
      return v * (1 + 0x1p-19);
    case 5:
      return v * (1 + 0x1p-17);
    case 6:
      return v * (1 + 0x1p-23) + 0x1p-126;
    case 7:
      return v * 4;
    default:
      return std::exp2(exponent(gen));
  }
}

// A Screen for a pair with difference d, reference magnitude ay and ULP distance ulp: the worst
// list's threshold, max_abs and max_rel near the pair's own ratio, difference and relative error
// (sometimes 0), max_ulp at, beside or far from its distance.
inline kernels::Screen screen_near(std::mt19937_64& gen, std::uniform_real_distribution<double>& exponent,
                                   double atol, double rtol, double d, double ay, double ulp) {
  const double bound = atol + rtol * ay;
  const auto near = [&](double v) { return threshold_near(gen, exponent, v); };
  const double thr = gen() % 8 == 0 ? 0.0 : near(d / bound / kernels::kSlack);
  const double max_abs = near(d);
  const double max_rel = gen() % 8 == 0 ? 0.0 : near(d / ay / kernels::kSlack);
  const double max_ulp =
      gen() % 2 ? static_cast<double>(gen() % 4)
                : (std::isfinite(ulp) ? std::max(0.0, ulp + static_cast<double>(gen() % 3) - 1) : 1e9);
  return {atol, rtol, thr, max_abs, max_rel, max_ulp};
}

// Whether this CPU runs the AVX-512 kernels (wide_screen_avx512.hpp, narrow_precheck_avx512.hpp).
inline bool has_avx512() {
#if defined(__x86_64__) && defined(__GNUC__)
  __builtin_cpu_init();
  return __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512vl") &&
         __builtin_cpu_supports("avx512dq") && __builtin_cpu_supports("avx512bw") &&
         __builtin_cpu_supports("f16c");
#else
  return false;
#endif
}

// The compiled copies of the AVX-512 path's kernels (wide screen, float-lane pre-check).
enum class Copy { avx512, avx2 };

// Whether this CPU runs copy C: AVX-512 as above; AVX2 with FMA and F16C (GPUEMU_AVX2_TARGET).
inline bool has_copy(Copy c) {
#if defined(__x86_64__) && defined(__GNUC__)
  if (c == Copy::avx512) return has_avx512();
  __builtin_cpu_init();
  return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma") && __builtin_cpu_supports("f16c") &&
         __builtin_cpu_supports("popcnt");
#else
  (void)c;
  return false;
#endif
}

// The first kSpecials kinds of value both generators draw: any bits (NaN too), +-Inf, a float
// subnormal.
constexpr std::uint64_t kSpecials = 3;
inline double special_double(std::mt19937_64& gen, std::uint64_t pick) {
  switch (pick) {
    case 0:
      return std::bit_cast<double>(static_cast<std::uint64_t>(gen()));
    case 1:
      return (gen() & 1 ? -1.0 : 1.0) * std::numeric_limits<double>::infinity();
    default:
      return std::bit_cast<float>(static_cast<std::uint32_t>(gen() % 0x800000)) * 1.0;
  }
}

// One million random 16-bit output/reference pairs (rounded outputs with references a little off,
// midpoints and their float and double neighbours, subnormals, values beyond the largest finite
// output and float, NaN/Inf, any bits), each with a Screen whose thresholds sit exactly at, one
// step beside, inside and past the margins of, or far from the pair's own values, and tolerances
// that put the bound at, beside or past |x - y|. `check(bits, y, screen)` runs each; it returns
// false to stop.
template <bool kBf16, class Check>
void for_each_half_case(int trials, Check check) {
  std::mt19937_64 gen(kBf16 ? 1616 : 1610);
  std::uniform_real_distribution<double> exponent(kBf16 ? -160.0 : -30.0, kBf16 ? 130.0 : 17.0);
  const auto to_double = [](std::uint16_t bits) {
    return kBf16 ? tensor::bf16_to_double(bits) : tensor::f16_to_double(bits);
  };
  const auto to_bits = [](double v) { return kBf16 ? tensor::double_to_bf16(v) : tensor::double_to_f16(v); };
  const auto random_double = [&] {
    const std::uint64_t pick = gen() % 16;
    if (pick < kSpecials) return special_double(gen, pick);
    switch (pick) {
      case 3:  // float16 subnormals and float32 values near FLT_MIN
        return (gen() & 1 ? -1.0 : 1.0) *
               std::exp2((kBf16 ? -140.0 : -14.0) - static_cast<double>(gen() % 20));
      case 4:  // just beyond the largest finite value of the output type, and of float
        return (gen() & 1 ? -1.0 : 1.0) * (gen() % 2 ? 65504.0 : FLT_MAX) *
               (1 + std::exp2(-11.0 - static_cast<double>(gen() % 16)));
      default:
        return (gen() & 1 ? -1.0 : 1.0) * std::exp2(exponent(gen));
    }
  };
  const double tolerances[] = {0, 1e-45, 1e-8, 1e-5, 1e-3, 1.0, 1e30, 1e300};
  for (int trial = 0; trial < trials; ++trial) {
    double y = random_double();
    auto bits = static_cast<std::uint16_t>(gen());
    switch (gen() % 6) {
      case 0:  // the output is the reference rounded, the reference a little off it
      case 1:
        bits = to_bits(y);
        y *= 1 + std::ldexp(static_cast<double>(gen() % 1024) - 512,
                            -static_cast<int>((kBf16 ? 8 : 11) + gen() % 40));
        break;
      case 2: {  // the reference a midpoint of the output type, or one float or double step beside it
        const double x = to_double(bits), next = to_double(static_cast<std::uint16_t>(bits + 1));
        const double mid = (x + next) / 2;
        const double steps[] = {mid, static_cast<double>(std::nextafter(static_cast<float>(mid), 0.0f)),
                                static_cast<double>(std::nextafter(static_cast<float>(mid), INFINITY)),
                                std::nextafter(mid, 0.0), std::nextafter(mid, INFINITY)};
        y = steps[gen() % 5];
        break;
      }
      case 3:
        y = to_double(bits);
        break;
      default:
        break;
    }
    const double x = to_double(bits);
    const double d = std::fabs(x - y), ay = std::fabs(y);
    double atol = tolerances[gen() % 8], rtol = tolerances[gen() % 8];
    if (gen() % 4 == 0 && ay > 0 && std::isfinite(d / ay)) {  // the bound at, beside or past |x - y|
      atol = 0;
      const double steps[] = {d / ay,
                              std::nextafter(d / ay, 0.0),
                              std::nextafter(d / ay, INFINITY),
                              d / ay * (1 + 0x1p-21),
                              d / ay * (1 - 0x1p-21),
                              d / ay * (1 + 0x1p-18),
                              d / ay * (1 - 0x1p-18)};
      rtol = steps[gen() % 7];
    }
    const double ulp = kBf16 ? ulp_bf16_inline(x, y) : ulp_f16_inline(x, y);
    if (!check(bits, y, screen_near(gen, exponent, atol, rtol, d, ay, ulp))) return;
  }
}

// What a screen must flag, from the definitions (element_stats.hpp): a pair with NaN/Inf, or one
// whose difference, relative error, ULP distance (in the output's type) or ratio to the bound
// exceeds the running statistic; and whether the pair fails.
struct Needed {
  bool flag;
  bool fails;
};

inline Needed needed(double x, double y, double ulp, const kernels::Screen& s) {
  if (!std::isfinite(x) || !std::isfinite(y)) return {true, true};
  const double d = std::fabs(x - y), ay = std::fabs(y);
  const double bound = s.atol + s.rtol * ay;
  const double ratio = d == 0 ? 0.0 : bound > 0 ? d / bound : INFINITY;
  const double rel = d == 0 ? 0.0 : ay > 0 ? d / ay : INFINITY;
  return {d > s.max_abs || ratio > s.worst_threshold || rel > s.max_rel || ulp > s.max_ulp, !(d <= bound)};
}

// The same for float32 (T = float) and float64 (T = double) outputs: the reference rounded and a
// few steps off, exactly the output, of the opposite sign, +0 against -0, or any value; references
// near float's and double's limits, subnormals of both, NaN/Inf, any bits. `check(x, y, screen)`
// gets the output as a T, the reference as a double; it returns false to stop.
template <class T, class Check>
void for_each_float_case(int trials, Check check) {
  std::mt19937_64 gen(sizeof(T) == 4 ? 3232 : 6464);
  std::uniform_real_distribution<double> exponent(sizeof(T) == 4 ? -160.0 : -1080.0,
                                                  sizeof(T) == 4 ? 130.0 : 1024.0);
  const auto random_double = [&] {
    const std::uint64_t pick = gen() % 16;
    if (pick < kSpecials) return special_double(gen, pick);
    switch (pick) {
      case 3:
        return (gen() & 1 ? -1.0 : 1.0) * (gen() % 2 ? FLT_MAX : DBL_MAX) *
               (1 - std::exp2(-static_cast<double>(gen() % 30)));
      case 4:
        return gen() % 2 ? 0.0 : -0.0;
      default:
        return (gen() & 1 ? -1.0 : 1.0) * std::exp2(exponent(gen));
    }
  };
  const double tolerances[] = {0, 1e-45, 1e-8, 1e-5, 1e-3, 1.0, 1e30, 1e300};
  for (int trial = 0; trial < trials; ++trial) {
    double y = random_double();
    T x = static_cast<T>(random_double());
    switch (gen() % 8) {
      case 0:
      case 1:
      case 2: {  // rounded, and a few steps off
        x = static_cast<T>(y);
        const int steps = static_cast<int>(gen() % 7) - 3;
        for (int k = 0; k < std::abs(steps); ++k)
          x = std::nextafter(x, steps > 0 ? T(INFINITY) : T(-INFINITY));
        break;
      }
      case 3:
        y = static_cast<double>(static_cast<T>(y));
        x = static_cast<T>(y);
        break;
      case 4:
        x = static_cast<T>(-y);
        break;
      default:
        break;
    }
    const double xd = x;
    const double d = std::fabs(xd - y), ay = std::fabs(y);
    const double atol = tolerances[gen() % 8], rtol = tolerances[gen() % 8];
    const double ulp = sizeof(T) == 4 ? tensor::ulp_distance_f32(xd, y) : tensor::ulp_distance_f64(xd, y);
    if (!check(x, y, screen_near(gen, exponent, atol, rtol, d, ay, ulp))) return;
  }
}

}  // namespace gpuemu::check::testing_cases
