// Names of failure kinds as they appear in result.json, SQLite and messages (see verdict.hpp).
// The spelling is the enum's, so a stored name always parses back to the same kind.
#include "check/verdict.hpp"

#include <array>
#include <utility>

namespace gpuemu::check {
namespace {

constexpr std::array<std::pair<FailureKind, std::string_view>, 14> kFailureKindNames{{
    {FailureKind::none, "none"},
    {FailureKind::mismatch, "mismatch"},
    {FailureKind::nonfinite_mismatch, "nonfinite_mismatch"},
    {FailureKind::unexpected_nonfinite, "unexpected_nonfinite"},
    {FailureKind::shape_mismatch, "shape_mismatch"},
    {FailureKind::dtype_mismatch, "dtype_mismatch"},
    {FailureKind::invariant_violation, "invariant_violation"},
    {FailureKind::op_error, "op_error"},
    {FailureKind::reference_error, "reference_error"},
    {FailureKind::missing_output, "missing_output"},
    {FailureKind::input_mutated, "input_mutated"},
    {FailureKind::output_aliased, "output_aliased"},
    {FailureKind::out_of_bounds, "out_of_bounds"},
    {FailureKind::interpreter_unsupported, "interpreter_unsupported"},
}};

}  // namespace

std::string_view failure_kind_name(FailureKind kind) {
  for (const auto& [k, name] : kFailureKindNames) {
    if (k == kind) {
      return name;
    }
  }
  return "unknown";
}

std::optional<FailureKind> parse_failure_kind(std::string_view name) {
  for (const auto& [k, n] : kFailureKindNames) {
    if (n == name) {
      return k;
    }
  }
  return std::nullopt;
}

}  // namespace gpuemu::check
