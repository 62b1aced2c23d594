// The floating-point fill: each element computed alone from counter-based streams, in float64,
// clamped to the domain and rounded once to the dtype. Mirrors python/gpuemu/_internal/core/values.py line by
// line.
#include <algorithm>
#include <array>
#include <bit>
#include <bitset>
#include <cmath>
#include <cstring>
#include <vector>

#include "rng/counter.hpp"
#include "rng/seeded_rng.hpp"
#include "rng/value_plan.hpp"
#include "tensor/half.hpp"

namespace gpuemu::rng {
namespace {

using tensor::DType;

struct FloatInfo {
  double min_normal;
  double min_subnormal;
  double max_finite;
  int mantissa_bits;
};

FloatInfo float_info(DType dtype) {
  switch (dtype) {
    case DType::float16:
      return {0x1p-14, 0x1p-24, 65504.0, 10};
    case DType::bfloat16:
      return {0x1p-126, 0x1p-133, 0x1.FEp127, 7};
    case DType::float32:
      return {0x1p-126, 0x1p-149, 0x1.FFFFFEp127, 23};
    default:
      return {0x1p-1022, 0x1p-1074, 0x1.FFFFFFFFFFFFFp1023, 52};
  }
}

int exponent_of(double v) {  // floor(log2(v)) for v > 0, as Python's frexp(v)[1] - 1
  int e = 0;
  std::frexp(v, &e);
  return e - 1;
}

// Not std::clamp: keeps -0.0 exactly as numpy.where(x < lo, lo, where(x > hi, hi, x)) does.
double clamp_to(double x, double lo, double hi) {
  return x < lo ? lo : (x > hi ? hi : x);
}

// mulhi(u, n) for n < 2^32 with 64-bit operations only: u*n = 2^32 (uh*n + (ul*n >> 32)) + low bits.
[[gnu::always_inline]] inline std::uint64_t mulhi_small(std::uint64_t u, std::uint64_t n) {
  return ((u >> 32) * n + (((u & 0xFFFFFFFFu) * n) >> 32)) >> 32;
}

constexpr std::uint64_t kSignBit = 1ull << 63;

// 2^e exactly, as std::ldexp(1.0, e): built from its exponent bits where it is a normal double
// (a call to scalbn per element was 1.4% of a run's CPU in perf).
inline double power_of_two(int e) {
  if (e >= -1022 && e <= 1023) return std::bit_cast<double>(static_cast<std::uint64_t>(1023 + e) << 52);
  return std::ldexp(1.0, e);
}

// The boundary distribution's categories in one array: category c holds values[offsets[c]] ..
// values[offsets[c] + sizes[c] - 1]. Flat, so a block of elements is looked up in a vector loop.
struct BoundaryTable {
  std::vector<double> values;
  std::vector<std::uint64_t> offsets;
  std::vector<std::uint64_t> sizes;
};

// One element's values of the four streams.
struct Draws {
  std::uint64_t a, b, c, d;
};

// Everything an element needs, computed once per tensor.
class FloatFill {
 public:
  FloatFill(const ValuePlan& plan, std::uint64_t seed, DType dtype, const ResolvedDomain& d,
            std::uint64_t row_len)
      : plan_(plan), dtype_(dtype), lo_(d.lo), hi_(d.hi), any_(d.any), row_len_(row_len) {
    a_ = derive_seed(seed, "values/a");
    b_ = derive_seed(seed, "values/b");
    d_ = derive_seed(seed, "values/d");
    row_ = derive_seed(seed, "values/row");
    mid_ = 0.5 * lo_ + 0.5 * hi_;
    half_ = 0.5 * hi_ - 0.5 * lo_;
    zero_ = clamp_to(0.0, lo_, hi_);
    const FloatInfo info = float_info(dtype);
    eps_ = std::ldexp(1.0, -info.mantissa_bits);
    const double amax = std::max(std::fabs(lo_), std::fabs(hi_));
    const double amin = (lo_ <= 0.0 && 0.0 <= hi_) ? 0.0 : std::min(std::fabs(lo_), std::fabs(hi_));
    e_lo_ = amin > 0 ? exponent_of(amin) : exponent_of(info.min_subnormal);
    e_hi_ = amax > 0 ? exponent_of(amax) : e_lo_;
    for (double v : plan.float_pool) {
      pool_.push_back(lo_ * (1.0 - v) + hi_ * v);
    }
    if (plan.distribution == ValueDistribution::boundary) {
      build_boundary(info);
    }
  }

