// diagnostics.ts and status.ts: where each finding goes in the Problems panel, and the status bar.
import assert from 'node:assert/strict';
import * as path from 'node:path';
import { describe, it } from 'node:test';

import { byFile, diagnosticsFor } from '../diagnostics';
import { collectFindings } from '../findings';
import { missingStatus, resultStatus, unreadableStatus } from '../status';
import { document, failure, kernel, op } from '../testsupport/documents';

const ROOT = path.resolve('/proj');
const TOML = [
  '[project]',
  'name = "demo"',
  '',
  '[[ops]]',
  'name = "nosource"',
  '',
  '[[kernels]]',
  'name = "saxpy"',
].join('\n');

function sample() {
  return document(
    [
      op(
        'softmax',
        [
          failure('softmax', 'float16', 'mismatch', 3, '21'),
          failure('softmax', 'float32', 'op_error', 0, '22'),
        ],
        'kernels/softmax.py:12',
      ),
      op('nosource', [failure('nosource', 'float32', 'mismatch', 1, '23')]),
      op('abs', [failure('abs', 'float32', 'mismatch', 2, '24')], '/abs/elsewhere.py'),
    ],
    {
      quick: false,
      shard: null,
      baseline: {
        regressions: [{ op: 'softmax', dtype: 'bfloat16', reason: 'max_ulp grew from 1 to 2 (x2.0)' }],
      },
      lint: {
        passed: false,
        kernels: [
          kernel('saxpy', 'kernels/saxpy.ptx', 15, [
            {
              check: 'forbidden_instructions',
              message: "forbidden instruction 'ld.local'",
              file: '',
              line: 0,
            },
          ]),
        ],
      },
    },
  );
}

describe('diagnosticsFor', () => {
  it('puts each finding at its file and 0-based line, worst first', () => {
    const specs = diagnosticsFor(collectFindings(sample()), {
      root: ROOT,
      config: path.join(ROOT, 'gpuemu.toml'),
      configText: TOML,
    });
    assert.deepEqual(
      specs.map((s) => [s.rank, s.code, s.file, s.line, s.severity]),
      [
        [1, 'GPUEMU-OP-ERROR', path.join(ROOT, 'kernels', 'softmax.py'), 11, 'error'],
        [2, 'GPUEMU-MISMATCH', path.join(ROOT, 'kernels', 'softmax.py'), 11, 'error'],
        [3, 'GPUEMU-MISMATCH', '/abs/elsewhere.py', 0, 'error'],
        [4, 'GPUEMU-MISMATCH', path.join(ROOT, 'gpuemu.toml'), 4, 'error'], // no source: the [[ops]] entry
        [5, 'GPUEMU-REGRESSION', path.join(ROOT, 'kernels', 'softmax.py'), 11, 'warning'],
        [6, 'GPUEMU-LINT', path.join(ROOT, 'kernels', 'saxpy.ptx'), 14, 'warning'],
      ],
    );
    assert.equal(
      specs[1].message,
      'softmax[float16] output outside tolerance: seed 21: mismatch in softmax[float16]\n' +
        '1 of 10 cases failed (mismatch, contiguous, regular values)\nReplay: gpuemu reproduce 21 --op softmax',
    );
    assert.equal(
      specs[4].message,
      'softmax[bfloat16] regression against baseline: max_ulp grew from 1 to 2 (x2.0)',
    );
    assert.equal(
      specs[5].message,
      'saxpy[forbidden_instructions] kernel artifact check failed: forbidden instruction ' +
        "'ld.local'\nReplay: gpuemu lint --kernel saxpy",
    );
  });

  it('without the config text a source-less finding goes to the first line of gpuemu.toml', () => {
    const specs = diagnosticsFor(collectFindings(sample()), { root: ROOT });
    const nosource = specs.find((s) => s.finding.op === 'nosource');
    assert.deepEqual([nosource?.file, nosource?.line], [path.join(ROOT, 'gpuemu.toml'), 0]);
  });

  it('groups by file keeping the order', () => {
    const files = byFile(diagnosticsFor(collectFindings(sample()), { root: ROOT }));
    assert.deepEqual(
      [...files.keys()],
      [
        path.join(ROOT, 'kernels', 'softmax.py'),
        '/abs/elsewhere.py',
        path.join(ROOT, 'gpuemu.toml'),
        path.join(ROOT, 'kernels', 'saxpy.ptx'),
      ],
    );
    assert.deepEqual(
      files.get(path.join(ROOT, 'kernels', 'softmax.py'))?.map((s) => s.rank),
      [1, 2, 5],
    );
  });
});

describe('status bar', () => {
  it('counts failed (failed + errors) and passed cases, regressions and lint violations', () => {
    const doc = sample();
    doc.ops[0].errors = 1;
    const status = resultStatus(doc, collectFindings(doc), '/proj/gpuemu-out/result.json');
    assert.equal(status.text, '$(error) gpuemu 5 failed, 36 passed, 1 regression, 1 lint violation');
    assert.equal(status.state, 'failed');
    assert.equal(
      status.tooltip,
      [
        'gpuemu ci of project "demo": failed',
        '41 cases in 3 ops: 36 passed, 5 failed',
        'master seed 7, 1.5 s',
        '/proj/gpuemu-out/result.json',
        '6 findings in the Problems panel',
      ].join('\n'),
    );
  });

  it("follows a later lint run that replaces the result's ci.lint", () => {
    const violation = { check: 'max_spills', message: 'spills', file: '', line: 0 };
    const doc = document([op('a', [], 'a.py', 12)], {
      quick: false,
      shard: null,
      baseline: null,
      lint: { passed: false, kernels: [kernel('k', 'k.ptx', 1, [violation])] },
    });
    doc.passed = false; // the run failed on its lint alone
    assert.equal(
      resultStatus(doc, collectFindings(doc), 'r.json').text,
      '$(error) gpuemu 0 failed, 12 passed, 1 lint violation',
    );
    const clean = { passed: true, kernels: [kernel('k', 'k.ptx', 1, [])] };
    assert.equal(resultStatus(doc, collectFindings(doc, clean), 'r.json').text, '$(pass) gpuemu 12 passed');
    const failing = document([op('a', [failure('a', 'float32', 'mismatch', 2)], 'a.py', 12)]);
    assert.equal(resultStatus(failing, collectFindings(failing, clean), 'r.json').state, 'failed');
  });

  it('a passing result, a partial one, none and an unreadable one', () => {
    const doc = document([op('a', [], 'a.py', 12)]);
    assert.equal(resultStatus(doc, [], 'r.json').text, '$(pass) gpuemu 12 passed');
    assert.equal(resultStatus(doc, [], 'r.json').state, 'passed');
    assert.equal(
      resultStatus({ ...doc, partial: true }, [], 'r.json').text,
      '$(pass) gpuemu 12 passed (partial)',
    );
    assert.deepEqual(missingStatus('/p/r.json'), {
      text: '$(beaker) gpuemu: no result',
      state: 'none',
      tooltip: '/p/r.json does not exist yet: run gpuemu: Run CI gate',
    });
    assert.deepEqual(unreadableStatus('r.json: broken'), {
      text: '$(warning) gpuemu: unreadable result',
      state: 'unreadable',
      tooltip: 'r.json: broken',
    });
  });
});
