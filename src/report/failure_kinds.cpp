// The table of failure kinds the reports know: one row per kind of docs/result-json.md, in the
// order SARIF publishes them as rules.
#include "report/failure_kinds.hpp"

#include <array>

namespace gpuemu::report {
namespace {

constexpr std::array kKinds{
    FailureKindInfo{"mismatch", "GPUEMU-MISMATCH", "output outside tolerance",
                    "Some output elements differ from the reference by more than atol + rtol * |ref|. "
                    "Replay the seed, look at the worst elements, and fix the kernel or, if the error "
                    "is expected, widen the op's tolerance.",
                    Tier::numeric},
    FailureKindInfo{"nonfinite_mismatch", "GPUEMU-NONFINITE-MISMATCH", "NaN/Inf differ from reference",
                    "NaN or infinity positions or signs differ from the reference's (NaN must meet NaN, "
                    "+inf must meet +inf). Look for overflow, a missing max-subtraction or 0/0.",
                    Tier::wrong_result},
    FailureKindInfo{"unexpected_nonfinite", "GPUEMU-UNEXPECTED-NONFINITE", "unexpected NaN/Inf",
                    "The output holds NaN or infinity where the reference is finite and the op checks "
                    "for them (check_nan / check_inf).",
                    Tier::wrong_result},
    FailureKindInfo{"shape_mismatch", "GPUEMU-SHAPE-MISMATCH", "wrong output shape",
                    "An output's shape differs from the reference's.", Tier::wrong_result},
    FailureKindInfo{"dtype_mismatch", "GPUEMU-DTYPE-MISMATCH", "wrong output dtype",
                    "An output's dtype differs from the one the op declares.", Tier::wrong_result},
    FailureKindInfo{"invariant_violation", "GPUEMU-INVARIANT-VIOLATION", "invariant violated",
                    "The output breaks an invariant the op declares (shape_preserved, non_negative, "
                    "finite, symmetric, normalized).",
                    Tier::numeric},
    FailureKindInfo{"op_error", "GPUEMU-OP-ERROR", "op crashed or timed out",
                    "The op under test exited non-zero, timed out or answered something unreadable; its "
                    "stderr is in the report.",
                    Tier::wrong_result},
    FailureKindInfo{"reference_error", "GPUEMU-REFERENCE-ERROR", "reference crashed or timed out",
                    "The reference implementation failed on this case, so nothing was compared; fix the "
                    "reference script or its declared input domain.",
                    Tier::setup},
    FailureKindInfo{"missing_output", "GPUEMU-MISSING-OUTPUT", "output missing",
                    "An output the reference produces is absent from the op's answer.", Tier::wrong_result},
    FailureKindInfo{"input_mutated", "GPUEMU-INPUT-MUTATED", "op wrote into its inputs",
                    "The op modified an input buffer it should only read.", Tier::wrong_result},
    FailureKindInfo{"output_aliased", "GPUEMU-OUTPUT-ALIASED", "output aliases an input",
                    "An output buffer overlaps an input buffer.", Tier::wrong_result},
    FailureKindInfo{"regression", "GPUEMU-REGRESSION", "regression against baseline",
                    "The op still passes or already failed, but got worse than in the baseline run "
                    "(see the reason, before and after).",
                    Tier::regression},
    FailureKindInfo{"lint_violation", "GPUEMU-LINT", "kernel artifact check failed",
                    "A [[kernels]] artifact check failed (registers, spills, local memory, forbidden "
                    "instructions; docs/lint.md). Replay with `gpuemu lint --kernel NAME`, then change the "
                    "kernel or, if the cost is intended, the limit in [kernels.artifact_checks].",
                    Tier::artifact},
    FailureKindInfo{"not_run", "GPUEMU-NOT-RUN", "op not run",
                    "No case of the op ran: the run reached its time budget ([ci] thorough_timeout) before "
                    "it got there. Nothing was checked, so the op did not pass; raise the budget, lower the "
                    "iterations, or shard the run (docs/ci.md).",
                    Tier::regression},
    FailureKindInfo{
        "out_of_bounds", "GPUEMU-OUT-OF-BOUNDS", "kernel memory access out of bounds",
        "A load or store lane the mask enables lies outside the storage of the tensor it "
        "addresses (the sanitizer, docs/frameworks.md). On a GPU it reads garbage or corrupts "
        "a neighbour. Mask the access (the tail tile) or fix the offsets at the kernel line named.",
        Tier::wrong_result},
    FailureKindInfo{"interpreter_unsupported", "GPUEMU-INTERPRETER-UNSUPPORTED",
                    "not runnable under the interpreter",
                    "The kernel uses something Triton's CPU interpreter cannot run (named in the message, "
                    "with the kernel's file:line). This is a limit of the interpreter, not a bug of the "
                    "kernel, but nothing was checked: run the op on a GPU runner or avoid the construct.",
                    Tier::setup},
};

}  // namespace

bool is_case_kind(std::string_view name) {
  return find_failure_kind(name) && name != "regression" && name != "lint_violation" && name != "not_run";
}

std::span<const FailureKindInfo> failure_kinds() {
  return kKinds;
}

const FailureKindInfo* find_failure_kind(std::string_view name) {
  for (const auto& kind : kKinds) {
    if (kind.name == name) return &kind;
  }
  return nullptr;
}

bool compares_values(std::string_view kind) {
  return kind == "mismatch" || kind == "nonfinite_mismatch" || kind == "unexpected_nonfinite" ||
         kind == "invariant_violation";
}

}  // namespace gpuemu::report
