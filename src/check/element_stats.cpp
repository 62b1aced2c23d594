// The comparison's hot loop. Each chunk of decoded pairs first goes through a branch-free pass
// that the compiler vectorises; only chunks holding a failure, a non-finite value or a new
// "worst" candidate are redone by the precise scalar pass, which is the single source of truth.
#include "check/element_stats.hpp"

#include <bit>
#include <cfloat>
#include <cmath>

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

// Ordered-integer form of a float (see ulp_distance_f32), inlined so the fast pass vectorises.
inline std::int64_t ordered_f32(double v) {
  const auto bits = std::bit_cast<std::uint32_t>(static_cast<float>(v));
  const std::int64_t magnitude = bits & 0x7FFFFFFFu;
  return (bits & 0x80000000u) != 0 ? -magnitude : magnitude;
}

template <UlpMode M>
inline double ulp_of(double out, double ref, double abs_diff) {
  if constexpr (M == UlpMode::f64) {
    return tensor::ulp_distance_f64(out, ref);
  } else if constexpr (M == UlpMode::f32) {
    const std::int64_t d = ordered_f32(out) - ordered_f32(ref);
    return static_cast<double>(d < 0 ? -d : d);
  } else if constexpr (M == UlpMode::f16) {
    return tensor::ulp_distance_f16(out, ref);
  } else if constexpr (M == UlpMode::bf16) {
    return tensor::ulp_distance_bf16(out, ref);
  } else {
    return abs_diff;
  }
}

double ulp_any(DType dtype, double out, double ref, double abs_diff) {
  switch (ulp_mode(dtype)) {
    case UlpMode::f64:
      return ulp_of<UlpMode::f64>(out, ref, abs_diff);
    case UlpMode::f32:
      return ulp_of<UlpMode::f32>(out, ref, abs_diff);
    case UlpMode::f16:
      return ulp_of<UlpMode::f16>(out, ref, abs_diff);
    case UlpMode::bf16:
      return ulp_of<UlpMode::bf16>(out, ref, abs_diff);
    case UlpMode::absolute:
      return abs_diff;
  }
  return abs_diff;
}

struct FastResult {
  double max_abs = 0, max_rel = 0, max_ulp = 0, max_ratio = 0;
  std::int64_t suspicious = 0;
};

// Valid only when it finds nothing suspicious: every pair finite, inside tolerance, and below
// the current worst threshold. Divisions by a zero bound give NaN (0/0) or +inf; NaN is ignored
// by the `>` maxima (its true value is 0) and +inf always comes with a failure, so it is redone.
template <UlpMode M>
FastResult fast_pass(const double* out, const double* ref, std::size_t n, double atol, double rtol,
                     double threshold) {
  FastResult r;
  for (std::size_t i = 0; i < n; ++i) {
    const double x = out[i];
    const double y = ref[i];
    const double d = std::fabs(x - y);
    const double ay = std::fabs(y);
    const double bound = atol + rtol * ay;
    const double ratio = d / bound;
    const double rel = d / ay;
    const double ulp = ulp_of<M>(x, y, d);
    const bool ok = (d <= bound) & (std::fabs(x) <= DBL_MAX) & (ay <= DBL_MAX) & !(ratio > threshold);
    r.suspicious += ok ? 0 : 1;
    r.max_abs = d > r.max_abs ? d : r.max_abs;
    r.max_rel = rel > r.max_rel ? rel : r.max_rel;
    r.max_ulp = ulp > r.max_ulp ? ulp : r.max_ulp;
    r.max_ratio = ratio > r.max_ratio ? ratio : r.max_ratio;
  }
  return r;
}

FastResult fast_any(DType dtype, const double* out, const double* ref, std::size_t n, double atol,
                    double rtol, double threshold) {
  switch (ulp_mode(dtype)) {
    case UlpMode::f64:
      return fast_pass<UlpMode::f64>(out, ref, n, atol, rtol, threshold);
    case UlpMode::f32:
      return fast_pass<UlpMode::f32>(out, ref, n, atol, rtol, threshold);
    case UlpMode::f16:
      return fast_pass<UlpMode::f16>(out, ref, n, atol, rtol, threshold);
    case UlpMode::bf16:
      return fast_pass<UlpMode::bf16>(out, ref, n, atol, rtol, threshold);
    case UlpMode::absolute:
      return fast_pass<UlpMode::absolute>(out, ref, n, atol, rtol, threshold);
  }
  return {};
}

}  // namespace

void StatsAccumulator::add_output(const std::string& name, const tensor::Tensor& actual,
                                  const tensor::Tensor& expected) {
  std::array<double, kChunk> out_buf;
  std::array<double, kChunk> ref_buf;
  const std::int64_t n = actual.numel();
  elements_ += n;
  for (std::int64_t first = 0; first < n; first += static_cast<std::int64_t>(kChunk)) {
    const auto size = static_cast<std::size_t>(std::min<std::int64_t>(kChunk, n - first));
    actual.decode_range(first, std::span<double>(out_buf.data(), size));
    expected.decode_range(first, std::span<double>(ref_buf.data(), size));
    const Chunk chunk{name, actual.shape, actual.dtype, first, size, out_buf.data(), ref_buf.data()};
    const FastResult fast = fast_any(actual.dtype, chunk.actual, chunk.expected, size, rules_.tolerance.atol,
                                     rules_.tolerance.rtol, worst_threshold());
    if (fast.suspicious != 0) {
      precise_chunk(chunk);
      continue;
    }
    max_abs_ = std::max(max_abs_, fast.max_abs);
    max_rel_ = std::max(max_rel_, fast.max_rel);
    max_ulp_ = std::max(max_ulp_, fast.max_ulp);
    max_ratio_ = std::max(max_ratio_, fast.max_ratio);
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
    offer_worst(ratio, chunk, i, d, rel);
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
