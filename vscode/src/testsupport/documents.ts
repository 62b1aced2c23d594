// For the tests: small result.json documents that follow docs/result-json.md, to vary one field at
// a time. The end-to-end tests use documents the real binary wrote.
import { Failure, LintKernel, OpResult, ResultDocument } from '../result';

let nextCase = 0;

export function failure(
  op: string,
  dtype: string,
  kind: string,
  toleranceUsed: unknown,
  seed = '1',
): Failure {
  return {
    seed,
    case: nextCase++,
    op,
    kind,
    dtype,
    layout: 'contiguous',
    distribution: 'regular',
    message: `${kind} in ${op}[${dtype}]`,
    replay: `gpuemu reproduce ${seed} --op ${op}`,
    tolerance_used: toleranceUsed as Failure['tolerance_used'],
  };
}

export function op(name: string, failures: Failure[], source = '', total = 10): OpResult {
  const dtypes = [...new Set(failures.map((f) => f.dtype))];
  if (dtypes.length === 0) dtypes.push('float32');
  return {
    op: name,
    source,
    total: total * dtypes.length,
    passed: total * dtypes.length - failures.length,
    failed: failures.length,
    errors: 0,
    dtypes: dtypes.map((dtype) => {
      const n = failures.filter((f) => f.dtype === dtype).length;
      return {
        dtype,
        total,
        passed: total - n,
        failed: n,
        errors: 0,
        max_abs: 0,
        max_rel: 0,
        max_ulp: 0,
        tolerance_used: 0,
        atol: 1e-5,
        rtol: 1e-5,
      };
    }),
    failures,
  };
}

export function kernel(
  name: string,
  file: string,
  line: number,
  violations: LintKernel['violations'],
): LintKernel {
  return {
    name,
    entry: name,
    source: file,
    arch: 'sm_80',
    file,
    line,
    metrics: {},
    notes: [],
    passed: violations.length === 0,
    violations,
  };
}

export function document(ops: OpResult[], ci?: ResultDocument['ci']): ResultDocument {
  const passed = ops.every((o) => o.failures.length === 0);
  return {
    schema_version: 1,
    tool: { name: 'gpuemu', version: '0.1.0' },
    command: ci ? 'ci' : 'fuzz',
    passed,
    partial: false,
    seed: '7',
    config_digest: '00'.repeat(32),
    project: 'demo',
    duration_secs: 1.5,
    ops: [...ops].sort((a, b) => (a.op < b.op ? -1 : a.op > b.op ? 1 : 0)),
    ...(ci !== undefined ? { ci } : {}),
  };
}
