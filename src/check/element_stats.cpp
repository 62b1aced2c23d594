// The comparison's driver: streams each output through the chunk kernels of element_kernels.hpp
// (in place for contiguous float storage), and keeps the precise scalar pass for chunks with NaN/Inf.
#include "check/element_stats.hpp"

#include <bit>
#include <cfloat>
#include <cmath>
#include <cstring>
#include <limits>
#include <span>
#include <type_traits>

#include "check/pass_rule.hpp"
#include "check/simd/element_kernels.hpp"
#include "check/simd/kernel_set.hpp"
#include "check/simd/ulp16.hpp"

namespace gpuemu::check {

using tensor::DType;

struct StatsAccumulator::Chunk {
  std::size_t output;  // index into outputs_
  DType out_dtype;
  std::int64_t first;  // row-major index of element 0 of this chunk
  std::size_t size;
  const double* actual;
  const double* expected;
};

namespace {

// The AVX-512 pre-check takes its counting form after a chunk with this many failures: a sub-block
// holding a failure stays open in the plain form (then the wide screen reads it), and the counting
// form costs more per element (docs/performance.md, "Measurements behind the kernels").
constexpr std::int64_t kCountingAfter = 2;

using kernels::ChunkMaxima;
using kernels::Decoded;
using kernels::Kernels;
using kernels::Raw;
using kernels::RawBF16;
using kernels::RawF16;
using kernels::Screen;
using kernels::ScreenResult;
using kernels::UlpMode;

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

double ulp_any(DType dtype, double out, double ref, double abs_diff) {
  switch (ulp_mode(dtype)) {
    // The inline forms the kernels use: equal to tensor::ulp_distance_* for the finite values this
    // is called with (stats_test's oracle uses the tensor module's definitions).
    case UlpMode::f64:
      return static_cast<double>(kernels::ulp_f64(out, ref));
    case UlpMode::f32:
      return static_cast<double>(kernels::ulp_f32(out, ref));
    case UlpMode::f16:
      return ulp_f16_inline(out, ref);
    case UlpMode::bf16:
      return ulp_bf16_inline(out, ref);
    case UlpMode::absolute:
    case UlpMode::prescreened:
      return abs_diff;
  }
  return abs_diff;
}

// A source for elements [first, ...) of `t`: its raw storage in place, or the decoded chunk `buf`.
template <class Source>
Source source_at(const tensor::Tensor& t, std::int64_t first, const double* buf) {
  if constexpr (std::is_same_v<Source, Decoded>) {
    return Decoded{buf};
  } else {
    return Source{t.data.data() + static_cast<std::size_t>(first) * tensor::dtype_size(t.dtype)};
  }
}

bool readable_in_place(const tensor::Tensor& t) {
  return t.is_contiguous() && (t.dtype == DType::float32 || t.dtype == DType::float64 ||
                               t.dtype == DType::float16 || t.dtype == DType::bfloat16);
}

// One chunk's element sources, where its elements sit in their output, and its ratios' buffer.
template <class Out, class Ref>
struct ChunkSources {
  Out out;
  Ref ref;
  std::size_t output;  // index into outputs_
  std::int64_t first;  // row-major index of element 0
  std::size_t size;
  double* ratios;
};

// What the wide path (AVX-512, or AVX2 with FMA and F16C) keeps from chunk to chunk: the screens of the last
// statistics (they change only when a flagged piece raises one) and the last chunk's failures.
struct WideState {
  Screen screen{-1, -1, -1, -1, -1, -1};  // matches no real Screen
  kernels::NarrowScreen narrow{};
  kernels::WideScreen wide{};
  std::int64_t previous_failures = 0;
};

// The blocks of a chunk of `size` elements (bit b: block b).
std::uint32_t all_blocks(std::size_t size) {
  const std::size_t blocks = (size + kernels::kBlock - 1) / kernels::kBlock;
  return blocks == 32 ? ~std::uint32_t{0} : (std::uint32_t{1} << blocks) - 1;
}

constexpr std::size_t kSubBlocks = kernels::kBlock / kernels::kSubBlock;  // per block
static_assert(kernels::kBlock % kernels::kSubBlock == 0);
static_assert(StatsAccumulator::kChunk <= 32 * kernels::kSubBlock,
              "a chunk's sub-blocks must fit one uint32_t");

// Flags of whole blocks (bit b: block b) as flags of their sub-blocks that hold elements.
std::uint32_t sub_blocks_of(std::uint32_t blocks, std::size_t size) {
  std::uint32_t subs = 0;
  for (; blocks != 0; blocks &= blocks - 1) {
    subs |= ((std::uint32_t{1} << kSubBlocks) - 1) << (std::countr_zero(blocks) * kSubBlocks);
  }
  const std::size_t present = (size + kernels::kSubBlock - 1) / kernels::kSubBlock;
  return present == 32 ? subs : subs & ((std::uint32_t{1} << present) - 1);
}

// Step 1 of a chunk without the wide screen: the pre-check's open blocks (bit b: block b; all of
// them when there is no pre-check, or its thresholds are not floats), adding the failures of the
// blocks a counting pre-check cleared to *cleared_failures. A block holding a failure does not
// clear, so a chunk after one with failures in as many elements as half its blocks takes the
// pre-check that also clears elements that surely fail, or none: a failing kernel's output would
// pay for the plain one for nothing (docs/performance.md, "Measurements behind the kernels").
template <class Kind, class Sources>
std::uint32_t precheck_open_blocks(const Kind& kind, const Sources& chunk, const Screen& screen,
                                   std::int64_t previous_failures, std::int64_t* cleared_failures) {
  const std::uint32_t all = all_blocks(chunk.size);
  if (kind.precheck == nullptr) return all;
  const kernels::FloatScreen fs = kernels::float_screen(screen);
  if (!fs.usable) return all;
  const bool failing = 2 * previous_failures >= static_cast<std::int64_t>(std::popcount(all));
  if (!failing) return kind.precheck(chunk.out, chunk.ref, chunk.size, fs);
  if (kind.counting_precheck != nullptr) {
    return kind.counting_precheck(chunk.out, chunk.ref, chunk.size, fs, cleared_failures);
  }
  return all;
}

// Screens elements [begin, begin + count) of a chunk: float16 outputs through the prepass where
// there is one (it decodes them into `decoded` and runs the ULP test), everything else directly.
// Flags come back per block of the range.
template <class Kind, class Sources>
ScreenResult screen_range(const Kind& kind, const Sources& chunk, const Screen& screen, std::size_t begin,
                          std::size_t count, float* decoded) {
  if constexpr (Kind::kF16Prepass) {
    if (kind.prepass != nullptr) {
      const auto max_ulp16 = static_cast<std::int32_t>(std::min(screen.max_ulp, 1e9));
      float* range = decoded + begin;
      const std::uint32_t ulp_blocks =
          kind.prepass(chunk.out.shifted(begin).p, chunk.ref.shifted(begin), count, max_ulp16, range);
      ScreenResult r = kind.screen_decoded(Raw<float>{reinterpret_cast<const std::byte*>(range)},
                                           chunk.ref.shifted(begin), count, screen);
      r.flagged_blocks |= ulp_blocks;
      return r;
    }
  }
  return kind.screen(chunk.out.shifted(begin), chunk.ref.shifted(begin), count, screen);
}

// Step 2: the blocks of `open` (bit b: block b) screened; flags come back per sub-block. Cleared
// blocks add nothing (no failure, flag or NaN/Inf). When all are open the chunk is screened in
// one call, its flags spread to every sub-block of a flagged block.
template <class Kind, class Sources>
ScreenResult screen_open_blocks(const Kind& kind, const Sources& chunk, const Screen& screen,
                                std::uint32_t open, float* decoded) {
  if (open == all_blocks(chunk.size)) {
    ScreenResult r = screen_range(kind, chunk, screen, 0, chunk.size, decoded);
    r.flagged_blocks = sub_blocks_of(r.flagged_blocks, chunk.size);
    return r;
  }
  ScreenResult r;
  for (std::uint32_t left = open; left != 0; left &= left - 1) {
    const auto b = static_cast<std::size_t>(std::countr_zero(left));
    for (std::size_t sub = b * kSubBlocks; sub < (b + 1) * kSubBlocks; ++sub) {
      const std::size_t begin = sub * kernels::kSubBlock;
      if (begin >= chunk.size) break;
      const ScreenResult one =
          screen_range(kind, chunk, screen, begin, std::min(kernels::kSubBlock, chunk.size - begin), decoded);
      r.flagged_blocks |= one.flagged_blocks != 0 ? std::uint32_t{1} << sub : 0;
      r.nonfinite |= one.nonfinite;
      r.failures += one.failures;
    }
  }
  return r;
}

// A chunk through the pre-check (step 1) and the screen of what it left open (step 2): every
// failure counted, flags per sub-block, and whether the chunk holds NaN/Inf.
template <class Kind, class Sources>
ScreenResult precheck_and_screen(const Kind& kind, const Sources& chunk, const Screen& screen,
                                 std::int64_t previous_failures, float* decoded) {
  std::int64_t cleared_failures = 0;
  const std::uint32_t open = precheck_open_blocks(kind, chunk, screen, previous_failures, &cleared_failures);
  ScreenResult screened = screen_open_blocks(kind, chunk, screen, open, decoded);
  screened.failures += cleared_failures;
  return screened;
}

bool same_screen(const Screen& a, const Screen& b) {
  return a.atol == b.atol && a.rtol == b.rtol && a.worst_threshold == b.worst_threshold &&
         a.max_abs == b.max_abs && a.max_rel == b.max_rel && a.max_ulp == b.max_ulp;
}

}  // namespace

void StatsAccumulator::add_output(const std::string& name, const tensor::Tensor& actual,
                                  const tensor::Tensor& expected) {
  outputs_.emplace_back(name, actual.shape);
  const std::size_t output = outputs_.size() - 1;
  elements_ += actual.numel();
  const bool ref_raw = readable_in_place(expected) && tensor::dtype_size(expected.dtype) >= 4;
  if (readable_in_place(actual) && ref_raw) {
    // Contiguous float outputs against contiguous float32/float64 references: read in place.
    const auto with_ref = [&]<UlpMode M, class Out>() {
      if (expected.dtype == DType::float32) {
        scan(Kernels<M, Out, Raw<float>>::select(kernels_), output, actual, expected);
      } else {
        scan(Kernels<M, Out, Raw<double>>::select(kernels_), output, actual, expected);
      }
    };
    switch (actual.dtype) {
      case DType::float32:
        return with_ref.template operator()<UlpMode::f32, Raw<float>>();
      case DType::float64:
        return with_ref.template operator()<UlpMode::f64, Raw<double>>();
      case DType::float16:
        return with_ref.template operator()<UlpMode::f16, RawF16>();
      default:
        return with_ref.template operator()<UlpMode::bf16, RawBF16>();
    }
  }
  switch (ulp_mode(actual.dtype)) {
    case UlpMode::f64:
      return scan(Kernels<UlpMode::f64, Decoded, Decoded>::select(kernels_), output, actual, expected);
    case UlpMode::f32:
      return scan(Kernels<UlpMode::f32, Decoded, Decoded>::select(kernels_), output, actual, expected);
    case UlpMode::f16:
      return scan(Kernels<UlpMode::f16, Decoded, Decoded>::select(kernels_), output, actual, expected);
    case UlpMode::bf16:
      return scan(Kernels<UlpMode::bf16, Decoded, Decoded>::select(kernels_), output, actual, expected);
    case UlpMode::absolute:
    case UlpMode::prescreened:  // ulp_mode never returns it
      return scan(Kernels<UlpMode::absolute, Decoded, Decoded>::select(kernels_), output, actual, expected);
  }
}

// Per chunk: the screen counts failures and flags blocks with elements that could change anything
// else. A chunk with NaN/Inf goes through the precise pass, the single source of truth. In a finite
// chunk, each flagged block has its order-independent maxima reduced by a vectorised loop; only
// elements whose ratio beats the worst list's threshold take the ordered scalar path into that list.
template <class Kind>
void StatsAccumulator::scan(const Kind& kind, std::size_t output, const tensor::Tensor& actual,
                            const tensor::Tensor& expected) {
  using Out = typename Kind::OutSource;
  using Ref = typename Kind::RefSource;
  constexpr bool kDecoded = std::is_same_v<Out, Decoded>;
  std::array<double, kChunk> out_buf;
  std::array<double, kChunk> ref_buf;
  std::array<double, kChunk> ratios;
  std::array<float, kChunk> out_f32;  // float16 outputs decoded by the prepass
  const std::int64_t n = actual.numel();
  std::int64_t previous_failures = 0;  // in the chunk before (0 after one with NaN/Inf)
  WideState wide_state;
  for (std::int64_t first = 0; first < n; first += static_cast<std::int64_t>(kChunk)) {
    const auto size = static_cast<std::size_t>(std::min<std::int64_t>(kChunk, n - first));
    const auto decode = [&] {
      actual.decode_range(first, std::span<double>(out_buf.data(), size));
      expected.decode_range(first, std::span<double>(ref_buf.data(), size));
    };
    const auto precise = [&] {
      precise_chunk(Chunk{output, actual.dtype, first, size, out_buf.data(), ref_buf.data()});
    };
    if constexpr (kDecoded) decode();
    const Out out = source_at<Out>(actual, first, out_buf.data());
    const Ref ref = source_at<Ref>(expected, first, ref_buf.data());
    if constexpr (std::is_same_v<Out, Ref> && !kDecoded) {
      // Identical storage (same dtype, same bits) changes no statistic: every pair is equal, and a
      // NaN or Inf is matched by the same NaN or Inf. memcmp stops at the first difference, so
      // this costs next to nothing when the outputs differ.
      if (std::memcmp(out.p, ref.p, size * tensor::dtype_size(actual.dtype)) == 0) continue;
    }
    const Screen screen{
        rules_.tolerance.atol, rules_.tolerance.rtol, worst_threshold(), max_abs_, max_rel_, max_ulp_};
    const ChunkSources<Out, Ref> chunk{out, ref, output, first, size, ratios.data()};
    if constexpr (Kind::kWide) {
      if (kind.wide_flag != nullptr) {
        if (!wide_chunk(kind, chunk, screen, wide_state)) {
          decode();
          precise();
        }
        continue;
      }
    }
    const ScreenResult screened = precheck_and_screen(kind, chunk, screen, previous_failures, out_f32.data());
    previous_failures = 0;
    if (screened.nonfinite) {
      if constexpr (!kDecoded) decode();
      precise();
      continue;
    }
    finite_failures_ += screened.failures;
    previous_failures = screened.failures;
    reduce_pieces(kind, chunk, screened.flagged_blocks,
                  kernels::kSubBlock);  // the screen counted every failure
  }
}

template <class Kind, class Sources>
std::int64_t StatsAccumulator::reduce_pieces(const Kind& kind, const Sources& chunk, std::uint64_t pieces,
                                             std::size_t piece) {
  const double atol = rules_.tolerance.atol;
  const double rtol = rules_.tolerance.rtol;
  std::int64_t failures = 0;
  for (; pieces != 0; pieces &= pieces - 1) {  // in order, so the worst list sees elements in order
    const std::size_t begin = static_cast<std::size_t>(std::countr_zero(pieces)) * piece;
    if (begin >= chunk.size) break;
    const std::size_t count = std::min(piece, chunk.size - begin);
    const auto out = chunk.out.shifted(begin);
    const auto ref = chunk.ref.shifted(begin);
    double* ratios = chunk.ratios + begin;
    const kernels::ChunkMaxima m = kind.reduce(out, ref, count, atol, rtol, worst_threshold(), ratios);
    max_abs_ = std::max(max_abs_, m.max_abs);
    max_rel_ = std::max(max_rel_, m.max_rel);
    max_ulp_ = std::max(max_ulp_, m.max_ulp);
    max_ratio_ = std::max(max_ratio_, m.max_ratio);
    failures += m.failures;
    if (m.above_threshold == 0) continue;
    for (std::size_t i = 0; i < count; ++i) {
      if (ratios[i] > worst_threshold()) {
        const double x = out(i);
        const double y = ref(i);
        const double d = std::fabs(x - y);
        const double ay = std::fabs(y);
        const double rel = d == 0 ? 0.0 : ay > 0 ? d / ay : INFINITY;
        offer_worst(
            {ratios[i], chunk.output, chunk.first + static_cast<std::int64_t>(begin + i), x, y, d, rel});
      }
    }
  }
  return failures;
}

// The float-lane pre-check clears most sub-blocks once the maxima have settled; the wide screen
// flags, among the rest, every pair with NaN/Inf, so only flagged pieces can hold one. After a
// chunk with failures the pre-check's counting form also clears sub-blocks whose failures are sure,
// and counts them.
template <class Kind, class Sources, class State>
bool StatsAccumulator::wide_chunk(const Kind& kind, const Sources& chunk, const Screen& screen,
                                  State& state) {
  using Out = typename Kind::OutSource;
  if (!same_screen(screen, state.screen)) {
    state.screen = screen;
    state.wide = kernels::wide_screen(screen, kernels::wide_ulp_shift<Out>());
    if constexpr (Kind::kNarrow) {
      state.narrow = kernels::narrow_screen(screen, kernels::narrow_ulp_shift<Out>(),
                                            std::is_same_v<Out, kernels::Raw<float>>);
    }
  }
  const std::size_t subs = (chunk.size + kernels::kSubBlock - 1) / kernels::kSubBlock;
  std::uint32_t open = subs == 32 ? ~std::uint32_t{0} : (std::uint32_t{1} << subs) - 1;
  std::int64_t cleared_failures = 0;
  if constexpr (Kind::kNarrow) {
    if (state.narrow.usable) {
      const bool failing = state.previous_failures >= kCountingAfter;
      open = (failing ? kind.narrow_counting : kind.narrow_plain)(chunk.out, chunk.ref, chunk.size,
                                                                  state.narrow, &cleared_failures);
    }
  }
  const kernels::WideScreen& wide = state.wide;
  const kernels::WideResult r = open == 0 ? kernels::WideResult{}
                                : wide.count_failures
                                    ? kind.wide_count(chunk.out, chunk.ref, chunk.size, wide, open)
                                    : kind.wide_flag(chunk.out, chunk.ref, chunk.size, wide, open);
  if (r.flagged != 0 && kind.nonfinite(chunk.out, chunk.ref, chunk.size, r.flagged)) {
    state.previous_failures = 0;
    return false;
  }
  const std::int64_t reduced_failures = reduce_pieces(kind, chunk, r.flagged, kernels::kPiece);
  const std::int64_t failures = cleared_failures + (wide.count_failures ? r.failures : reduced_failures);
  finite_failures_ += failures;
  state.previous_failures = failures;
  return true;
}

void StatsAccumulator::precise_chunk(const Chunk& chunk) {
  const double atol = rules_.tolerance.atol;
  const double rtol = rules_.tolerance.rtol;
  for (std::size_t i = 0; i < chunk.size; ++i) {
    const double x = chunk.actual[i];
    const double y = chunk.expected[i];
    const std::int64_t linear = chunk.first + static_cast<std::int64_t>(i);
    const Candidate failed{INFINITY, chunk.output, linear, x, y, INFINITY, INFINITY};
    if (!std::isfinite(y)) {
      // The reference's NaN/Inf must be matched exactly: NaN by NaN, +inf by +inf. check_nan /
      // check_inf off relax only this agreement: such an element is then not compared.
      if (std::isnan(y) ? !rules_.check_nan : !rules_.check_inf) continue;
      const bool same = std::isnan(y) ? std::isnan(x) : x == y;
      if (!same) {
        ++nonfinite_;
        if (!first_nonfinite_) first_nonfinite_ = make_diff(failed);
        offer_worst(failed);
      }
      continue;
    }
    if (!std::isfinite(x)) {
      // NaN/Inf where the reference is finite is always wrong, whatever check_nan / check_inf say.
      ++unexpected_;
      if (!first_unexpected_) first_unexpected_ = make_diff(failed);
      offer_worst(failed);
      continue;
    }
    const double d = std::fabs(x - y);
    const double ay = std::fabs(y);
    const double bound = tolerance_bound(y, atol, rtol);  // for the ratio
    const double ratio = d == 0 ? 0.0 : bound > 0 ? d / bound : INFINITY;
    const double rel = d == 0 ? 0.0 : ay > 0 ? d / ay : INFINITY;
    max_abs_ = std::max(max_abs_, d);
    max_rel_ = std::max(max_rel_, rel);
    max_ulp_ = std::max(max_ulp_, ulp_any(chunk.out_dtype, x, y, d));
    max_ratio_ = std::max(max_ratio_, ratio);
    if (!within_tolerance(x, y, atol, rtol)) {
      ++finite_failures_;
    }
    if (ratio > worst_threshold()) offer_worst({ratio, chunk.output, linear, x, y, d, rel});
  }
}

void StatsAccumulator::offer_worst(const Candidate& candidate) {
  if (!(candidate.ratio > worst_threshold())) {
    return;
  }
  std::size_t at = std::min(worst_count_, kWorst - 1);
  while (at > 0 && candidate.ratio > worst_[at - 1].ratio) {  // strict: earlier elements win ties
    worst_[at] = worst_[at - 1];
    --at;
  }
  worst_[at] = candidate;
  worst_count_ = std::min(worst_count_ + 1, kWorst);
}

ElementDiff StatsAccumulator::make_diff(const Candidate& c) const {
  const auto& [name, shape] = outputs_[c.output];
  return ElementDiff{name,     tensor::unravel_index(shape, c.linear), c.actual, c.expected, c.abs_err,
                     c.rel_err};
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
  for (std::size_t k = 0; k < worst_count_; ++k) s.worst.push_back(make_diff(worst_[k]));
  return s;
}

}  // namespace gpuemu::check
