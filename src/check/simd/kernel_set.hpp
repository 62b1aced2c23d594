// Which compiled copy of each chunk kernel runs (internal to element_stats.cpp): every kernel of
// element_kernels.hpp instantiated for the baseline target, AVX2 and AVX-512, and chosen per CPU.
#pragma once

#include <cstddef>
#include <cstdint>
#include <type_traits>

#include "check/element_stats.hpp"
#include "check/simd/element_kernels.hpp"
#include "check/simd/float_precheck.hpp"
#include "check/simd/half_precheck_avx2.hpp"
#include "check/simd/narrow_precheck_avx2.hpp"
#include "check/simd/narrow_precheck_avx512.hpp"
#include "check/simd/wide_screen_avx2.hpp"
#include "check/simd/wide_screen_avx512.hpp"
#include "util/cpu_isa.hpp"

namespace gpuemu::check::kernels {

// Every kernel three times: for the baseline x86-64 target (SSE2), for AVX2 and for AVX-512 (at
// GCC's default 256-bit vector width, with mask registers), chosen once per process from the CPU
// (util::best_isa). The bodies are always inlined, so each copy is compiled, and vectorised, for its
// own target.
using util::best_isa;
using util::Isa;

inline Isa chosen_isa(KernelChoice choice) {
  const Isa best = best_isa();
  switch (choice) {
    case KernelChoice::fastest:
      return best;
    case KernelChoice::avx2:
      return best == Isa::baseline ? Isa::baseline : Isa::avx2;
    case KernelChoice::baseline:
      return Isa::baseline;
  }
  return Isa::baseline;
}

#define GPUEMU_CHECK_KERNEL_PAIR(suffix, attributes)                                                \
  template <UlpMode M, class Out, class Ref>                                                        \
  attributes ScreenResult screen_##suffix(Out out, Ref ref, std::size_t n, const Screen& s) {       \
    return kernels::screen_body<M>(out, ref, n, s);                                                 \
  }                                                                                                 \
  template <UlpMode M, class Out, class Ref>                                                        \
  attributes ChunkMaxima reduce_##suffix(Out out, Ref ref, std::size_t n, double atol, double rtol, \
                                         double threshold, double* ratios) {                        \
    return kernels::reduce_body<M>(out, ref, n, atol, rtol, threshold, ratios);                     \
  }                                                                                                 \
  template <class Out, class Ref>                                                                   \
  attributes std::uint32_t f32_precheck_##suffix(Out out, Ref ref, std::size_t n,                   \
                                                 const kernels::FloatScreen& f) {                   \
    return kernels::f32_precheck_body(out, ref, n, f);                                              \
  }                                                                                                 \
  template <class Out>                                                                              \
  attributes std::uint32_t portable_half_precheck_##suffix(Out out, Raw<double> ref, std::size_t n, \
                                                           const kernels::FloatScreen& f) {         \
    return kernels::half_precheck_body<true>(out, ref, n, f);                                       \
  }

GPUEMU_CHECK_KERNEL_PAIR(base, )
#if defined(__x86_64__) && defined(__GNUC__)
#define GPUEMU_HAS_X86_KERNELS 1
GPUEMU_CHECK_KERNEL_PAIR(avx2, [[gnu::target("avx2")]])
GPUEMU_CHECK_KERNEL_PAIR(avx512, [[gnu::target("avx2,avx512f,avx512vl,avx512dq,avx512bw")]])
#endif
#undef GPUEMU_CHECK_KERNEL_PAIR

#ifdef GPUEMU_HAS_X86_KERNELS
// The float16 outputs' prepass (kernels::f16_prepass), where the CPU has F16C.
#define GPUEMU_CHECK_F16_PREPASS(suffix, attributes)                                          \
  template <class Ref>                                                                        \
  attributes std::uint32_t f16_prepass_##suffix(const std::byte* out, Ref ref, std::size_t n, \
                                                std::int32_t max_ulp, float* out_f) {         \
    return kernels::f16_prepass(out, ref, n, max_ulp, out_f);                                 \
  }
GPUEMU_CHECK_F16_PREPASS(avx2, [[gnu::target("avx2,f16c")]])
#undef GPUEMU_CHECK_F16_PREPASS

