// The table of failure kinds (failure_kinds.hpp): one row per kind of docs/result-json.md and per
// report-only kind, in the order SARIF publishes them as rules. To add a kind see CONTRIBUTING.md.
#include "check/failure_kinds.hpp"

#include <array>
#include <cstdlib>

namespace gpuemu::check {
namespace {

constexpr std::array kRows{
    FailureKindInfo{FailureKind::mismatch, "mismatch", "GPUEMU-MISMATCH", "output outside tolerance",
                    "Some output elements differ from the reference by more than atol + rtol * |ref|. "
                    "Replay the seed, look at the worst elements, and fix the kernel or, if the error "
                    "is expected, widen the op's tolerance.",
                    Tier::numeric, true},
    FailureKindInfo{FailureKind::nonfinite_mismatch, "nonfinite_mismatch", "GPUEMU-NONFINITE-MISMATCH",
                    "NaN/Inf differ from reference",
                    "NaN or infinity positions or signs differ from the reference's (NaN must meet NaN, "
                    "+inf must meet +inf). Look for overflow, a missing max-subtraction or 0/0.",
                    Tier::wrong_result, true},
    FailureKindInfo{FailureKind::unexpected_nonfinite, "unexpected_nonfinite", "GPUEMU-UNEXPECTED-NONFINITE",
                    "unexpected NaN/Inf",
                    "The output holds NaN or infinity where the reference is finite and the op checks "
                    "for them (check_nan / check_inf).",
                    Tier::wrong_result, true},
    FailureKindInfo{FailureKind::shape_mismatch, "shape_mismatch", "GPUEMU-SHAPE-MISMATCH",
                    "wrong output shape", "An output's shape differs from the reference's.",
                    Tier::wrong_result, false},
    FailureKindInfo{FailureKind::dtype_mismatch, "dtype_mismatch", "GPUEMU-DTYPE-MISMATCH",
                    "wrong output dtype", "An output's dtype differs from the one the op declares.",
                    Tier::wrong_result, false},
    FailureKindInfo{FailureKind::invariant_violation, "invariant_violation", "GPUEMU-INVARIANT-VIOLATION",
                    "invariant violated",
                    "The output breaks an invariant the op declares (shape_preserved, non_negative, "
                    "finite, symmetric, normalized).",
                    Tier::numeric, true},
    FailureKindInfo{FailureKind::op_error, "op_error", "GPUEMU-OP-ERROR", "op crashed or timed out",
                    "The op under test exited non-zero, timed out or answered something unreadable; its "
                    "stderr is in the report.",
                    Tier::wrong_result, false},
    FailureKindInfo{FailureKind::reference_error, "reference_error", "GPUEMU-REFERENCE-ERROR",
                    "reference crashed or timed out",
                    "The reference implementation failed on this case, so nothing was compared; fix the "
                    "reference script or its declared input domain.",
                    Tier::setup, false},
    FailureKindInfo{FailureKind::missing_output, "missing_output", "GPUEMU-MISSING-OUTPUT", "output missing",
                    "An output the reference produces is absent from the op's answer.", Tier::wrong_result,
                    false},
    FailureKindInfo{FailureKind::input_mutated, "input_mutated", "GPUEMU-INPUT-MUTATED",
                    "op wrote into its inputs", "The op modified an input buffer it should only read.",
                    Tier::wrong_result, false},
    FailureKindInfo{FailureKind::output_aliased, "output_aliased", "GPUEMU-OUTPUT-ALIASED",
                    "output aliases an input", "An output buffer overlaps an input buffer.",
                    Tier::wrong_result, false},
    FailureKindInfo{FailureKind::regression, "regression", "GPUEMU-REGRESSION", "regression against baseline",
                    "The op still passes or already failed, but got worse than in the baseline run "
                    "(see the reason, before and after).",
                    Tier::regression, false},
    FailureKindInfo{FailureKind::lint_violation, "lint_violation", "GPUEMU-LINT",
                    "kernel artifact check failed",
                    "A [[kernels]] artifact check failed (registers, spills, local memory, forbidden "
                    "instructions; docs/lint.md). Replay with `gpuemu lint --kernel NAME`, then change the "
                    "kernel or, if the cost is intended, the limit in [kernels.artifact_checks].",
                    Tier::artifact, false},
    FailureKindInfo{FailureKind::not_run, "not_run", "GPUEMU-NOT-RUN", "op not run",
                    "No case of the op ran: the run reached its time budget ([ci] thorough_timeout) before "
                    "it got there. Nothing was checked, so the op did not pass; raise the budget, lower the "
                    "iterations, or shard the run (docs/ci.md).",
                    Tier::regression, false},
    FailureKindInfo{
        FailureKind::out_of_bounds, "out_of_bounds", "GPUEMU-OUT-OF-BOUNDS",
        "kernel memory access out of bounds",
        "A load or store lane the mask enables lies outside the storage of the tensor it "
        "addresses (the sanitizer, docs/frameworks.md). On a GPU it reads garbage or corrupts "
        "a neighbour. Mask the access (the tail tile) or fix the offsets at the kernel line named.",
        Tier::wrong_result, false},
    FailureKindInfo{FailureKind::interpreter_unsupported, "interpreter_unsupported",
                    "GPUEMU-INTERPRETER-UNSUPPORTED", "not runnable under the interpreter",
                    "The kernel uses something Triton's CPU interpreter cannot run (named in the message, "
                    "with the kernel's file:line). This is a limit of the interpreter, not a bug of the "
                    "kernel, but nothing was checked: run the op on a GPU runner or avoid the construct.",
                    Tier::setup, false},
    FailureKindInfo{FailureKind::kernel_not_launched, "kernel_not_launched", "GPUEMU-KERNEL-NOT-LAUNCHED",
                    "kernel not launched",
                    "Under the Triton interpreter the op's call returned without launching a @triton.jit "
                    "kernel (the message names the one expected): its output came from other code, such as "
                    "a torch fallback taken when not x.is_cuda, so the kernel was never checked. Launch it "
                    "on CPU tensors under the interpreter, or set require_launch = false on the op.",
                    Tier::setup, false},
};

// Every case kind 1..kLastFailureKind and every report-only kind has exactly one row, and no row
// is `none`: checked at compile time, so a kind added to the enum without a row does not build.
constexpr bool one_row_per_kind() {
  if (kRows.size() != static_cast<std::size_t>(kLastFailureKind) + kReportOnlyKinds) return false;
  auto count = [](FailureKind kind) {
    int n = 0;
    for (const auto& row : kRows) n += row.kind == kind ? 1 : 0;
    return n;
  };
  for (int k = 1; k <= static_cast<int>(kLastFailureKind); ++k) {
    if (count(static_cast<FailureKind>(k)) != 1) return false;
  }
  for (FailureKind kind : {FailureKind::regression, FailureKind::lint_violation, FailureKind::not_run}) {
    if (count(kind) != 1) return false;
  }
  return count(FailureKind::none) == 0;
}
static_assert(one_row_per_kind(), "failure_kinds.cpp needs exactly one row per FailureKind but none");

}  // namespace

std::span<const FailureKindInfo> failure_kinds() {
  return kRows;
}

const FailureKindInfo& failure_kind_info(FailureKind kind) {
  for (const auto& row : kRows) {
    if (row.kind == kind) return row;
  }
  // Only `none` (or a number that is no FailureKind) gets here: the static_assert covers the rest.
  std::abort();
}

const FailureKindInfo* find_failure_kind(std::string_view name) {
  for (const auto& row : kRows) {
    if (row.name == name) return &row;
  }
  return nullptr;
}

bool is_case_kind(FailureKind kind) {
  return kind != FailureKind::none && static_cast<int>(kind) <= static_cast<int>(kLastFailureKind);
}

bool compares_values(std::string_view name) {
  const auto* row = find_failure_kind(name);
  return row && row->compares_values;
}

std::string_view failure_kind_name(FailureKind kind) {
  if (kind == FailureKind::none) return "none";
  for (const auto& row : kRows) {
    if (row.kind == kind) return row.name;
  }
  return "unknown";  // a number that is no FailureKind
}

std::optional<FailureKind> parse_failure_kind(std::string_view name) {
  if (name == "none") return FailureKind::none;
  const auto* row = find_failure_kind(name);
  if (row && is_case_kind(row->kind)) return row->kind;
  return std::nullopt;
}

}  // namespace gpuemu::check