  // The boundary categories, flattened (BoundaryTable).
  const BoundaryTable& boundary() const { return boundary_; }

  // The adversarial elements first .. first+n-1 from their draws (streams a, b, c, d; docs/rng.md
  // 4.5): the pattern is chosen once a block, so each pattern's loop is compiled (and vectorised,
  // in the instruction set's copy that calls it) on its own, without a branch on random bits.
  [[gnu::always_inline]] void adversarial_block(std::uint64_t first, std::size_t n, const std::uint64_t* a,
                                                const std::uint64_t* b, const std::uint64_t* c,
                                                const std::uint64_t* d, double* out) const {
    switch (plan_.float_pattern) {
      case FloatPattern::dynamic_range:
        return each(n, out, [&](std::size_t k) { return dynamic_range({a[k], b[k], c[k], d[k]}); });
      case FloatPattern::huge_logits:
        return each(n, out, [&](std::size_t k) { return huge_logits({a[k], b[k], c[k], d[k]}); });
      case FloatPattern::near_cancellation:
        return each(n, out, [&](std::size_t k) { return near_cancellation(first + k); });
      case FloatPattern::ties:
        return each(n, out, [&](std::size_t k) { return pool_[mulhi(a[k], pool_.size())]; });
      case FloatPattern::zero_rows:
      case FloatPattern::one_hot:
        return by_rows(first, n, a, b, d, out);
      case FloatPattern::alternating_signs:
        return each(n, out, [&](std::size_t k) {
          const double m = std::fabs(base({a[k], b[k], c[k], d[k]}));
          return ((first + k) & 1) == 0 ? m : -m;
        });
    }
    each(n, out, [&](std::size_t) { return zero_; });
  }

 private:
  template <class Element>
  [[gnu::always_inline]] static void each(std::size_t n, double* out, Element element) {
    for (std::size_t k = 0; k < n; ++k) out[k] = element(k);
  }

  [[gnu::always_inline]] static double uni(const Draws& u) {
    return static_cast<double>(u.c >> 11) * 0x1p-53;
  }

  [[gnu::always_inline]] static double bell(const Draws& u) {
    const std::uint64_t total = (u.a >> 32) + (u.a & 0xFFFFFFFFu) + (u.b >> 32) + (u.b & 0xFFFFFFFFu);
    return static_cast<double>(total) * 0x1p-33 - 1.0;
  }

  [[gnu::always_inline]] double base(const Draws& u) const {
    if (any_) {
      static constexpr std::array<double, 9> kScale{1, 2, 4, 8, 16, 32, 64, 128, 256};  // 2^0..2^8
      return bell(u) * kScale[mulhi(u.d, 9)];
    }
    return mid_ + bell(u) * half_;
  }

  [[gnu::always_inline]] double dynamic_range(const Draws& u) const {
    // mulhi_small: the span of exponents is at most 2,098 (float64's), far below 2^32.
    const auto span = static_cast<std::uint64_t>(e_hi_ - e_lo_ + 1);
    const int e = static_cast<int>(mulhi_small(u.d, span)) + e_lo_;
    const double mag = (1.0 + uni(u)) * power_of_two(e);
    if (lo_ >= 0.0) {
      return mag;
    }
    if (hi_ <= 0.0) {
      return -mag;
    }
    // -mag when b's top bit is set: a negation is exactly a flip of the sign bit.
    return std::bit_cast<double>(std::bit_cast<std::uint64_t>(mag) ^ (u.b & kSignBit));
  }

