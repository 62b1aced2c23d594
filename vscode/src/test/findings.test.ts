// findings.ts: grouping into (op, dtype) findings and the order of src/report/findings.cpp.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import {
  casePicks,
  collectFindings,
  compareUtf8,
  describe as describeFinding,
  headline,
  label,
  replayText,
  worseCase,
} from '../findings';
import { LintReport } from '../result';
import { document, failure, kernel, op } from '../testsupport/documents';

const order = (doc: ReturnType<typeof document>, lint?: LintReport) =>
  collectFindings(doc, lint).map((f) => `${label(f)} ${f.kind.name}`);

describe('collectFindings order', () => {
  it('puts wrong results before numeric drift, regressions, lint and a broken reference', () => {
    const doc = document(
      [
        op('a_ref', [failure('a_ref', 'float32', 'reference_error', 'NaN')], 'ref.py:1'),
        op('b_drift', [failure('b_drift', 'float32', 'mismatch', 1e9)], 'drift.py:2'),
        op('c_nan', [failure('c_nan', 'float32', 'nonfinite_mismatch', 0.5)], 'nan.py:3'),
        op('d_inv', [failure('d_inv', 'float32', 'invariant_violation', 2)]),
        op('e_crash', [failure('e_crash', 'float32', 'op_error', 'NaN')]),
      ],
      {
        quick: false,
        shard: null,
        baseline: {
          regressions: [{ op: 'b_drift', dtype: 'float16', reason: 'max_ulp grew from 1 to 2 (x2.0)' }],
        },
        lint: {
          passed: false,
          kernels: [kernel('k', 'k.ptx', 4, [{ check: 'max_spills', message: 'spills', file: '', line: 0 }])],
        },
      },
    );
    assert.deepEqual(order(doc), [
      'e_crash[float32] op_error', // tier 0, NaN tolerance counts as the worst
      'c_nan[float32] nonfinite_mismatch',
      'b_drift[float32] mismatch', // tier 1, by tolerance used
      'd_inv[float32] invariant_violation',
      'b_drift[float16] regression',
      'k[max_spills] lint_violation',
      'a_ref[float32] reference_error',
    ]);
  });

  it('orders by tolerance used, NaN and a missing value first, then op and dtype', () => {
    const missing = failure('m', 'float32', 'mismatch', 0);
    delete missing.tolerance_used;
    const doc = document([
      op('x', [
        failure('x', 'float32', 'mismatch', 5),
        failure('x', 'bfloat16', 'mismatch', 5),
        failure('x', 'float16', 'mismatch', 'Infinity'),
      ]),
      op('m', [missing]),
      op('n', [failure('n', 'float32', 'mismatch', 'NaN')]),
      op('B', [failure('B', 'float32', 'mismatch', 5)]),
    ]);
    // Infinity ties with NaN: then by op name. "B" sorts before "x" (bytes), dtypes "bfloat16" < "float32".
    assert.deepEqual(order(doc), [
      'm[float32] mismatch',
      'n[float32] mismatch',
      'x[float16] mismatch',
      'B[float32] mismatch',
      'x[bfloat16] mismatch',
      'x[float32] mismatch',
    ]);
  });

  it('compares names by their UTF-8 bytes, as std::string_view does', () => {
    // UTF-16 code units would put the emoji (a surrogate pair, 0xD83D) before U+FF21; UTF-8 bytes do not.
    assert.ok(compareUtf8('\uFF21', '\u{1F600}') < 0);
    assert.ok('\u{1F600}' < '\uFF21');
    const doc = document([
      op('\u{1F600}', [failure('\u{1F600}', 'float32', 'mismatch', 1)]),
      op('\uFF21', [failure('\uFF21', 'float32', 'mismatch', 1)]),
    ]);
    assert.deepEqual(
      collectFindings(doc).map((f) => f.op),
      ['\uFF21', '\u{1F600}'],
    );
  });

  it('is the same for any order of the ops in the document', () => {
    const ops = [
      op('p', [failure('p', 'float32', 'mismatch', 2)]),
      op('q', [failure('q', 'float32', 'mismatch', 2)]),
    ];
    const forward = document(ops);
    const backward = { ...forward, ops: [...forward.ops].reverse() };
    assert.deepEqual(order(forward), order(backward));
  });
});

