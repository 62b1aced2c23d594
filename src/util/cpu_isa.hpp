// The x86 instruction sets gpuemu compiles vectorised copies of its hot loops for, and which one this
// CPU runs: the one place that asks the CPU (check's comparison kernels, rng's value generation).
#pragma once

#include <cstdlib>
#include <string_view>

namespace gpuemu::util {

// Ordered: a CPU that runs one runs every set before it.
enum class Isa { baseline, avx2, avx512 };

inline const char* isa_name(Isa isa) {
  switch (isa) {
    case Isa::avx512:
      return "avx512";
    case Isa::avx2:
      return "avx2";
    case Isa::baseline:
      return "baseline";
  }
  return "baseline";
}

// The best set this CPU has, asked once per process (no ifunc, so the static binary behaves the
// same). AVX-512 means F, VL, DQ and BW, what every AVX-512 copy in the tree is compiled for.
// GPUEMU_ISA=avx2 or baseline in the environment caps it (never raises it), so that an AVX-512
// machine runs, and measures, the copies a CPU without AVX-512 runs (docs/performance.md (b));
// results are the same whichever copy runs.
inline Isa best_isa() {
#if defined(__x86_64__) && defined(__GNUC__)
  static const Isa isa = [] {
    __builtin_cpu_init();  // may run before libgcc's constructor when called from a static initializer
    Isa best = Isa::baseline;
    if (__builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512vl") &&
        __builtin_cpu_supports("avx512dq") && __builtin_cpu_supports("avx512bw")) {
      best = Isa::avx512;
    } else if (__builtin_cpu_supports("avx2")) {
      best = Isa::avx2;
    }
    const char* cap = std::getenv("GPUEMU_ISA");
    if (cap != nullptr && std::string_view(cap) == "avx2" && best > Isa::avx2) best = Isa::avx2;
    if (cap != nullptr && std::string_view(cap) == "baseline") best = Isa::baseline;
    return best;
  }();
  return isa;
#else
  return Isa::baseline;
#endif
}

// F16C: the hardware half-float conversions the float16 comparison kernels use.
inline bool cpu_has_f16c() {
#if defined(__x86_64__) && defined(__GNUC__)
  static const bool f16c = [] {
    __builtin_cpu_init();
    return __builtin_cpu_supports("f16c") != 0;
  }();
  return f16c;
#else
  return false;
#endif
}

// What the AVX2 copies of check's wide screen and float-lane pre-check are compiled for besides AVX2
// (GPUEMU_AVX2_TARGET): every AVX2 CPU gpuemu knows of has them, but none is implied.
inline bool cpu_has_avx2_companions() {
#if defined(__x86_64__) && defined(__GNUC__)
  static const bool all = [] {
    __builtin_cpu_init();
    return __builtin_cpu_supports("f16c") != 0 && __builtin_cpu_supports("fma") != 0 &&
           __builtin_cpu_supports("popcnt") != 0;
  }();
  return all;
#else
  return false;
#endif
}

}  // namespace gpuemu::util