  [[gnu::always_inline]] double huge_logits(const Draws& u) const {
    // Both candidates, then a select: mulhi(d, 8) != 0 is d's top 3 bits not all clear.
    const double x = uni(u);
    const double spike = (u.b >> 63) == 0 ? hi_ - half_ * x * 0.0625 : lo_ + half_ * x * 0.0625;
    const double regular = base(u);
    return (u.d >> 61) != 0 ? regular : spike;
  }

  [[gnu::always_inline]] double near_cancellation(std::uint64_t i) const {
    const std::uint64_t pair = i >> 1;  // the base value at the pair index
    const double v =
        base({counter_u64(a_, pair), counter_u64(b_, pair), 0, any_ ? counter_u64(d_, pair) : 0});
    if ((i & 1) == 0) {
      return v;
    }
    const double w = -v + v * eps_;
    return (w < lo_ || w > hi_) ? v - v * eps_ : w;
  }

  // zero_rows and one_hot: each row's draw once (counter_u64(row, i / row_len)), not a division and
  // a draw per element.
  [[gnu::always_inline]] void by_rows(std::uint64_t first, std::size_t n, const std::uint64_t* a,
                                      const std::uint64_t* b, const std::uint64_t* d, double* out) const {
    std::uint64_t row = first / row_len_;
    std::uint64_t col = first % row_len_;
    const double spike = hi_ != zero_ ? hi_ : lo_;
    for (std::size_t k = 0; k < n; ++row, col = 0) {
      const std::uint64_t draw = counter_u64(row_, row);
      const std::size_t stop = static_cast<std::size_t>(std::min<std::uint64_t>(n, k + (row_len_ - col)));
      if (plan_.float_pattern == FloatPattern::zero_rows) {
        const bool zero = (draw >> 63) == 1;
        for (; k < stop; ++k) out[k] = zero ? zero_ : base({a[k], b[k], 0, d[k]});
      } else {
        const std::uint64_t hot = mulhi(draw, row_len_);
        for (; k < stop; ++k, ++col) out[k] = col == hot ? spike : zero_;
      }
    }
  }

  void build_boundary(const FloatInfo& info) {
    const double mn = info.min_normal;
    const double ms = info.min_subnormal;
    const double mx = info.max_finite;
    std::vector<double> zeros;
    if (lo_ <= 0.0 && 0.0 <= hi_) {
      zeros.push_back(0.0);
    }
    if (lo_ < 0.0 && 0.0 <= hi_) {
      zeros.push_back(-0.0);
    }
    std::vector<double> powers;
    for (int k = -16; k <= 16; ++k) {
      powers.push_back(std::ldexp(1.0, k));
      powers.push_back(-std::ldexp(1.0, k));
    }
    const std::vector<std::vector<double>> groups = {
        {1.0, -1.0}, {mn, -mn}, {ms, -ms, mn - ms, -(mn - ms), mn / 2, -mn / 2}, {mx, -mx}, powers};
    const std::vector<double> ends = {lo_, hi_, std::min(dtype_step(lo_, dtype_, true), hi_),
                                      std::max(dtype_step(hi_, dtype_, false), lo_)};
    std::vector<std::vector<double>> categories;
    auto keep = [&categories](std::vector<double> c) {
      if (!c.empty()) {
        categories.push_back(std::move(c));
      }
    };
    keep(zeros);
    for (const auto& group : groups) {
      std::vector<double> inside;
      for (double v : group) {
        if (lo_ <= v && v <= hi_) {
          inside.push_back(v);
        }
      }
      keep(inside);
    }
    keep(ends);
    for (const auto& cat : categories) {
      boundary_.offsets.push_back(boundary_.values.size());
      boundary_.sizes.push_back(cat.size());
      boundary_.values.insert(boundary_.values.end(), cat.begin(), cat.end());
    }
  }

