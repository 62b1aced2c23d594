# Generated from src/check/failure_kinds.cpp by scripts/gen-failure-kinds.sh: edit the table, not this file.
"""Every failure kind of result.json (docs/result-json.md) and the reports' SARIF rule ids."""

# The kinds a case's verdict may have, in the table's order.
CASE_KINDS = (
    "mismatch",
    "nonfinite_mismatch",
    "unexpected_nonfinite",
    "shape_mismatch",
    "dtype_mismatch",
    "invariant_violation",
    "op_error",
    "reference_error",
    "missing_output",
    "input_mutated",
    "output_aliased",
    "out_of_bounds",
    "interpreter_unsupported",
    "kernel_not_launched",
)

# Kinds only the reports flag: a baseline regression, a kernel lint violation, an op not run.
REPORT_ONLY_KINDS = (
    "regression",
    "lint_violation",
    "not_run",
)

RULE_IDS = {
    "mismatch": "GPUEMU-MISMATCH",
    "nonfinite_mismatch": "GPUEMU-NONFINITE-MISMATCH",
    "unexpected_nonfinite": "GPUEMU-UNEXPECTED-NONFINITE",
    "shape_mismatch": "GPUEMU-SHAPE-MISMATCH",
    "dtype_mismatch": "GPUEMU-DTYPE-MISMATCH",
    "invariant_violation": "GPUEMU-INVARIANT-VIOLATION",
    "op_error": "GPUEMU-OP-ERROR",
    "reference_error": "GPUEMU-REFERENCE-ERROR",
    "missing_output": "GPUEMU-MISSING-OUTPUT",
    "input_mutated": "GPUEMU-INPUT-MUTATED",
    "output_aliased": "GPUEMU-OUTPUT-ALIASED",
    "regression": "GPUEMU-REGRESSION",
    "lint_violation": "GPUEMU-LINT",
    "not_run": "GPUEMU-NOT-RUN",
    "out_of_bounds": "GPUEMU-OUT-OF-BOUNDS",
    "interpreter_unsupported": "GPUEMU-INTERPRETER-UNSUPPORTED",
    "kernel_not_launched": "GPUEMU-KERNEL-NOT-LAUNCHED",
}
