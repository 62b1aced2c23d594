// Invariant names and checks: shape_preserved, non_negative, finite, symmetric, normalized.
// Each check decodes the output once and stops at the first bad element.
#include "check/invariants.hpp"

#include <fmt/format.h>

#include <array>
#include <cmath>

#include "check/pass_rule.hpp"
#include "check/verdict_text.hpp"

namespace gpuemu::check {
namespace {

constexpr std::array<std::string_view, 5> kInvariantNames{"shape_preserved", "non_negative", "finite",
                                                          "symmetric", "normalized"};

std::string violated(Invariant invariant, const std::string& detail) {
  return fmt::format("invariant {} violated: {}", invariant_name(invariant), detail);
}

// Index of a row (all dims but the last) followed by ":" for the whole row: "out[2, :]".
std::string format_row(const std::string& name, const tensor::Shape& shape, std::int64_t row) {
  tensor::Shape outer(shape.begin(), shape.end() - 1);
  std::vector<std::string> parts;
  for (auto i : tensor::unravel_index(outer, row)) parts.push_back(std::to_string(i));
  parts.push_back(":");
  return fmt::format("{}[{}]", name, fmt::join(parts, ", "));
}

std::optional<std::string> check_symmetric(const std::string& name, const tensor::Tensor& out,
                                           const std::vector<double>& v, const ToleranceSpec& tol) {
  const auto& shape = out.shape;
  const std::size_t rank = shape.size();
  if (rank < 2 || shape[rank - 1] != shape[rank - 2]) {
    return violated(Invariant::symmetric,
                    fmt::format("output '{}' has shape {}; symmetric needs the last two "
                                "dimensions equal",
                                name, tensor::shape_to_string(shape)));
  }
  const std::int64_t n = shape[rank - 1];
  const std::int64_t matrices = n == 0 ? 0 : out.numel() / (n * n);
  for (std::int64_t b = 0; b < matrices; ++b) {
    for (std::int64_t i = 0; i < n; ++i) {
      for (std::int64_t j = i + 1; j < n; ++j) {
        const std::int64_t ij = b * n * n + i * n + j;
        const std::int64_t ji = b * n * n + j * n + i;
        const double x = v[static_cast<std::size_t>(ij)];
        const double y = v[static_cast<std::size_t>(ji)];
        bool ok;
        if (!std::isfinite(x) || !std::isfinite(y)) {
          ok = (std::isnan(x) && std::isnan(y)) || x == y;
        } else {
          // The pass rule with the larger of the pair as the reference (|x - y| is the same either way).
          const bool x_larger = std::fabs(x) >= std::fabs(y);
          ok = within_tolerance(x_larger ? y : x, x_larger ? x : y, tol.atol, tol.rtol);
        }
        if (!ok) {
          return violated(
              Invariant::symmetric,
              fmt::format("{} = {} but {} = {} (allowed difference atol + rtol*|x| = {} + {}*|x|)",
                          format_element(name, tensor::unravel_index(shape, ij)), format_value(x, out.dtype),
                          format_element(name, tensor::unravel_index(shape, ji)), format_value(y, out.dtype),
                          format_short(tol.atol), format_short(tol.rtol)));
        }
      }
    }
  }
  return std::nullopt;
}

// A row of n probabilities sums to 1 up to rounding: each element may carry up to atol of
// independent error, which grows like sqrt(n) in the sum, and the sum itself (about 1) may be off
// by rtol relative. So |sum - 1| <= atol*sqrt(n) + rtol. A rank-0 output is one row of one element.
std::optional<std::string> check_normalized(const std::string& name, const tensor::Tensor& out,
                                            const std::vector<double>& v, const ToleranceSpec& tol) {
  const std::int64_t n = out.shape.empty() ? 1 : out.shape.back();
  const std::int64_t rows =
      out.shape.empty() ? 1 : tensor::shape_numel({out.shape.begin(), out.shape.end() - 1});
  const double allowed = tol.atol * std::sqrt(static_cast<double>(n)) + tol.rtol;
  for (std::int64_t r = 0; r < rows; ++r) {
    double sum = 0;
    for (std::int64_t k = 0; k < n; ++k) sum += v[static_cast<std::size_t>(r * n + k)];
    if (!(std::fabs(sum - 1.0) <= allowed)) {
      const std::string where = out.shape.empty() ? name : format_row(name, out.shape, r);
      return violated(Invariant::normalized,
                      fmt::format("{} sums to {}, expected 1 within {} (atol*sqrt({}) + rtol)", where,
                                  fmt::format("{:.6g}", sum), format_short(allowed), n));
    }
  }
  return std::nullopt;
}

}  // namespace

std::string_view invariant_name(Invariant invariant) {
  const auto i = static_cast<std::size_t>(invariant);
  return i < kInvariantNames.size() ? kInvariantNames[i] : "unknown";
}

std::optional<Invariant> parse_invariant(std::string_view name) {
  for (std::size_t i = 0; i < kInvariantNames.size(); ++i) {
    if (kInvariantNames[i] == name) return static_cast<Invariant>(i);
  }
  return std::nullopt;
}

const std::vector<std::string_view>& all_invariant_names() {
  static const std::vector<std::string_view> names(kInvariantNames.begin(), kInvariantNames.end());
  return names;
}

std::optional<std::string> find_invariant_violation(Invariant invariant, const std::string& name,
                                                    const tensor::Tensor& output,
                                                    const tensor::Shape& expected_shape,
                                                    const std::string& expected_shape_source,
                                                    const ToleranceSpec& tolerance) {
  if (invariant == Invariant::shape_preserved) {
    if (output.shape == expected_shape) return std::nullopt;
    return violated(invariant, fmt::format("output '{}' has shape {} but {} has shape {}", name,
                                           tensor::shape_to_string(output.shape), expected_shape_source,
                                           tensor::shape_to_string(expected_shape)));
  }
  const std::vector<double> v = output.to_doubles();
  switch (invariant) {
    case Invariant::non_negative:
    case Invariant::finite:
      for (std::size_t i = 0; i < v.size(); ++i) {
        const bool ok = invariant == Invariant::finite ? std::isfinite(v[i]) : v[i] >= 0;  // NaN is not >= 0
        if (!ok) {
          return violated(invariant,
                          fmt::format("{} = {}",
                                      format_element(name, tensor::unravel_index(
                                                               output.shape, static_cast<std::int64_t>(i))),
                                      format_value(v[i], output.dtype)));
        }
      }
      return std::nullopt;
    case Invariant::symmetric:
      return check_symmetric(name, output, v, tolerance);
    case Invariant::normalized:
      return check_normalized(name, output, v, tolerance);
    case Invariant::shape_preserved:
      break;
  }
  return std::nullopt;
}

}  // namespace gpuemu::check