  const ValuePlan& plan_;
  DType dtype_;
  double lo_, hi_;
  bool any_;
  std::uint64_t row_len_;
  std::uint64_t a_ = 0, b_ = 0, d_ = 0, row_ = 0;  // stream seeds (c is read only a block at a time)
  double mid_ = 0, half_ = 0, zero_ = 0, eps_ = 0;
  int e_lo_ = 0, e_hi_ = 0;
  std::vector<double> pool_;
  BoundaryTable boundary_;
};

// Values a block at a time (docs/rng.md 4.3, 4.4): the streams of a block first, in loops the
// compiler vectorises (64-bit multiplies in mix64), then, for the regular distribution, the
// arithmetic over the block the same way; other distributions take each element from its draws.
// Every operation is the scalar one's, in the same order, on the same integers and doubles, so the
// values are bit-identical to the spec's formulas (tests/unit/rng/fill_float_test.cpp checks the
// regular blocks against them, tests/vectors every distribution and pattern).
constexpr std::size_t kBlock = 256;

struct RegularBlock {
  RegularMode mode;
  std::uint64_t a, b, c, d;  // stream seeds
  double lo, hi, mid, half;
};

[[gnu::always_inline]] inline void streams_body(std::uint64_t seed, std::uint64_t first, std::size_t n,
                                                std::uint64_t* out) {
  for (std::size_t k = 0; k < n; ++k) out[k] = mix64(seed + (first + k + 1) * kGoldenGamma);
}

[[gnu::always_inline]] inline void regular_body(const RegularBlock& r, std::uint64_t first, std::size_t n,
                                                double* out) {
  alignas(64) std::uint64_t s0[kBlock];
  alignas(64) std::uint64_t s1[kBlock];
  if (r.mode == RegularMode::uniform) {
    streams_body(r.c, first, n, s0);
    for (std::size_t k = 0; k < n; ++k) {
      const double u = static_cast<double>(s0[k] >> 11) * 0x1p-53;
      out[k] = r.lo * (1.0 - u) + r.hi * u;
    }
    return;
  }
  streams_body(r.a, first, n, s0);
  streams_body(r.b, first, n, s1);
  for (std::size_t k = 0; k < n; ++k) {
    const std::uint64_t total = (s0[k] >> 32) + (s0[k] & 0xFFFFFFFFu) + (s1[k] >> 32) + (s1[k] & 0xFFFFFFFFu);
    out[k] = static_cast<double>(total) * 0x1p-33 - 1.0;
  }
  if (r.mode == RegularMode::bell) {
    for (std::size_t k = 0; k < n; ++k) out[k] = r.mid + out[k] * r.half;
    return;
  }
  streams_body(r.d, first, n, s0);
  for (std::size_t k = 0; k < n; ++k) {
    // 2^mulhi(d, 9), built from its exponent bits: the same double as the scalar path's table.
    out[k] = out[k] * std::bit_cast<double>((1023 + mulhi_small(s0[k], 9)) << 52);
  }
}

// The boundary distribution over a block: element k takes category mulhi(a[k], categories), then
// the value mulhi(b[k], its size) in it (FloatFill::value's boundary case, with flat tables).
[[gnu::always_inline]] inline void boundary_body(const BoundaryTable& t, const std::uint64_t* a,
                                                 const std::uint64_t* b, std::size_t n,
                                                 double* __restrict out) {
  // __restrict: `out` is the block's own array, never the tables, so the loop vectorises.
  const double* __restrict values = t.values.data();
  const std::uint64_t* __restrict offsets = t.offsets.data();
  const std::uint64_t* __restrict sizes = t.sizes.data();
  const std::uint64_t categories = t.sizes.size();
  for (std::size_t k = 0; k < n; ++k) {
    const std::uint64_t cat = mulhi_small(a[k], categories);
    out[k] = values[offsets[cat] + mulhi_small(b[k], sizes[cat])];
  }
}

// clamp_to, then the dtype's rounding for the two types the hardware rounds (float32, float64).
template <class T>
[[gnu::always_inline]] inline void clamp_store_body(const double* x, std::size_t n, double lo, double hi,
                                                    T* out) {
  for (std::size_t k = 0; k < n; ++k) {
    const double v = x[k] < lo ? lo : (x[k] > hi ? hi : x[k]);
    out[k] = static_cast<T>(v);
  }
}

#define GPUEMU_FILL_KERNELS(suffix, attributes)                                                              \
  attributes void streams_##suffix(std::uint64_t seed, std::uint64_t first, std::size_t n,                   \
                                   std::uint64_t* out) {                                                     \
    streams_body(seed, first, n, out);                                                                       \
  }                                                                                                          \
  attributes void regular_##suffix(const RegularBlock& r, std::uint64_t first, std::size_t n, double* out) { \
    regular_body(r, first, n, out);                                                                          \
  }                                                                                                          \
  attributes void adversarial_##suffix(const FloatFill& fill, std::uint64_t first, std::size_t n,            \
                                       const std::uint64_t* const* draws, double* out) {                     \
    fill.adversarial_block(first, n, draws[0], draws[1], draws[2], draws[3], out);                           \
  }                                                                                                          \
  attributes void boundary_##suffix(const BoundaryTable& t, const std::uint64_t* a, const std::uint64_t* b,  \
                                    std::size_t n, double* out) {                                            \
    boundary_body(t, a, b, n, out);                                                                          \
  }                                                                                                          \
  attributes void clamp_f32_##suffix(const double* x, std::size_t n, double lo, double hi, float* out) {     \
    clamp_store_body(x, n, lo, hi, out);                                                                     \
  }                                                                                                          \
  attributes void clamp_f64_##suffix(const double* x, std::size_t n, double lo, double hi, double* out) {    \
    clamp_store_body(x, n, lo, hi, out);                                                                     \
  }

