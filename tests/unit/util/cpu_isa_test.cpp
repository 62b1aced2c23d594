// util/cpu_isa: our reading of CPUID and XGETBV, which picks the vectorised copies check and rng run,
// against synthetic register words, and against the compiler runtime's answer on this machine.
#include "util/cpu_isa.hpp"

#include <gtest/gtest.h>

#include <cstdint>

namespace gpuemu::util {
namespace {

constexpr std::uint32_t kPopcnt = 1u << 23, kFma = 1u << 12, kOsxsave = 1u << 27, kAvx = 1u << 28,
                        kF16c = 1u << 29;
constexpr std::uint32_t kAvx2 = 1u << 5, kAvx512 = (1u << 16) | (1u << 17) | (1u << 30) | (1u << 31);
constexpr std::uint64_t kYmmState = 0x7, kZmmState = 0xe7;

// A CPU with every set gpuemu uses, and an OS that saves every register state.
CpuidWords skylake_server() {
  return {.max_leaf = 0xd,
          .leaf1_ecx = kPopcnt | kFma | kOsxsave | kAvx | kF16c,
          .leaf7_ebx = kAvx2 | kAvx512,
          .xcr0 = kZmmState};
}

TEST(CpuIsa, EverySetWhenTheCpuHasItAndTheOsSavesItsRegisters) {
  const CpuFeatures f = features_from_cpuid(skylake_server(), false);
  EXPECT_TRUE(f.avx512 && f.avx2 && f.f16c && f.fma && f.popcnt);
}

TEST(CpuIsa, NoAvx512WhenOneOfItsFourSubsetsIsMissing) {
  for (const std::uint32_t subset : {1u << 16, 1u << 17, 1u << 30, 1u << 31}) {
    CpuidWords w = skylake_server();
    w.leaf7_ebx &= ~subset;
    const CpuFeatures f = features_from_cpuid(w, false);
    EXPECT_FALSE(f.avx512) << subset;
    EXPECT_TRUE(f.avx2) << subset;
  }
}

TEST(CpuIsa, Avx512NeedsTheZmmStateSavedExceptWhereTheOsEnablesItOnFirstUse) {
  CpuidWords w = skylake_server();
  w.xcr0 = kYmmState;  // Linux booted with AVX-512 state off; any macOS thread before its first use
  EXPECT_FALSE(features_from_cpuid(w, false).avx512);
  EXPECT_TRUE(features_from_cpuid(w, false).avx2);
  EXPECT_TRUE(features_from_cpuid(w, true).avx512);
}

TEST(CpuIsa, NoAvxEncodedSetWithoutTheOsSavingYmm) {
  for (const bool lazy : {false, true}) {
    CpuidWords no_osxsave = skylake_server();
    no_osxsave.leaf1_ecx &= ~kOsxsave;
    CpuidWords no_ymm = skylake_server();
    no_ymm.xcr0 = 0x3;  // x87 and SSE state only
    for (const CpuidWords& w : {no_osxsave, no_ymm}) {
      const CpuFeatures f = features_from_cpuid(w, lazy);
      EXPECT_FALSE(f.avx512 || f.avx2 || f.f16c || f.fma) << lazy;
      EXPECT_TRUE(f.popcnt) << lazy;  // not AVX-encoded
    }
  }
}

TEST(CpuIsa, NoLeaf7WordsBeyondTheCpusLastLeaf) {
  CpuidWords w = skylake_server();
  w.max_leaf = 6;
  const CpuFeatures f = features_from_cpuid(w, true);
  EXPECT_FALSE(f.avx2 || f.avx512);
  EXPECT_TRUE(f.f16c && f.fma);
}

TEST(CpuIsa, BestIsaIsTheHighestSetThisCpuRuns) {
  const CpuFeatures& f = cpu_features();
  const Isa expected = f.avx512 ? Isa::avx512 : f.avx2 ? Isa::avx2 : Isa::baseline;
  if (std::getenv("GPUEMU_ISA") != nullptr) GTEST_SKIP() << "GPUEMU_ISA caps best_isa()";
  EXPECT_EQ(best_isa(), expected);
}

#if defined(__x86_64__) && defined(__GNUC__) && defined(__linux__)
// Where the compiler runtime's CPU model exists (libgcc, compiler-rt on Linux), it and our reading
// of the same CPU agree.
TEST(CpuIsa, AgreesWithTheCompilerRuntimeOnThisCpu) {
  __builtin_cpu_init();
  const CpuFeatures& f = cpu_features();
  EXPECT_EQ(f.avx2, __builtin_cpu_supports("avx2") != 0);
  EXPECT_EQ(f.avx512, __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512vl") &&
                          __builtin_cpu_supports("avx512dq") && __builtin_cpu_supports("avx512bw"));
  EXPECT_EQ(f.f16c, __builtin_cpu_supports("f16c") != 0);
  EXPECT_EQ(f.fma, __builtin_cpu_supports("fma") != 0);
  EXPECT_EQ(f.popcnt, __builtin_cpu_supports("popcnt") != 0);
}
#endif

}  // namespace
}  // namespace gpuemu::util