// The AVX2 copy of the 16-bit pre-check written with intrinsics (half_precheck_avx2.hpp), plain and
// counting, as Kernels holds them.
#define GPUEMU_CHECK_HALF_PRECHECK(isa, attributes)                                                     \
  template <class Out>                                                                                  \
  attributes std::uint32_t half_precheck_##isa##_plain(Out out, Raw<double> ref, std::size_t n,         \
                                                       const kernels::FloatScreen& f) {                 \
    return kernels::half_precheck_##isa<std::is_same_v<Out, RawBF16>>(                                  \
        out.p, reinterpret_cast<const double*>(ref.p), n, f);                                           \
  }                                                                                                     \
  template <class Out>                                                                                  \
  attributes std::uint32_t half_precheck_##isa##_counting(                                              \
      Out out, Raw<double> ref, std::size_t n, const kernels::FloatScreen& f, std::int64_t* failures) { \
    return kernels::half_precheck_##isa<std::is_same_v<Out, RawBF16>, true>(                            \
        out.p, reinterpret_cast<const double*>(ref.p), n, f, failures);                                 \
  }
GPUEMU_CHECK_HALF_PRECHECK(avx2, [[gnu::target("avx2,f16c,popcnt")]])
#undef GPUEMU_CHECK_HALF_PRECHECK

// The wide screen (wide_screen_avx512.hpp), flagging only and counting failures too, its NaN/Inf
// test of the pieces it flags, and the float-lane pre-check (narrow_precheck_avx512.hpp).
#define GPUEMU_CHECK_AVX512 [[gnu::target(GPUEMU_AVX512_TARGET)]]
template <class Out, class Ref>
GPUEMU_CHECK_AVX512 WideResult wide_flag_avx512(Out out, Ref ref, std::size_t n, const WideScreen& w,
                                                std::uint32_t subs) {
  return kernels::wide_screen_avx512<Out, Ref, false>(out, ref, n, w, subs);
}
template <class Out, class Ref>
GPUEMU_CHECK_AVX512 WideResult wide_count_avx512(Out out, Ref ref, std::size_t n, const WideScreen& w,
                                                 std::uint32_t subs) {
  return kernels::wide_screen_avx512<Out, Ref, true>(out, ref, n, w, subs);
}
template <class Out, class Ref>
GPUEMU_CHECK_AVX512 bool wide_nonfinite_copy_avx512(Out out, Ref ref, std::size_t n, std::uint64_t pieces) {
  return kernels::wide_nonfinite_avx512(out, ref, n, pieces);
}
template <class Out, class Ref>
GPUEMU_CHECK_AVX512 std::uint32_t narrow_plain_avx512(Out out, Ref ref, std::size_t n, const NarrowScreen& f,
                                                      std::int64_t* failures) {
  return kernels::narrow_precheck_avx512<Out, Ref, false>(out, ref, n, f, failures);
}
template <class Out, class Ref>
GPUEMU_CHECK_AVX512 std::uint32_t narrow_counting_avx512(Out out, Ref ref, std::size_t n,
                                                         const NarrowScreen& f, std::int64_t* failures) {
  return kernels::narrow_precheck_avx512<Out, Ref, true>(out, ref, n, f, failures);
}
#undef GPUEMU_CHECK_AVX512

// The same five kernels on AVX2 (wide_screen_avx2.hpp, narrow_precheck_avx2.hpp).
#define GPUEMU_CHECK_AVX2 [[gnu::target(GPUEMU_AVX2_TARGET)]]
template <class Out, class Ref>
GPUEMU_CHECK_AVX2 WideResult wide_flag_avx2(Out out, Ref ref, std::size_t n, const WideScreen& w,
                                            std::uint32_t subs) {
  return kernels::wide_screen_avx2<Out, Ref, false>(out, ref, n, w, subs);
}
template <class Out, class Ref>
GPUEMU_CHECK_AVX2 WideResult wide_count_avx2(Out out, Ref ref, std::size_t n, const WideScreen& w,
                                             std::uint32_t subs) {
  return kernels::wide_screen_avx2<Out, Ref, true>(out, ref, n, w, subs);
}
template <class Out, class Ref>
GPUEMU_CHECK_AVX2 bool wide_nonfinite_copy_avx2(Out out, Ref ref, std::size_t n, std::uint64_t pieces) {
  return kernels::wide_nonfinite_avx2(out, ref, n, pieces);
}
template <class Out, class Ref>
GPUEMU_CHECK_AVX2 std::uint32_t narrow_plain_avx2(Out out, Ref ref, std::size_t n, const NarrowScreen& f,
                                                  std::int64_t* failures) {
  return kernels::narrow_precheck_avx2<Out, Ref, false>(out, ref, n, f, failures);
}
template <class Out, class Ref>
GPUEMU_CHECK_AVX2 std::uint32_t narrow_counting_avx2(Out out, Ref ref, std::size_t n, const NarrowScreen& f,
                                                     std::int64_t* failures) {
  return kernels::narrow_precheck_avx2<Out, Ref, true>(out, ref, n, f, failures);
}
#undef GPUEMU_CHECK_AVX2

