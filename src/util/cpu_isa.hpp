// The x86 instruction sets gpuemu compiles vectorised copies of its hot loops for, and which one this
// CPU runs: the one place that asks the CPU (check's comparison kernels, rng's value generation).
#pragma once

namespace gpuemu::util {

// Ordered: a CPU that runs one runs every set before it.
enum class Isa { baseline, avx2, avx512 };

// The best set this CPU has, asked once per process (no ifunc, so the static binary behaves the
// same). AVX-512 means F, VL, DQ and BW, what every AVX-512 copy in the tree is compiled for.
inline Isa best_isa() {
#if defined(__x86_64__) && defined(__GNUC__)
  static const Isa isa = [] {
    __builtin_cpu_init();  // may run before libgcc's constructor when called from a static initializer
    if (__builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512vl") &&
        __builtin_cpu_supports("avx512dq") && __builtin_cpu_supports("avx512bw")) {
      return Isa::avx512;
    }
    return __builtin_cpu_supports("avx2") ? Isa::avx2 : Isa::baseline;
  }();
  return isa;
#else
  return Isa::baseline;
#endif
}

}  // namespace gpuemu::util