GPUEMU_FILL_KERNELS(base, )
#if defined(__x86_64__) && defined(__GNUC__)
GPUEMU_FILL_KERNELS(avx2, [[gnu::target("avx2")]])
GPUEMU_FILL_KERNELS(avx512, [[gnu::target("avx2,avx512f,avx512vl,avx512dq")]])
#endif
#undef GPUEMU_FILL_KERNELS

// The block kernels compiled for one instruction set.
struct FillKernels {
  void (*streams)(std::uint64_t, std::uint64_t, std::size_t, std::uint64_t*) = streams_base;
  void (*regular)(const RegularBlock&, std::uint64_t, std::size_t, double*) = regular_base;
  void (*boundary)(const BoundaryTable&, const std::uint64_t*, const std::uint64_t*, std::size_t,
                   double*) = boundary_base;
  void (*adversarial)(const FloatFill&, std::uint64_t, std::size_t, const std::uint64_t* const*,
                      double*) = adversarial_base;
  void (*clamp_f32)(const double*, std::size_t, double, double, float*) = clamp_f32_base;
  void (*clamp_f64)(const double*, std::size_t, double, double, double*) = clamp_f64_base;
};

// The kernels of `isa`, or of the best set below it that this CPU runs.
FillKernels fill_kernels(util::Isa isa) {
  [[maybe_unused]] const util::Isa usable = std::min(isa, util::best_isa());  // only x86 has other kernels
#if defined(__x86_64__) && defined(__GNUC__)
  if (usable == util::Isa::avx512)
    return {streams_avx512,     regular_avx512,   boundary_avx512,
            adversarial_avx512, clamp_f32_avx512, clamp_f64_avx512};
  if (usable == util::Isa::avx2)
    return {streams_avx2, regular_avx2, boundary_avx2, adversarial_avx2, clamp_f32_avx2, clamp_f64_avx2};
#endif
  return {};
}