// What the CPU has is asked in util/cpu_isa.hpp, the one place that asks it.
inline bool has_f16c() {
  return util::cpu_has_f16c();
}
inline bool has_avx2_companions() {
  return util::cpu_has_avx2_companions();
}
#endif

// The kernels for one kind of output/reference pair: the ULP mode and how each side is read.
template <UlpMode M, class Out, class Ref>
struct Kernels {
  using OutSource = Out;
  using RefSource = Ref;
  ScreenResult (*screen)(Out, Ref, std::size_t, const Screen&) = &screen_base<M, Out, Ref>;
  ChunkMaxima (*reduce)(Out, Ref, std::size_t, double, double, double, double*) = &reduce_base<M, Out, Ref>;
  // On AVX2 and baseline CPUs, a block pre-check in float lanes clears most blocks, and only the
  // others go through the double screen: float32 outputs against float32 references
  // (kernels::f32_precheck_body), and float16 and bfloat16 outputs against float64 references: with
  // intrinsics on AVX2 with F16C (half_precheck_avx2.hpp), else for bfloat16 only, as GCC
  // vectorises kernels::half_precheck_body. float32 outputs against float64 references cannot use
  // it: rounding the reference to float costs as much as the errors it would have to bound
  // (2^-24), so no block cleared (docs/performance.md, "Measurements behind the kernels").
  static constexpr bool kF32Precheck =
      M == UlpMode::f32 && std::is_same_v<Out, Raw<float>> && std::is_same_v<Ref, Raw<float>>;
  static constexpr bool kBf16Precheck = std::is_same_v<Out, RawBF16> && std::is_same_v<Ref, Raw<double>>;
  static constexpr bool kF16Precheck = std::is_same_v<Out, RawF16> && std::is_same_v<Ref, Raw<double>>;

  std::uint32_t (*precheck)(Out, Ref, std::size_t, const kernels::FloatScreen&) = nullptr;
  // The same pre-check, also clearing elements that surely fail (and adding up their failures),
  // for chunks after one with failures; only the intrinsics copies of the 16-bit pre-check have it.
  std::uint32_t (*counting_precheck)(Out, Ref, std::size_t, const kernels::FloatScreen&,
                                     std::int64_t*) = nullptr;
  // float16 outputs read in place on AVX2 CPUs with F16C: the prepass decodes the chunk to float
  // and runs the ULP test, then `screen_decoded` screens the floats against the reference; with
  // the pre-check, this is the path for chunks it leaves wholly open (the first ones, while the
  // running maxima fill). (bfloat16 keeps its fused screen: the same prepass measured slower,
  // docs/performance.md, "Measurements behind the kernels".)
  static constexpr bool kF16Prepass = std::is_same_v<Out, RawF16>;
  std::uint32_t (*prepass)(const std::byte*, Ref, std::size_t, std::int32_t, float*) = nullptr;
  ScreenResult (*screen_decoded)(Raw<float>, Ref, std::size_t, const Screen&) = nullptr;
  // On AVX-512 CPUs, contiguous float outputs against float32/float64 references take the wide
  // screen instead of all of the above (wide_screen_avx512.hpp): flags per 16-element piece, failures
  // counted by `wide_count` or, when `wide_flag` ran, by the reduction of the flagged pieces, and
  // NaN/Inf looked for in flagged pieces only (`nonfinite`). 16-bit outputs, and float32
  // outputs against float32 references, first take the float-lane pre-check
  // (narrow_precheck_avx512.hpp), plain or, after a chunk with failures, counting.
  static constexpr bool kWide = !std::is_same_v<Out, Decoded> && !std::is_same_v<Ref, Decoded>;
  static constexpr bool kNarrow =
      kWide && (std::is_same_v<Out, RawF16> || std::is_same_v<Out, RawBF16> ||
                (std::is_same_v<Out, Raw<float>> && std::is_same_v<Ref, Raw<float>>));
  WideResult (*wide_flag)(Out, Ref, std::size_t, const WideScreen&, std::uint32_t) = nullptr;
  WideResult (*wide_count)(Out, Ref, std::size_t, const WideScreen&, std::uint32_t) = nullptr;
  bool (*nonfinite)(Out, Ref, std::size_t, std::uint64_t) = nullptr;
  std::uint32_t (*narrow_plain)(Out, Ref, std::size_t, const NarrowScreen&, std::int64_t*) = nullptr;
  std::uint32_t (*narrow_counting)(Out, Ref, std::size_t, const NarrowScreen&, std::int64_t*) = nullptr;

