// The failure kinds of result.json as the extension presents them, mirroring
// src/report/failure_kinds.cpp: the SARIF rule id, a short title and the tier that orders findings.

// Lower tiers are worse (src/report/failure_kinds.hpp): wrong results, numeric drift, baseline
// regressions, kernel artifact checks, then failures of the test setup (a crashing reference).
export enum Tier {
  WrongResult = 0,
  Numeric = 1,
  Regression = 2,
  Artifact = 3,
  Setup = 4,
}

export interface FailureKind {
  name: string; // as in result.json ("mismatch"); "regression" and "lint_violation" are report-only
  ruleId: string; // the SARIF ruleId, shown as the diagnostic's code
  title: string;
  tier: Tier;
}

const KINDS: readonly FailureKind[] = [
  { name: 'mismatch', ruleId: 'GPUEMU-MISMATCH', title: 'output outside tolerance', tier: Tier.Numeric },
  {
    name: 'nonfinite_mismatch',
    ruleId: 'GPUEMU-NONFINITE-MISMATCH',
    title: 'NaN/Inf differ from reference',
    tier: Tier.WrongResult,
  },
  {
    name: 'unexpected_nonfinite',
    ruleId: 'GPUEMU-UNEXPECTED-NONFINITE',
    title: 'unexpected NaN/Inf',
    tier: Tier.WrongResult,
  },
  {
    name: 'shape_mismatch',
    ruleId: 'GPUEMU-SHAPE-MISMATCH',
    title: 'wrong output shape',
    tier: Tier.WrongResult,
  },
  {
    name: 'dtype_mismatch',
    ruleId: 'GPUEMU-DTYPE-MISMATCH',
    title: 'wrong output dtype',
    tier: Tier.WrongResult,
  },
  {
    name: 'invariant_violation',
    ruleId: 'GPUEMU-INVARIANT-VIOLATION',
    title: 'invariant violated',
    tier: Tier.Numeric,
  },
  { name: 'op_error', ruleId: 'GPUEMU-OP-ERROR', title: 'op crashed or timed out', tier: Tier.WrongResult },
  {
    name: 'reference_error',
    ruleId: 'GPUEMU-REFERENCE-ERROR',
    title: 'reference crashed or timed out',
    tier: Tier.Setup,
  },
  {
    name: 'missing_output',
    ruleId: 'GPUEMU-MISSING-OUTPUT',
    title: 'output missing',
    tier: Tier.WrongResult,
  },
  {
    name: 'input_mutated',
    ruleId: 'GPUEMU-INPUT-MUTATED',
    title: 'op wrote into its inputs',
    tier: Tier.WrongResult,
  },
  {
    name: 'output_aliased',
    ruleId: 'GPUEMU-OUTPUT-ALIASED',
    title: 'output aliases an input',
    tier: Tier.WrongResult,
  },
  {
    name: 'out_of_bounds',
    ruleId: 'GPUEMU-OUT-OF-BOUNDS',
    title: 'kernel memory access out of bounds',
    tier: Tier.WrongResult,
  },
  {
    name: 'interpreter_unsupported',
    ruleId: 'GPUEMU-INTERPRETER-UNSUPPORTED',
    title: 'not runnable under the interpreter',
    tier: Tier.Setup,
  },
  {
    name: 'regression',
    ruleId: 'GPUEMU-REGRESSION',
    title: 'regression against baseline',
    tier: Tier.Regression,
  },
  {
    name: 'lint_violation',
    ruleId: 'GPUEMU-LINT',
    title: 'kernel artifact check failed',
    tier: Tier.Artifact,
  },
];

export function failureKinds(): readonly FailureKind[] {
  return KINDS;
}

export function findFailureKind(name: string): FailureKind | undefined {
  return KINDS.find((kind) => kind.name === name);
}

// Whether a case in ops[].failures may have this kind (not the report-only rows).
export function isCaseKind(name: string): boolean {
  return findFailureKind(name) !== undefined && name !== 'regression' && name !== 'lint_violation';
}
