// The comparison's per-chunk loops (internal to element_stats.cpp): element sources that read raw
// storage in place, the screen that counts failures and flags elements that could change a statistic,
// and the reduction of a flagged chunk. Free of branches and calls so GCC vectorises them.
#pragma once

#include <algorithm>
#include <bit>
#include <cfloat>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <limits>
#include <type_traits>

#include "check/pass_rule.hpp"
#include "check/simd/ulp16.hpp"

#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>
#endif

namespace gpuemu::check::kernels {

// How ULPs are counted: in the output's dtype; integers and bool use the absolute difference.
// `prescreened`: the screen skips the ULP test, which a prepass (f16_prepass) ran before it.
enum class UlpMode { f64, f32, f16, bf16, absolute, prescreened };

// Element sources. Each reads element i of a chunk as a double (exactly); 16-bit outputs also give
// the ordered integer of their stored bits, which their ULP distance needs. Everything a kernel calls
// is always inlined, so each target's copy of the kernel gets its own vectorised copy of it.
template <class T>
[[gnu::always_inline]] inline T load(const std::byte* p) {
  T value;
  std::memcpy(&value, p, sizeof(T));  // little-endian storage, like tensor::load_raw
  return value;
}
struct Decoded {
  const double* p;
  [[gnu::always_inline]] double operator()(std::size_t i) const { return p[i]; }
  Decoded shifted(std::size_t k) const { return {p + k}; }  // the source from element k on
};
template <class T>
struct Raw {
  const std::byte* p;
  [[gnu::always_inline]] T stored(std::size_t i) const { return load<T>(p + sizeof(T) * i); }
  [[gnu::always_inline]] double operator()(std::size_t i) const { return stored(i); }
  Raw shifted(std::size_t k) const { return {p + sizeof(T) * k}; }
};
struct RawF16 {
  const std::byte* p;
  [[gnu::always_inline]] std::uint16_t bits(std::size_t i) const { return load<std::uint16_t>(p + 2 * i); }
  [[gnu::always_inline]] double operator()(std::size_t i) const { return f16_bits_to_double(bits(i)); }
  RawF16 shifted(std::size_t k) const { return {p + 2 * k}; }
};
struct RawBF16 {
  const std::byte* p;
  [[gnu::always_inline]] std::uint16_t bits(std::size_t i) const { return load<std::uint16_t>(p + 2 * i); }
  [[gnu::always_inline]] double operator()(std::size_t i) const { return bf16_bits_to_double(bits(i)); }
  RawBF16 shifted(std::size_t k) const { return {p + 2 * k}; }
};

// Ordered-integer form of a float in 32 bits: sign-magnitude to two's complement with -0 and +0
// both 0. Distances fit in uint32 (at most 2 * 0x7F800000). Masks rather than conditionals, so it
// vectorises without leaving 32-bit lanes.
[[gnu::always_inline]] inline std::int32_t ordered_bits32(std::int32_t bits) {
  const std::int32_t negative = bits >> 31;  // all ones for a negative value
  return ((bits & 0x7FFF'FFFF) ^ negative) - negative;
}

[[gnu::always_inline]] inline std::int32_t ordered_f32(double v) {
  return ordered_bits32(std::bit_cast<std::int32_t>(static_cast<float>(v)));
}

// The distance is max - min of the ordered values: the sign of a wrapped difference would be wrong
// for distances of 2^31 and more (opposite signs near the largest floats).
[[gnu::always_inline]] inline std::uint32_t ordered_distance(std::int32_t a, std::int32_t b) {
  return static_cast<std::uint32_t>(std::max(a, b)) - static_cast<std::uint32_t>(std::min(a, b));
}

[[gnu::always_inline]] inline std::uint32_t ulp_f32(double out, double ref) {
  return ordered_distance(ordered_f32(out), ordered_f32(ref));
}

// The same for double: ordered int64, distance as uint64 (opposite signs can need all 64 bits).
[[gnu::always_inline]] inline std::int64_t ordered_f64(double v) {
  const auto bits = std::bit_cast<std::int64_t>(v);
  return bits >= 0 ? bits : std::numeric_limits<std::int64_t>::min() - bits;
}

[[gnu::always_inline]] inline std::uint64_t ulp_f64(double out, double ref) {
  const std::int64_t oa = ordered_f64(out);
  const std::int64_t ob = ordered_f64(ref);
  const auto a = static_cast<std::uint64_t>(oa);
  const auto b = static_cast<std::uint64_t>(ob);
  return oa >= ob ? a - b : b - a;
}

// The ULP distance of element i in the integer type its mode reduces with (f16/bf16 distances are
// at most 2 * 0x7F80, so int32); absolute mode never calls this.
template <UlpMode M, class Out, class Ref>
[[gnu::always_inline]] inline auto ulp_of(const Out& out, const Ref& ref, std::size_t i, double x, double y) {
  if constexpr (M == UlpMode::f32) {
    // Stored floats are used as they are: no round trip through double.
    std::int32_t ox, oy;
    if constexpr (std::is_same_v<Out, Raw<float>>) {
      ox = ordered_bits32(std::bit_cast<std::int32_t>(out.stored(i)));
    } else {
      ox = ordered_f32(x);
    }
    if constexpr (std::is_same_v<Ref, Raw<float>>) {
      oy = ordered_bits32(std::bit_cast<std::int32_t>(ref.stored(i)));
    } else {
      oy = ordered_f32(y);
    }
    return ordered_distance(ox, oy);
  } else if constexpr (M == UlpMode::f64) {
    return ulp_f64(x, y);
  } else {
    constexpr int kMant = M == UlpMode::f16 ? 10 : 7;
    constexpr int kExp = M == UlpMode::f16 ? 5 : 8;
    std::int32_t ox;
    if constexpr (requires { out.bits(i); }) {
      ox = ordered_bits16(out.bits(i));  // the stored value is on the grid: no rounding needed
    } else {
      ox = static_cast<std::int32_t>(ordered_small<kMant, kExp>(x));
    }
    const std::int32_t diff = ox - static_cast<std::int32_t>(ordered_small<kMant, kExp>(y));
    const std::int32_t negative = diff >> 31;  // a mask, not a conditional: GCC 12 vectorises this
    return (diff ^ negative) - negative;
  }
}

// The screen's bfloat16 ULP test: whether |ox - round_bf16(y)| may exceed max_ulp. Rounds y to
// float (one instruction) and the float to bfloat16 in 32-bit integer lanes, instead of rounding the
// double in 64-bit lanes. The float grid refines the bfloat16 grid (midpoints and the overflow
// threshold included), so the two roundings give the direct one except when the first lands exactly
// on a bfloat16 midpoint from a value that was not one: such elements are flagged, and the
// reduction then counts them exactly.
[[gnu::always_inline]] inline bool bf16_ulp_may_exceed(std::int32_t ox, double y, std::int32_t max_ulp) {
  const float fy = static_cast<float>(y);
  const auto bits = std::bit_cast<std::uint32_t>(fy);
  const std::uint32_t mag = bits & 0x7FFF'FFFFu;
  // Ties to even; a carry moves into the exponent and past the largest finite value onto Inf.
  const auto rounded = static_cast<std::int32_t>((mag + 0x7FFFu + ((mag >> 16) & 1u)) >> 16);
  const std::int32_t negative = static_cast<std::int32_t>(bits) >> 31;
  const std::int32_t oy = (rounded ^ negative) - negative;
  const bool double_rounded_tie = ((mag & 0xFFFFu) == 0x8000u) & (static_cast<double>(fy) != y);
  return (ordered_distance(ox, oy) > static_cast<std::uint32_t>(max_ulp)) | double_rounded_tie;
}

// What the screen compares against: the running statistics before this chunk.
struct Screen {
  double atol, rtol;
  double worst_threshold;  // ratio an element must beat to enter `worst`
  double max_abs, max_rel, max_ulp;
};

// Flags are kept per block of kBlock elements, so a chunk with one new maximum reduces one block.
constexpr std::size_t kBlock = 128;
// Blocks a pre-check left open are screened again in sub-blocks, so that an element that raises a
// maximum (about 50 per 256 Ki elements, most of them the worst list's) costs the reduction 32
// elements rather than 128. The vectorised screens themselves keep the longer blocks (their loop
// overhead at 32: docs/performance.md, "Measurements behind the kernels").
constexpr std::size_t kSubBlock = 32;

struct ScreenResult {
  std::uint32_t flagged_blocks = 0;  // bit b: some element of block b could change max_abs/rel/ulp/
                                     // ratio or the worst list
  bool nonfinite = false;            // some element has NaN/Inf on either side
  std::int64_t failures = 0;         // !(|out - ref| <= atol + rtol*|ref|): exact for finite pairs
};

// Products are scaled down by this before comparing, so rounding in `thr * bound` can only make
// the screen flag more elements than the division in the precise pass would, never fewer.
constexpr double kSlack = 1.0 - 1e-12;

// Below this, a product's or quotient's rounding error is no longer relative (it reaches the
// subnormal range), so kSlack does not cover it: screens treat such thresholds as 0, and
// screen_body flags every pair whose difference is not 0 but below it.
constexpr double kTiny = 0x1p-1000;

[[gnu::always_inline]] inline double tiny_as_zero(double threshold) {
  return threshold < kTiny ? 0.0 : threshold;
}

// Screens one chunk. A chunk with no flagged and no non-finite element changes nothing but the
// failure count, which the screen counts exactly (the same expression as the precise pass; no
// floating-point contraction in this module). Flags accumulate without branches, so it vectorises.
template <UlpMode M, class Out, class Ref>
[[gnu::always_inline]] inline ScreenResult screen_body(Out out, Ref ref, std::size_t n, const Screen& s) {
  const double thr = tiny_as_zero(s.worst_threshold * kSlack);
  const double rel = tiny_as_zero(s.max_rel * kSlack);
  // max_ulp is a rounded double above 2^53; comparing against its truncation can only flag an
  // element whose distance converts to at most max_ulp, which the precise pass then leaves alone.
  const auto max_ulp32 = static_cast<std::uint32_t>(std::min(s.max_ulp, 4294967295.0));
  const auto max_ulp64 =
      s.max_ulp >= 18446744073709551615.0 ? ~std::uint64_t{0} : static_cast<std::uint64_t>(s.max_ulp);
  const auto max_ulp16 = static_cast<std::int32_t>(std::min(s.max_ulp, 1e9));
  // Accumulators as wide as the lanes they come from (64-bit for the double lanes, the ULP's own
  // width for its flag), ORed rather than counted: no shuffling between lane widths per element.
  using UlpFlag = std::conditional_t<M == UlpMode::f64, std::uint64_t, std::uint32_t>;
  std::uint64_t nonfinite = 0, failures = 0;
  std::uint32_t flagged_blocks = 0;
  for (std::size_t block = 0; block * kBlock < n; ++block) {
    std::uint64_t flagged = 0;
    UlpFlag ulp_flagged = 0;
    const std::size_t end = std::min(n, (block + 1) * kBlock);
    for (std::size_t i = block * kBlock; i < end; ++i) {
      const double x = out(i);
      const double y = ref(i);
      const double d = std::fabs(x - y);
      const double ay = std::fabs(y);
      const double bound = tolerance_bound(y, s.atol, s.rtol);
      // NaN/Inf on either side makes d or |ref| NaN/Inf; finite pairs near DBL_MAX whose sum
      // overflows are flagged too, which only sends them to the precise pass.
      nonfinite |= !(d + ay <= DBL_MAX) ? 1 : 0;
      failures += within_tolerance(x, y, s.atol, s.rtol) ? 0 : 1;
      // d above any of max_abs, thr*bound, rel*ay: one comparison with their minimum. std::min(a, b)
      // returns a when b is NaN (inf * 0), as the separate comparison d > NaN would not flag.
      bool flag = (d > std::min(std::min(s.max_abs, thr * bound), rel * ay)) | ((d > 0) & (d < kTiny));
      if constexpr (M == UlpMode::absolute) flag |= d > s.max_ulp;
      flagged |= flag ? 1 : 0;
      if constexpr (M == UlpMode::f32) {
        ulp_flagged |= ulp_of<M>(out, ref, i, x, y) > max_ulp32 ? 1 : 0;
      } else if constexpr (M == UlpMode::f64) {
        ulp_flagged |= ulp_of<M>(out, ref, i, x, y) > max_ulp64 ? 1 : 0;
      } else if constexpr (M == UlpMode::f16 || M == UlpMode::bf16) {
        if constexpr (M == UlpMode::bf16 && requires { out.bits(i); }) {
          ulp_flagged |= bf16_ulp_may_exceed(ordered_bits16(out.bits(i)), y, max_ulp16) ? 1 : 0;
        } else {
          ulp_flagged |= ulp_of<M>(out, ref, i, x, y) > max_ulp16 ? 1 : 0;
        }
      }
    }
    flagged_blocks |= (flagged | ulp_flagged) != 0 ? std::uint32_t{1} << block : 0;
  }
  return {flagged_blocks, nonfinite != 0, static_cast<std::int64_t>(failures)};
}

// The order-independent statistics of a chunk of finite pairs (max_abs, max_rel, max_ulp,
// max_ratio), each element's ratio (for the ordered worst-list pass), and how many ratios exceed
// `threshold` (the worst list's threshold before the chunk, which only rises).
struct ChunkMaxima {
  double max_abs = 0, max_rel = 0, max_ulp = 0, max_ratio = 0;
  std::size_t above_threshold = 0;
  std::int64_t failures = 0;  // !(|out - ref| <= atol + rtol*|ref|), for screens that do not count
};

// Lanes of the running maxima: written element-wise so GCC vectorises them without reassociating a
// floating-point reduction (the maxima are exact whatever the order; NaN ratios are never kept).
constexpr std::size_t kLanes = 8;

template <UlpMode M, class Out, class Ref>
[[gnu::always_inline]] inline ChunkMaxima reduce_body(Out out, Ref ref, std::size_t n, double atol,
                                                      double rtol, double threshold, double* ratios) {
  // f32 and 16-bit distances reduce as integers (exact, and vectorised); f64 distances as the
  // doubles the statistics hold (AVX2 has no unsigned 64-bit maximum).
  using UlpInt = std::conditional_t<
      M == UlpMode::f32, std::uint32_t,
      std::conditional_t<M == UlpMode::absolute || M == UlpMode::f64, double, std::int32_t>>;
  double abs_l[kLanes] = {}, rel_l[kLanes] = {}, ratio_l[kLanes] = {};
  UlpInt ulp_l[kLanes] = {};
  std::size_t above = 0;
  std::int64_t failures = 0;
  const std::size_t whole = n - n % kLanes;
  auto one = [&](std::size_t i, std::size_t lane) __attribute__((always_inline)) {
    const double x = out(i);
    const double y = ref(i);
    const double d = std::fabs(x - y);
    const double ay = std::fabs(y);
    const double bound = tolerance_bound(y, atol, rtol);
    // The precise pass's definitions; the quotients are taken unconditionally so the loop has no
    // branch, and selected as it selects them.
    const double q_ratio = d / bound;
    const double q_rel = d / ay;
    const double ratio = d == 0 ? 0.0 : bound > 0 ? q_ratio : INFINITY;
    const double rel = d == 0 ? 0.0 : ay > 0 ? q_rel : INFINITY;
    ratios[i] = ratio;
    above += ratio > threshold ? 1 : 0;
    failures += within_tolerance(x, y, atol, rtol) ? 0 : 1;
    abs_l[lane] = abs_l[lane] < d ? d : abs_l[lane];
    rel_l[lane] = rel_l[lane] < rel ? rel : rel_l[lane];
    ratio_l[lane] = ratio_l[lane] < ratio ? ratio : ratio_l[lane];  // a NaN ratio is never kept
    UlpInt u;
    if constexpr (M == UlpMode::absolute) {
      u = d;
    } else {
      u = static_cast<UlpInt>(ulp_of<M>(out, ref, i, x, y));
    }
    ulp_l[lane] = ulp_l[lane] < u ? u : ulp_l[lane];
  };
  for (std::size_t i = 0; i < whole; i += kLanes) {
    for (std::size_t lane = 0; lane < kLanes; ++lane) one(i + lane, lane);
  }
  for (std::size_t i = whole; i < n; ++i) one(i, 0);
  ChunkMaxima m;
  UlpInt max_ulp = 0;
  for (std::size_t lane = 0; lane < kLanes; ++lane) {
    m.max_abs = std::max(m.max_abs, abs_l[lane]);
    m.max_rel = std::max(m.max_rel, rel_l[lane]);
    m.max_ratio = std::max(m.max_ratio, ratio_l[lane]);
    max_ulp = std::max(max_ulp, ulp_l[lane]);
  }
  m.max_ulp = static_cast<double>(max_ulp);  // conversion is monotone: the max of the converted
  m.above_threshold = above;
  m.failures = failures;
  return m;
}

#if defined(__x86_64__) && defined(__GNUC__)
// The float16 screen's first half, for CPUs with F16C (its callers are compiled with it): decodes
// the chunk's outputs to float with vcvtph2ps (exact) into `out_f`, for the screen to read as
// float32 outputs, and returns the blocks (bit b: block b) holding an element whose ULP distance
// may exceed max_ulp. The reference is rounded to float and then by vcvtps2ph to float16 (nearest
// even); the two roundings differ from the direct one only when the first lands exactly on a
// float16 midpoint from a value that was not one, and every such float has its low 12 bits zero
// (a normal float16 drops 13 bits, a subnormal more): those elements are flagged, and the
// reduction counts them exactly. NaN/Inf elements are the screen's (it sees them in out_f).
template <class Ref>
[[gnu::always_inline, gnu::target("avx2,f16c")]] inline std::uint32_t f16_prepass(const std::byte* out,
                                                                                  Ref ref, std::size_t n,
                                                                                  std::int32_t max_ulp,
                                                                                  float* out_f) {
  using Stored = std::remove_cv_t<std::remove_reference_t<decltype(ref.stored(0))>>;
  // Distances are at most 2 * 0x7C00 (Inf to -Inf; NaN is the screen's), so they fit uint16 lanes and
  // a limit of 0xFFFF or more is never exceeded.
  const __m128i limit = _mm_set1_epi16(static_cast<std::int16_t>(std::min(max_ulp, 0xFFFF)));
  const __m128i magnitude = _mm_set1_epi16(0x7FFF);
  const __m256i low_bits = _mm256_set1_epi32(0xFFF);
  // Eight elements: decodes the outputs into `decoded`, returns lanes (16-bit) whose distance
  // exceeds max_ulp and sets `midpoint` (bit per element) where double rounding is possible.
  const auto eight = [&](__m128i h, const Stored* y, float* decoded, int& midpoint)
      __attribute__((always_inline, target("avx2,f16c"))) {
    _mm256_storeu_ps(decoded, _mm256_cvtph_ps(h));
    __m256 fy;
    if constexpr (std::is_same_v<Stored, double>) {
      fy = _mm256_set_m128(_mm256_cvtpd_ps(_mm256_loadu_pd(y + 4)), _mm256_cvtpd_ps(_mm256_loadu_pd(y)));
    } else {
      fy = _mm256_loadu_ps(y);
    }
    const __m256i tail = _mm256_and_si256(_mm256_castps_si256(fy), low_bits);
    midpoint = _mm256_movemask_ps(_mm256_castsi256_ps(_mm256_cmpeq_epi32(tail, _mm256_setzero_si256())));
    const __m128i hy = _mm256_cvtps_ph(fy, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
    // Ordered integers in 16-bit lanes (-0 and +0 both 0); max - min wraps into uint16 exactly.
    const __m128i ox = _mm_sign_epi16(_mm_and_si128(h, magnitude), h);
    const __m128i oy = _mm_sign_epi16(_mm_and_si128(hy, magnitude), hy);
    const __m128i distance = _mm_sub_epi16(_mm_max_epi16(ox, oy), _mm_min_epi16(ox, oy));
    return _mm_subs_epu16(distance, limit);  // non-zero where distance > max_ulp
  };
  // Which of the midpoint candidates were rounded (a float reference never is).
  const auto inexact = [&](const Stored* y) __attribute__((always_inline, target("avx2,f16c"))) {
    if constexpr (std::is_same_v<Stored, double>) {
      int bits = 0;
      for (int k = 0; k < 8; ++k) bits |= static_cast<double>(static_cast<float>(y[k])) != y[k] ? 1 << k : 0;
      return bits;
    } else {
      return 0;
    }
  };
  const auto* y = reinterpret_cast<const Stored*>(ref.p);
  std::uint32_t blocks = 0;
  const std::size_t whole = n - n % 8;
  for (std::size_t begin = 0; begin < whole; begin += kBlock) {
    const std::size_t end = std::min(whole, begin + kBlock);
    __m128i beyond = _mm_setzero_si128();
    bool flag = false;
    for (std::size_t i = begin; i < end; i += 8) {
      int midpoint;
      beyond = _mm_or_si128(beyond, eight(_mm_loadu_si128(reinterpret_cast<const __m128i*>(out + 2 * i)),
                                          y + i, out_f + i, midpoint));
      if (midpoint != 0) [[unlikely]]
        flag |= (midpoint & inexact(y + i)) != 0;
    }
    flag |= _mm_testz_si128(beyond, beyond) == 0;
    blocks |= flag ? std::uint32_t{1} << (begin / kBlock) : 0;
  }
  if (whole < n) {  // the last few elements, padded with zeros (distance 0, exact)
    alignas(16) std::uint16_t h8[8] = {};
    Stored y8[8] = {};
    float f8[8];
    std::memcpy(h8, out + 2 * whole, 2 * (n - whole));
    std::memcpy(y8, y + whole, sizeof(Stored) * (n - whole));
    int midpoint;
    const __m128i beyond = eight(_mm_load_si128(reinterpret_cast<const __m128i*>(h8)), y8, f8, midpoint);
    std::memcpy(out_f + whole, f8, sizeof(float) * (n - whole));
    const bool flag = _mm_testz_si128(beyond, beyond) == 0 || (midpoint & inexact(y8)) != 0;
    blocks |= flag ? std::uint32_t{1} << (whole / kBlock) : 0;
  }
  return blocks;
}
#endif

}  // namespace gpuemu::check::kernels
