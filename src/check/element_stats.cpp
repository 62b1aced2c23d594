// The comparison's hot loop. Each chunk of decoded pairs first goes through a branch-free screen
// that the compiler vectorises; only chunks that could change a statistic (a failure, a NaN/Inf,
// a new maximum or worst candidate) go through the precise scalar pass, the single source of truth.
#include "check/element_stats.hpp"

#include <bit>
#include <cfloat>
#include <cmath>
#include <limits>

#include "check/ulp16.hpp"
#include "tensor/element.hpp"
#include "tensor/half.hpp"

namespace gpuemu::check {

using tensor::DType;

struct StatsAccumulator::Chunk {
  const std::string& name;
  const tensor::Shape& shape;
  DType out_dtype;
  std::int64_t first;  // row-major index of element 0 of this chunk
  std::size_t size;
  const double* actual;
  const double* expected;
};

namespace {

enum class UlpMode { f64, f32, f16, bf16, absolute };

UlpMode ulp_mode(DType dtype) {
  switch (dtype) {
    case DType::float64:
      return UlpMode::f64;
    case DType::float32:
      return UlpMode::f32;
    case DType::float16:
      return UlpMode::f16;
    case DType::bfloat16:
      return UlpMode::bf16;
    default:
      return UlpMode::absolute;
  }
}

// Ordered-integer form of a float (see ulp_distance_f32) in 32 bits: sign-magnitude to two's
// complement with -0 and +0 both 0. Distances fit in uint32 (at most 2 * 0x7F800000).
inline std::int32_t ordered_f32(double v) {
  const auto bits = std::bit_cast<std::int32_t>(static_cast<float>(v));
  return bits >= 0 ? bits : std::numeric_limits<std::int32_t>::min() - bits;
}

inline std::uint32_t ulp_f32(double out, double ref) {
  const auto a = static_cast<std::uint32_t>(ordered_f32(out));
  const auto b = static_cast<std::uint32_t>(ordered_f32(ref));
  return static_cast<std::int32_t>(a - b) >= 0 ? a - b : b - a;
}

// The same for double: ordered int64, distance as uint64 (opposite signs can need all 64 bits).
inline std::int64_t ordered_f64(double v) {
  const auto bits = std::bit_cast<std::int64_t>(v);
  return bits >= 0 ? bits : std::numeric_limits<std::int64_t>::min() - bits;
}

inline std::uint64_t ulp_f64(double out, double ref) {
  const auto a = static_cast<std::uint64_t>(ordered_f64(out));
  const auto b = static_cast<std::uint64_t>(ordered_f64(ref));
  return static_cast<std::int64_t>(a - b) >= 0 ? a - b : b - a;
}

double ulp_any(DType dtype, double out, double ref, double abs_diff) {
  switch (ulp_mode(dtype)) {
    // The inline forms the screen uses: equal to tensor::ulp_distance_* for the finite values this
    // is called with (stats_test's oracle uses the tensor module's definitions).
    case UlpMode::f64:
      return static_cast<double>(ulp_f64(out, ref));
    case UlpMode::f32:
      return static_cast<double>(ulp_f32(out, ref));
    case UlpMode::f16:
      return ulp_f16_inline(out, ref);
    case UlpMode::bf16:
      return ulp_bf16_inline(out, ref);
    case UlpMode::absolute:
      return abs_diff;
  }
  return abs_diff;
}

// What the screen compares against: the running statistics before this chunk.
struct Screen {
  double atol, rtol;
  double worst_threshold;  // ratio an element must beat to enter `worst`
  double max_abs, max_rel, max_ulp;
};

// Products are scaled down by this before comparing, so rounding in `thr * bound` can only make
// the screen flag more elements than the division in the precise pass would, never fewer.
constexpr double kSlack = 1.0 - 1e-12;

// Counts the elements of a chunk that could change anything: a failure, a NaN/Inf on either side,
// a new worst candidate (which also covers a new max ratio, since the worst list holds the
// largest ratios), or a new max abs/rel/ulp. A chunk with none leaves every statistic as it was,
// so only flagged chunks go through the precise pass. Comparisons use products instead of
// divisions and flags accumulate without branches, so the loop vectorises.
// Element sources for the screen: decoded doubles, or raw contiguous float32/float64 storage read
// in place (the fast path for the common case, which skips the decoding pass entirely).
struct Decoded {
  const double* p;
  double operator()(std::size_t i) const { return p[i]; }
};
template <class T>
struct Raw {
  const std::byte* p;
  double operator()(std::size_t i) const { return tensor::load_raw<T>(p + sizeof(T) * i); }
};

template <UlpMode M, class Out, class Ref>
std::size_t screen_chunk(Out out, Ref ref, std::size_t n, const Screen& s) {
  const double thr = s.worst_threshold * kSlack;
  const double rel = s.max_rel * kSlack;
  const auto max_ulp32 = static_cast<std::uint32_t>(std::min(s.max_ulp, 4294967295.0));
  // max_ulp is a rounded double above 2^53; comparing against its truncation can only flag an
  // element whose distance converts to at most max_ulp, which the precise pass then leaves alone.
  const auto max_ulp64 =
      s.max_ulp >= 18446744073709551615.0 ? ~std::uint64_t{0} : static_cast<std::uint64_t>(s.max_ulp);
  std::size_t flagged = 0;
  for (std::size_t i = 0; i < n; ++i) {
    const double x = out(i);
    const double y = ref(i);
    const double d = std::fabs(x - y);
    const double ay = std::fabs(y);
    const double bound = s.atol + s.rtol * ay;
    bool flag = !(d <= bound) | !(std::fabs(x) <= DBL_MAX) | !(ay <= DBL_MAX) | (d > thr * bound) |
                (d > s.max_abs) | (d > rel * ay);
    if constexpr (M == UlpMode::f32) {
      flag |= ulp_f32(x, y) > max_ulp32;
    } else if constexpr (M == UlpMode::absolute) {
      flag |= d > s.max_ulp;
    } else if constexpr (M == UlpMode::f64) {
      flag |= ulp_f64(x, y) > max_ulp64;
    } else if constexpr (M == UlpMode::f16) {
      flag |= ulp_f16_inline(x, y) > s.max_ulp;
    } else {
      flag |= ulp_bf16_inline(x, y) > s.max_ulp;
    }
    flagged += flag ? 1 : 0;
  }
  return flagged;
}

std::size_t screen_decoded(DType dtype, const double* out, const double* ref, std::size_t n,
                           const Screen& s) {
  const Decoded o{out}, r{ref};
  switch (ulp_mode(dtype)) {
    case UlpMode::f64:
      return screen_chunk<UlpMode::f64>(o, r, n, s);
    case UlpMode::f32:
      return screen_chunk<UlpMode::f32>(o, r, n, s);
    case UlpMode::f16:
      return screen_chunk<UlpMode::f16>(o, r, n, s);
    case UlpMode::bf16:
      return screen_chunk<UlpMode::bf16>(o, r, n, s);
    case UlpMode::absolute:
      return screen_chunk<UlpMode::absolute>(o, r, n, s);
  }
  return n;
}

bool is_raw_screenable(const tensor::Tensor& t) {
  return (t.dtype == DType::float32 || t.dtype == DType::float64) && t.is_contiguous();
}

// Screens elements [first, first + n) of two contiguous float32/float64 tensors in place.
std::size_t screen_raw(const tensor::Tensor& out, const tensor::Tensor& ref, std::int64_t first,
                       std::size_t n, const Screen& s) {
  const std::byte* o = out.data.data() + static_cast<std::size_t>(first) * tensor::dtype_size(out.dtype);
  const std::byte* r = ref.data.data() + static_cast<std::size_t>(first) * tensor::dtype_size(ref.dtype);
  const bool out32 = out.dtype == DType::float32;
  const bool ref32 = ref.dtype == DType::float32;
  if (out32) {
    return ref32 ? screen_chunk<UlpMode::f32>(Raw<float>{o}, Raw<float>{r}, n, s)
                 : screen_chunk<UlpMode::f32>(Raw<float>{o}, Raw<double>{r}, n, s);
  }
  return ref32 ? screen_chunk<UlpMode::f64>(Raw<double>{o}, Raw<float>{r}, n, s)
               : screen_chunk<UlpMode::f64>(Raw<double>{o}, Raw<double>{r}, n, s);
}

}  // namespace

void StatsAccumulator::add_output(const std::string& name, const tensor::Tensor& actual,
                                  const tensor::Tensor& expected) {
  std::array<double, kChunk> out_buf;
  std::array<double, kChunk> ref_buf;
  const std::int64_t n = actual.numel();
  elements_ += n;
  const bool raw = is_raw_screenable(actual) && is_raw_screenable(expected);
  for (std::int64_t first = 0; first < n; first += static_cast<std::int64_t>(kChunk)) {
    const auto size = static_cast<std::size_t>(std::min<std::int64_t>(kChunk, n - first));
    const Screen screen{
        rules_.tolerance.atol, rules_.tolerance.rtol, worst_threshold(), max_abs_, max_rel_, max_ulp_};
    if (raw && screen_raw(actual, expected, first, size, screen) == 0) {
      continue;  // nothing in this chunk can change a statistic: no need to decode it
    }
    actual.decode_range(first, std::span<double>(out_buf.data(), size));
    expected.decode_range(first, std::span<double>(ref_buf.data(), size));
    const Chunk chunk{name, actual.shape, actual.dtype, first, size, out_buf.data(), ref_buf.data()};
    if (raw || screen_decoded(actual.dtype, chunk.actual, chunk.expected, size, screen) != 0) {
      precise_chunk(chunk);
    }
  }
}

void StatsAccumulator::precise_chunk(const Chunk& chunk) {
  const double atol = rules_.tolerance.atol;
  const double rtol = rules_.tolerance.rtol;
  for (std::size_t i = 0; i < chunk.size; ++i) {
    const double x = chunk.actual[i];
    const double y = chunk.expected[i];
    if (!std::isfinite(y)) {
      // The reference's NaN/Inf must be matched exactly: NaN by NaN, +inf by +inf.
      const bool same = std::isnan(y) ? std::isnan(x) : x == y;
      if (!same) {
        ++nonfinite_;
        if (!first_nonfinite_) first_nonfinite_ = make_diff(chunk, i, INFINITY, INFINITY);
        offer_worst(INFINITY, chunk, i, INFINITY, INFINITY);
      }
      continue;
    }
    if (!std::isfinite(x)) {
      if (std::isnan(x) ? rules_.check_nan : rules_.check_inf) {
        ++unexpected_;
        if (!first_unexpected_) first_unexpected_ = make_diff(chunk, i, INFINITY, INFINITY);
        offer_worst(INFINITY, chunk, i, INFINITY, INFINITY);
      }
      continue;  // unchecked NaN/Inf elements are skipped entirely
    }
    const double d = std::fabs(x - y);
    const double ay = std::fabs(y);
    const double bound = atol + rtol * ay;
    const double ratio = d == 0 ? 0.0 : bound > 0 ? d / bound : INFINITY;
    const double rel = d == 0 ? 0.0 : ay > 0 ? d / ay : INFINITY;
    max_abs_ = std::max(max_abs_, d);
    max_rel_ = std::max(max_rel_, rel);
    max_ulp_ = std::max(max_ulp_, ulp_any(chunk.out_dtype, x, y, d));
    max_ratio_ = std::max(max_ratio_, ratio);
    if (!(d <= bound)) {
      ++finite_failures_;
    }
    if (ratio > worst_threshold()) offer_worst(ratio, chunk, i, d, rel);
  }
}

void StatsAccumulator::offer_worst(double ratio, const Chunk& chunk, std::size_t i, double abs_err,
                                   double rel_err) {
  if (!(ratio > worst_threshold())) {
    return;
  }
  std::size_t at = std::min(worst_count_, kWorst - 1);
  while (at > 0 && ratio > worst_ratio_[at - 1]) {  // strict: earlier elements win ties
    worst_ratio_[at] = worst_ratio_[at - 1];
    worst_[at] = std::move(worst_[at - 1]);
    --at;
  }
  worst_ratio_[at] = ratio;
  worst_[at] = make_diff(chunk, i, abs_err, rel_err);
  worst_count_ = std::min(worst_count_ + 1, kWorst);
}

ElementDiff StatsAccumulator::make_diff(const Chunk& chunk, std::size_t i, double abs_err,
                                        double rel_err) const {
  const std::int64_t linear = chunk.first + static_cast<std::int64_t>(i);
  return ElementDiff{chunk.name,      tensor::unravel_index(chunk.shape, linear),
                     chunk.actual[i], chunk.expected[i],
                     abs_err,         rel_err};
}

ErrorStats StatsAccumulator::finish() const {
  ErrorStats s;
  s.max_abs = max_abs_;
  s.max_rel = max_rel_;
  s.max_ulp = max_ulp_;
  s.mismatches = nonfinite_ + unexpected_ + finite_failures_;
  s.elements = elements_;
  s.mismatch_fraction =
      elements_ > 0 ? static_cast<double>(s.mismatches) / static_cast<double>(elements_) : 0.0;
  s.tolerance_used = nonfinite_ + unexpected_ > 0 ? INFINITY : max_ratio_;
  s.worst.assign(worst_.begin(), worst_.begin() + static_cast<std::ptrdiff_t>(worst_count_));
  return s;
}

}  // namespace gpuemu::check
