// Streams output/reference pairs through the per-element pass rule and non-finite rules of
// DESIGN section 4, gathering ErrorStats without materialising whole tensors as doubles.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "check/tolerance.hpp"
#include "check/verdict.hpp"
#include "tensor/tensor.hpp"

namespace gpuemu::check {

namespace kernels {
struct Screen;  // element_kernels.hpp: the running statistics a chunk is screened against
}

struct ElementRules {
  ToleranceSpec tolerance;
  bool check_nan = true;
  bool check_inf = true;
};

// Accumulates statistics over every compared output of one case.
//
// Definitions (the numbers reports print):
// - max_abs, max_rel, max_ulp and tolerance_used range over pairs where both values are finite;
//   matching NaN/Inf pairs do not contribute. check_nan / check_inf off: an element whose reference
//   is NaN / ±Inf is not compared (any output passes there). A NaN/Inf output against a finite
//   reference fails (unexpected_nonfinite) under every setting.
// - rel = |out-ref| / |ref|; when ref is 0 it is 0 if out is 0 too, else +inf.
// - ratio = |out-ref| / (atol + rtol*|ref|); when the bound is 0 it is 0 for equal values, else
//   +inf. tolerance_used is the largest ratio; a failing non-finite element makes it +inf, so
//   tolerance_used > 1 exactly when some element failed.
// - ULPs are counted in the output's dtype (integers and bool: the absolute difference).
// - worst holds the five largest ratios above 0, worst first, earliest first among equals;
//   non-finite failures rank as +inf with abs_err = rel_err = +inf.
// Which copy of the chunk kernels runs: the fastest the CPU supports (AVX-512, AVX2), at most the
// AVX2 one, or the baseline x86-64 one. Tests run each; the results are identical.
enum class KernelChoice { fastest, avx2, baseline };

class StatsAccumulator {
 public:
  explicit StatsAccumulator(ElementRules rules, KernelChoice kernels = KernelChoice::fastest)
      : rules_(rules), kernels_(kernels) {}

  // Compares one output; both tensors have the same shape and pass validate_view.
  void add_output(const std::string& name, const tensor::Tensor& actual, const tensor::Tensor& expected);
  ErrorStats finish() const;

  std::int64_t nonfinite_mismatches() const { return nonfinite_; }
  std::int64_t unexpected_nonfinite() const { return unexpected_; }
  std::int64_t finite_mismatches() const { return finite_failures_; }
  // The first element (in output-name, then row-major order) of each non-finite failure kind.
  const std::optional<ElementDiff>& first_nonfinite() const { return first_nonfinite_; }
  const std::optional<ElementDiff>& first_unexpected() const { return first_unexpected_; }

  static constexpr std::size_t kChunk = 1024;
  static constexpr std::size_t kWorst = 5;

 private:
  struct Chunk;
  // One entry of the worst list, kept cheap to move: its ElementDiff is built in finish().
  struct Candidate {
    double ratio = 0;
    std::size_t output = 0;  // index into outputs_
    std::int64_t linear = 0;
    double actual = 0, expected = 0, abs_err = 0, rel_err = 0;
  };
  template <class Kind>
  void scan(const Kind& kind, std::size_t output, const tensor::Tensor& actual,
            const tensor::Tensor& expected);
  // The pieces of a chunk (bit p: `piece` elements from p * piece) reduced in order; returns their
  // failures. Sources is element_stats.cpp's view of one chunk.
  template <class Kind, class Sources>
  std::int64_t reduce_pieces(const Kind& kind, const Sources& chunk, std::uint64_t pieces, std::size_t piece);
  // One chunk through the AVX-512 pre-check and wide screen; false when it holds NaN/Inf and must
  // take the precise pass instead.
  template <class Kind, class Sources, class WideState>
  bool wide_chunk(const Kind& kind, const Sources& chunk, const kernels::Screen& screen, WideState& state);
  void precise_chunk(const Chunk& chunk);
  void offer_worst(const Candidate& candidate);
  double worst_threshold() const { return worst_count_ < kWorst ? 0.0 : worst_[kWorst - 1].ratio; }
  ElementDiff make_diff(const Candidate& c) const;

  ElementRules rules_;
  KernelChoice kernels_;
  double max_abs_ = 0;
  double max_rel_ = 0;
  double max_ulp_ = 0;
  double max_ratio_ = 0;
  std::int64_t elements_ = 0;
  std::int64_t nonfinite_ = 0;
  std::int64_t unexpected_ = 0;
  std::int64_t finite_failures_ = 0;
  std::optional<ElementDiff> first_nonfinite_;
  std::optional<ElementDiff> first_unexpected_;
  std::vector<std::pair<std::string, tensor::Shape>> outputs_;  // name and shape of each output added
  std::array<Candidate, kWorst> worst_{};
  std::size_t worst_count_ = 0;
};

}  // namespace gpuemu::check