describe('collectFindings grouping', () => {
  it('makes one finding per (op, dtype), represented by its worst case', () => {
    const cases = [
      failure('softmax', 'float16', 'mismatch', 3, '11'),
      failure('softmax', 'float32', 'mismatch', 9, '12'),
      failure('softmax', 'float16', 'mismatch', 7, '13'),
      failure('softmax', 'float16', 'shape_mismatch', 0.1, '14'),
      failure('softmax', 'float16', 'mismatch', 100, '15'),
    ];
    const [f16, f32] = collectFindings(document([op('softmax', cases, 'k/softmax.py:12', 40)]));
    assert.equal(label(f16), 'softmax[float16]');
    assert.equal(f16.worst?.seed, '14'); // a wrong shape outranks any numeric drift
    assert.equal(f16.kind.name, 'shape_mismatch'); // the finding's kind is its worst case's
    assert.deepEqual(
      f16.cases.map((c) => c.seed),
      ['11', '13', '14', '15'],
    );
    assert.equal(f16.totalCases, 40);
    assert.deepEqual(f16.location, { path: 'k/softmax.py', line: 12 });
    assert.equal(f32.worst?.seed, '12');
  });

  it('keeps the first of equally bad cases', () => {
    const a = failure('o', 'float32', 'mismatch', 2, '1');
    const b = failure('o', 'float32', 'mismatch', 2, '2');
    assert.equal(worseCase(b, a), false);
    assert.equal(collectFindings(document([op('o', [a, b])]))[0].worst?.seed, '1');
    assert.equal(worseCase(failure('o', 'f', 'op_error', 0), failure('o', 'f', 'mismatch', 'NaN')), true);
  });

  it('places a regression at its op source and a violation at its instruction, else its kernel', () => {
    const lint: LintReport = {
      passed: false,
      kernels: [
        kernel('saxpy', 'kernels/saxpy.ptx', 15, [
          {
            check: 'forbidden_instructions',
            message: "forbidden instruction 'ld.local'",
            file: '/src/saxpy.cu',
            line: 8,
          },
          { check: 'max_local_memory_bytes', message: 'local memory', file: '', line: 0 },
        ]),
      ],
    };
    const doc = document([op('gemm', [], 'gemm.py:30')], {
      quick: false,
      shard: null,
      lint,
      baseline: {
        regressions: [
          { op: 'gemm', dtype: 'float32', reason: 'max_ulp grew' },
          { op: 'gone', dtype: 'float32', reason: 'r' },
        ],
      },
    });
    const findings = collectFindings(doc);
    assert.deepEqual(
      findings.map((f) => [label(f), f.location.path, f.location.line]),
      [
        ['gemm[float32]', 'gemm.py', 30],
        ['gone[float32]', '', 0],
        ['saxpy[forbidden_instructions]', '/src/saxpy.cu', 8],
        ['saxpy[max_local_memory_bytes]', 'kernels/saxpy.ptx', 15],
      ],
    );
    assert.equal(headline(findings[0]), 'max_ulp grew');
    assert.equal(replayText(findings[0]), '');
    assert.equal(replayText(findings[2]), 'gpuemu lint --kernel saxpy');
    assert.equal(findings[2].kernel?.name, 'saxpy');
  });

  it('lets a later lint report take the place of ci.lint', () => {
    const old = {
      passed: false,
      kernels: [kernel('k', 'k.ptx', 1, [{ check: 'max_spills', message: 'm', file: '', line: 0 }])],
    };
    const doc = document([], { quick: false, shard: null, baseline: null, lint: old });
    assert.deepEqual(order(doc), ['k[max_spills] lint_violation']);
    assert.deepEqual(order(doc, { passed: true, kernels: [kernel('k', 'k.ptx', 1, [])] }), []);
    assert.deepEqual(collectFindings(undefined, old).map(label), ['k[max_spills]']);
  });
});

describe('finding text', () => {
  it('says what failed, how often and how to replay it', () => {
    const cases = [
      failure('softmax', 'float16', 'mismatch', 3, '18446744073709551615'),
      failure('softmax', 'float16', 'mismatch', 1, '5'),
    ];
    const [f] = collectFindings(document([op('softmax', cases, '', 8)]));
    assert.equal(
      describeFinding(f),
      'softmax[float16] output outside tolerance: seed 18446744073709551615: mismatch in softmax[float16]\n' +
        '2 of 8 cases failed (mismatch, contiguous, regular values)\n' +
        'Replay: gpuemu reproduce 18446744073709551615 --op softmax',
    );
  });

  it("names the worst case's input shapes (readme.txt: the Problems panel shows seed, dtype, shape)", () => {
    const worst = { ...failure('matmul', 'bfloat16', 'mismatch', 3, '77'), shapes: { a: [5, 7], b: [7, 3] } };
    const other = failure('matmul', 'bfloat16', 'mismatch', 1, '2');
    const [f] = collectFindings(document([op('matmul', [worst, other], '', 4)]));
    assert.equal(
      describeFinding(f),
      'matmul[bfloat16] output outside tolerance: seed 77: mismatch in matmul[bfloat16]\n' +
        '2 of 4 cases failed (mismatch, contiguous, regular values); shapes a [5, 7], b [7, 3]\n' +
        'Replay: gpuemu reproduce 77 --op matmul',
    );
    const scalar = { ...failure('s', 'float32', 'mismatch', 3, '9'), shapes: { x: [] } };
    assert.match(describeFinding(collectFindings(document([op('s', [scalar])]))[0]), /; shapes x \[\]\n/);
  });

  it('lists every failing case for the quick pick, worst finding and worst case first', () => {
    const doc = document(
      [
        op('a', [
          failure('a', 'float32', 'mismatch', 1, '1'),
          failure('a', 'float32', 'mismatch', 4, '2'),
          failure('a', 'float32', 'mismatch', 2, '3'),
        ]),
        op('b', [failure('b', 'float32', 'op_error', 0, '4')]),
      ],
      {
        quick: false,
        shard: null,
        baseline: { regressions: [{ op: 'a', dtype: 'float16', reason: 'r' }] },
        lint: null,
      },
    );
    assert.deepEqual(
      casePicks(collectFindings(doc)).map((p) => `${p.op} ${p.seed}${p.worst ? ' worst' : ''}`),
      ['b 4 worst', 'a 2 worst', 'a 1', 'a 3'],
    );
  });
});