// Which of the streams a, b, c, d (bits 0-3) FloatFill::value reads for a boundary or adversarial
// plan, so a block computes only those (near_cancellation reads its draws at the pair index, alone).
std::bitset<4> streams_read(const ValuePlan& plan, bool any) {
  const unsigned d = any ? 8u : 0u;  // base() reads d only for the domain "any"
  if (plan.distribution == ValueDistribution::boundary) return 0b0011;
  switch (plan.float_pattern) {
    case FloatPattern::dynamic_range:
      return 0b1110;
    case FloatPattern::huge_logits:
      return 0b1111;
    case FloatPattern::near_cancellation:
    case FloatPattern::one_hot:
      return 0;
    case FloatPattern::ties:
      return 0b0001;
    case FloatPattern::zero_rows:
    case FloatPattern::alternating_signs:
      return 0b0011 | d;
  }
  return 0b1111;
}

template <class T>
void store(std::byte* out, std::uint64_t i, T v) {
  std::memcpy(out + i * sizeof(T), &v, sizeof(T));
}

}  // namespace

void fill_float(const ValuePlan& plan, std::uint64_t seed, DType dtype, const ResolvedDomain& domain,
                std::uint64_t numel, std::uint64_t row_len, std::byte* out) {
  fill_float(plan, seed, dtype, domain, numel, row_len, out, util::best_isa());
}

void fill_float(const ValuePlan& plan, std::uint64_t seed, DType dtype, const ResolvedDomain& domain,
                std::uint64_t numel, std::uint64_t row_len, std::byte* out, util::Isa isa) {
  static_assert(std::endian::native == std::endian::little, "tensor storage is little-endian");
  const FloatFill fill(plan, seed, dtype, domain, row_len);
  const FillKernels kernels = fill_kernels(isa);
  const bool regular = plan.distribution == ValueDistribution::regular;
  const RegularBlock block{regular ? plan.mode : RegularMode::uniform,
                           derive_seed(seed, "values/a"),
                           derive_seed(seed, "values/b"),
                           derive_seed(seed, "values/c"),
                           derive_seed(seed, "values/d"),
                           domain.lo,
                           domain.hi,
                           0.5 * domain.lo + 0.5 * domain.hi,
                           0.5 * domain.hi - 0.5 * domain.lo};
  alignas(64) double values[kBlock];
  alignas(64) std::uint64_t draws[4][kBlock] = {};  // a stream the plan does not read stays 0
  const std::bitset<4> used = streams_read(plan, domain.any);
  const std::array<std::uint64_t, 4> stream_seeds = {block.a, block.b, block.c, block.d};
  for (std::uint64_t first = 0; first < numel; first += kBlock) {
    const auto n = static_cast<std::size_t>(std::min<std::uint64_t>(kBlock, numel - first));
    if (regular) {
      kernels.regular(block, first, n, values);
    } else {
      // The other distributions: the block's draws at once, then each element from its draws.
      for (int k = 0; k < 4; ++k) {
        if (used.test(k)) kernels.streams(stream_seeds[k], first, n, draws[k]);
      }
      if (plan.distribution == ValueDistribution::boundary) {
        kernels.boundary(fill.boundary(), draws[0], draws[1], n, values);
      } else {
        const std::uint64_t* const streams[4] = {draws[0], draws[1], draws[2], draws[3]};
        kernels.adversarial(fill, first, n, streams, values);
      }
    }
    switch (dtype) {
      case DType::float16:
        for (std::size_t k = 0; k < n; ++k)
          store(out, first + k, tensor::double_to_f16(clamp_to(values[k], domain.lo, domain.hi)));
        break;
      case DType::bfloat16:
        for (std::size_t k = 0; k < n; ++k)
          store(out, first + k, tensor::double_to_bf16(clamp_to(values[k], domain.lo, domain.hi)));
        break;
      case DType::float32: {
        alignas(64) float narrow[kBlock];
        kernels.clamp_f32(values, n, domain.lo, domain.hi, narrow);
        std::memcpy(out + first * sizeof(float), narrow, n * sizeof(float));
        break;
      }
      default: {
        alignas(64) double wide[kBlock];
        kernels.clamp_f64(values, n, domain.lo, domain.hi, wide);
        std::memcpy(out + first * sizeof(double), wide, n * sizeof(double));
        break;
      }
    }
  }
}

}  // namespace gpuemu::rng
