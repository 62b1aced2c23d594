// The x86 instruction sets gpuemu compiles vectorised copies of its hot loops for, and which one this
// CPU runs: the one place that asks the CPU (check's comparison kernels, rng's value generation).
#pragma once

#include <cstdint>
#include <cstdlib>
#include <string_view>

#if defined(__x86_64__) && defined(__GNUC__)
#include <cpuid.h>
#endif

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

// What CPUID (leaves 1 and 7) and XGETBV report. We read them ourselves instead of calling
// __builtin_cpu_supports: that needs the compiler runtime's __cpu_model, which libgcc and LLVM's
// compiler-rt have but zig's macOS runtime lacks (the x86_64-macos cross-compile could not link,
// docs/platforms.md), and so every build asks the CPU through the same lines.
struct CpuidWords {
  std::uint32_t max_leaf = 0;
  std::uint32_t leaf1_ecx = 0;
  std::uint32_t leaf7_ebx = 0;  // 0 when max_leaf < 7
  std::uint64_t xcr0 = 0;       // 0 when the OS has not enabled XSAVE (leaf 1 ECX bit 27)
};

struct CpuFeatures {
  bool avx2 = false;
  bool avx512 = false;  // F, VL, DQ and BW: what every AVX-512 copy in the tree is compiled for
  bool f16c = false;
  bool fma = false;
  bool popcnt = false;
};

// The features the OS lets a program use. AVX-encoded sets need the OS to save the YMM state (XCR0
// bits 1-2), AVX-512 also the opmask and ZMM state (bits 5-7). macOS enables the AVX-512 state for a
// thread at its first AVX-512 instruction, so XCR0 lacks those bits until then; there the CPUID bits
// are trusted, as compiler-rt's __builtin_cpu_supports (Apple clang's) and zig's do on Darwin.
inline CpuFeatures features_from_cpuid(const CpuidWords& w, bool os_enables_avx512_lazily) {
  const auto bit = [](std::uint64_t word, int n) { return ((word >> n) & 1u) != 0; };
  const bool osxsave = bit(w.leaf1_ecx, 27);
  const bool ymm_saved = osxsave && bit(w.leaf1_ecx, 28) && (w.xcr0 & 0x6u) == 0x6u;
  const bool zmm_saved = ymm_saved && (os_enables_avx512_lazily || (w.xcr0 & 0xe0u) == 0xe0u);
  const std::uint32_t ebx7 = w.max_leaf >= 7 ? w.leaf7_ebx : 0;
  CpuFeatures f;
  f.popcnt = bit(w.leaf1_ecx, 23);
  f.fma = ymm_saved && bit(w.leaf1_ecx, 12);
  f.f16c = ymm_saved && bit(w.leaf1_ecx, 29);
  f.avx2 = ymm_saved && bit(ebx7, 5);
  f.avx512 = f.avx2 && zmm_saved && bit(ebx7, 16) && bit(ebx7, 17) && bit(ebx7, 30) && bit(ebx7, 31);
  return f;
}

// This CPU's words, read once per process (no ifunc, so the static binary behaves the same).
inline const CpuFeatures& cpu_features() {
  static const CpuFeatures features = [] {
    CpuidWords w;
#if defined(__x86_64__) && defined(__GNUC__)
    unsigned eax = 0, ebx = 0, ecx = 0, edx = 0;
    w.max_leaf = __get_cpuid_max(0, nullptr);
    if (w.max_leaf >= 1) {
      __cpuid(1, eax, ebx, ecx, edx);
      w.leaf1_ecx = ecx;
    }
    if (w.max_leaf >= 7) {
      __cpuid_count(7, 0, eax, ebx, ecx, edx);
      w.leaf7_ebx = ebx;
    }
    if ((w.leaf1_ecx >> 27) & 1u) {  // XGETBV faults unless the OS enabled XSAVE
      unsigned lo = 0, hi = 0;
      __asm__ volatile("xgetbv" : "=a"(lo), "=d"(hi) : "c"(0));
      w.xcr0 = (std::uint64_t{hi} << 32) | lo;
    }
#endif
#if defined(__APPLE__)
    return features_from_cpuid(w, true);
#else
    return features_from_cpuid(w, false);
#endif
  }();
  return features;
}

// The best set this CPU has. GPUEMU_ISA=avx2 or baseline in the environment caps it (never raises
// it), so that an AVX-512 machine runs, and measures, the copies a CPU without AVX-512 runs
// (docs/performance.md (b)); results are the same whichever copy runs. Baseline off x86_64.
inline Isa best_isa() {
  static const Isa isa = [] {
    const CpuFeatures& f = cpu_features();
    Isa best = f.avx512 ? Isa::avx512 : f.avx2 ? Isa::avx2 : Isa::baseline;
    const char* cap = std::getenv("GPUEMU_ISA");
    if (cap != nullptr && std::string_view(cap) == "avx2" && best > Isa::avx2) best = Isa::avx2;
    if (cap != nullptr && std::string_view(cap) == "baseline") best = Isa::baseline;
    return best;
  }();
  return isa;
}

// F16C: the hardware half-float conversions the float16 comparison kernels use.
inline bool cpu_has_f16c() {
  return cpu_features().f16c;
}

// What the AVX2 copies of check's wide screen and float-lane pre-check are compiled for besides AVX2
// (GPUEMU_AVX2_TARGET): every AVX2 CPU gpuemu knows of has them, but none is implied.
inline bool cpu_has_avx2_companions() {
  const CpuFeatures& f = cpu_features();
  return f.f16c && f.fma && f.popcnt;
}

}  // namespace gpuemu::util
