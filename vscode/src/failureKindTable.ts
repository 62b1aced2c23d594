// Generated from src/check/failure_kinds.cpp by scripts/gen-failure-kinds.sh: edit the table, not this file.
// The failure kinds of result.json as the extension presents them (failureKinds.ts uses them).

// Lower tiers are worse: wrong results, numeric drift, baseline regressions, kernel artifact
// checks, then failures of the test setup (a crashing reference).
export enum Tier {
  WrongResult = 0,
  Numeric = 1,
  Regression = 2,
  Artifact = 3,
  Setup = 4,
}

export interface FailureKind {
  name: string; // as in result.json ("mismatch")
  ruleId: string; // the SARIF ruleId, shown as the diagnostic's code
  title: string;
  tier: Tier;
  caseKind: boolean; // false for the report-only kinds (regression, lint_violation, not_run)
}

export const KINDS: readonly FailureKind[] = [
  { name: 'mismatch', ruleId: 'GPUEMU-MISMATCH', title: 'output outside tolerance', tier: Tier.Numeric, caseKind: true },
  { name: 'nonfinite_mismatch', ruleId: 'GPUEMU-NONFINITE-MISMATCH', title: 'NaN/Inf differ from reference', tier: Tier.WrongResult, caseKind: true },
  { name: 'unexpected_nonfinite', ruleId: 'GPUEMU-UNEXPECTED-NONFINITE', title: 'unexpected NaN/Inf', tier: Tier.WrongResult, caseKind: true },
  { name: 'shape_mismatch', ruleId: 'GPUEMU-SHAPE-MISMATCH', title: 'wrong output shape', tier: Tier.WrongResult, caseKind: true },
  { name: 'dtype_mismatch', ruleId: 'GPUEMU-DTYPE-MISMATCH', title: 'wrong output dtype', tier: Tier.WrongResult, caseKind: true },
  { name: 'invariant_violation', ruleId: 'GPUEMU-INVARIANT-VIOLATION', title: 'invariant violated', tier: Tier.Numeric, caseKind: true },
  { name: 'op_error', ruleId: 'GPUEMU-OP-ERROR', title: 'op crashed or timed out', tier: Tier.WrongResult, caseKind: true },
  { name: 'reference_error', ruleId: 'GPUEMU-REFERENCE-ERROR', title: 'reference crashed or timed out', tier: Tier.Setup, caseKind: true },
  { name: 'missing_output', ruleId: 'GPUEMU-MISSING-OUTPUT', title: 'output missing', tier: Tier.WrongResult, caseKind: true },
  { name: 'input_mutated', ruleId: 'GPUEMU-INPUT-MUTATED', title: 'op wrote into its inputs', tier: Tier.WrongResult, caseKind: true },
  { name: 'output_aliased', ruleId: 'GPUEMU-OUTPUT-ALIASED', title: 'output aliases an input', tier: Tier.WrongResult, caseKind: true },
  { name: 'regression', ruleId: 'GPUEMU-REGRESSION', title: 'regression against baseline', tier: Tier.Regression, caseKind: false },
  { name: 'lint_violation', ruleId: 'GPUEMU-LINT', title: 'kernel artifact check failed', tier: Tier.Artifact, caseKind: false },
  { name: 'not_run', ruleId: 'GPUEMU-NOT-RUN', title: 'op not run', tier: Tier.Regression, caseKind: false },
  { name: 'out_of_bounds', ruleId: 'GPUEMU-OUT-OF-BOUNDS', title: 'kernel memory access out of bounds', tier: Tier.WrongResult, caseKind: true },
  { name: 'interpreter_unsupported', ruleId: 'GPUEMU-INTERPRETER-UNSUPPORTED', title: 'not runnable under the interpreter', tier: Tier.Setup, caseKind: true },
  { name: 'kernel_not_launched', ruleId: 'GPUEMU-KERNEL-NOT-LAUNCHED', title: 'kernel not launched', tier: Tier.Setup, caseKind: true },
];
