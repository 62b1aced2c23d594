// source.ts: "path:line" as src/report/result_document.cpp parses it; paths against the project root.
import assert from 'node:assert/strict';
import * as path from 'node:path';
import { describe, it } from 'node:test';

import { findEntryLine, parseSource, resolveInProject } from '../source';

describe('parseSource', () => {
  const cases: [string, string, number][] = [
    ['kernels/softmax.py:12', 'kernels/softmax.py', 12],
    ['kernels/softmax.py', 'kernels/softmax.py', 0],
    ['', '', 0],
    ['a.py:', 'a.py:', 0], // nothing after the colon
    [':7', ':7', 0], // nothing before it
    ['C:\\src\\op.py:3', 'C:\\src\\op.py', 3], // the last colon counts
    ['C:\\src\\op.py', 'C:\\src\\op.py', 0],
    ['a.py:12x', 'a.py:12x', 0],
    ['a.py:123456789', 'a.py', 123456789],
    ['a.py:1234567890', 'a.py:1234567890', 0], // more than 9 digits is no line
    ['dir:with:colons/op.py:5', 'dir:with:colons/op.py', 5],
    ['a.py:-3', 'a.py:-3', 0],
  ];
  for (const [source, file, line] of cases) {
    it(JSON.stringify(source), () => assert.deepEqual(parseSource(source), { path: file, line }));
  }
});

describe('resolveInProject', () => {
  it('resolves relative paths against the project root and keeps absolute ones', () => {
    assert.equal(resolveInProject('kernels/a.py', '/proj'), path.resolve('/proj/kernels/a.py'));
    assert.equal(resolveInProject('./a/../b.py', '/proj'), path.resolve('/proj/b.py'));
    assert.equal(resolveInProject('/elsewhere/x.cu', '/proj'), '/elsewhere/x.cu');
  });
});

describe('findEntryLine', () => {
  const toml = [
    '[project]',
    'name = "softmax"', // not an op
    '',
    '[[ops]]',
    'name = "gemm"',
    '[ops.schema]',
    'name = "softmax"', // inside a sub-table, not an op entry
    '',
    '[[ops]]',
    "name = 'softmax'  # single quotes and a comment",
    '',
    '[[ kernels ]]',
    'name = "softmax"',
  ].join('\n');
  it('finds the [[ops]] or [[kernels]] entry with that name', () => {
    assert.equal(findEntryLine(toml, 'ops', 'gemm'), 5);
    assert.equal(findEntryLine(toml, 'ops', 'softmax'), 10);
    assert.equal(findEntryLine(toml, 'kernels', 'softmax'), 13);
    assert.equal(findEntryLine(toml, 'ops', 'missing'), 0);
  });
});