  static Kernels select(KernelChoice choice) {
    Kernels k;
    if constexpr (kF32Precheck) k.precheck = &f32_precheck_base<Out, Ref>;
    if constexpr (kBf16Precheck) k.precheck = &portable_half_precheck_base<Out>;
#ifdef GPUEMU_HAS_X86_KERNELS
// Every kernel of one ISA copy (the functions GPUEMU_CHECK_KERNEL_PAIR and GPUEMU_CHECK_F16_PREPASS made).
#define GPUEMU_CHECK_USE_ISA(suffix)                                               \
  k.screen = &screen_##suffix<M, Out, Ref>;                                        \
  k.reduce = &reduce_##suffix<M, Out, Ref>;                                        \
  if constexpr (kF32Precheck) k.precheck = &f32_precheck_##suffix<Out, Ref>;       \
  if constexpr (kBf16Precheck) k.precheck = &portable_half_precheck_##suffix<Out>; \
  if constexpr (kF16Prepass) {                                                     \
    if (has_f16c()) {                                                              \
      k.prepass = &f16_prepass_##suffix<Ref>;                                      \
      k.screen_decoded = &screen_##suffix<UlpMode::prescreened, Raw<float>, Ref>;  \
    }                                                                              \
  }
    switch (chosen_isa(choice)) {
      case Isa::avx512:
        // Only decoded sources take the generic screen here; raw ones the wide screen.
        if constexpr (!kWide) k.screen = &screen_avx512<M, Out, Ref>;
        k.reduce = &reduce_avx512<M, Out, Ref>;
        if constexpr (kWide) {
          k.wide_flag = &wide_flag_avx512<Out, Ref>;
          k.wide_count = &wide_count_avx512<Out, Ref>;
          k.nonfinite = &wide_nonfinite_copy_avx512<Out, Ref>;
        }
        if constexpr (kNarrow) {
          k.narrow_plain = &narrow_plain_avx512<Out, Ref>;
          k.narrow_counting = &narrow_counting_avx512<Out, Ref>;
        }
        break;
      case Isa::avx2:
        GPUEMU_CHECK_USE_ISA(avx2)
        if constexpr (kBf16Precheck || kF16Precheck) {
          if (has_f16c()) {
            k.precheck = &half_precheck_avx2_plain<Out>;
            k.counting_precheck = &half_precheck_avx2_counting<Out>;
          }
        }
        // The AVX-512 path's wide screen and float-lane pre-check, on 4 and 8 lanes: about twice as
        // fast as the kernels above on every row measured (docs/performance-log.md (b), "CPUs without
        // AVX-512"), which then serve decoded sources only (and CPUs without FMA or F16C).
        if constexpr (kWide) {
          if (has_avx2_companions()) {
            k.wide_flag = &wide_flag_avx2<Out, Ref>;
            k.wide_count = &wide_count_avx2<Out, Ref>;
            k.nonfinite = &wide_nonfinite_copy_avx2<Out, Ref>;
            if constexpr (kNarrow) {
              k.narrow_plain = &narrow_plain_avx2<Out, Ref>;
              k.narrow_counting = &narrow_counting_avx2<Out, Ref>;
            }
          }
        }
        break;
      case Isa::baseline:
        break;
    }
#undef GPUEMU_CHECK_USE_ISA
#else
    (void)choice;
#endif
    return k;
  }
};

}  // namespace gpuemu::check::kernels
