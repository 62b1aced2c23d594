// result.ts: valid documents load; malformed, foreign or newer ones fail naming the first bad field.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import { ResultError, decodeNumber, isSeed, parseLintReport, parseResult, validateResult } from '../result';
import { document, failure, kernel, op } from '../testsupport/documents';

const NOT_A_RESULT =
  'the file is not a gpuemu result.json version 1 (regenerate it with `gpuemu: Run CI gate` or `gpuemu ci run`)';

function mutated(change: (doc: Record<string, any>) => void): string {
  const doc = JSON.parse(
    JSON.stringify(document([op('softmax', [failure('softmax', 'float16', 'mismatch', 3)])])),
  );
  change(doc);
  return JSON.stringify(doc);
}

function rejects(text: string, message: string) {
  assert.throws(
    () => parseResult(text, 'out/result.json'),
    (e: unknown) => {
      if (!(e instanceof ResultError)) return false;
      assert.equal(e.message, message);
      return true;
    },
  );
}

describe('parseResult', () => {
  it('accepts a document that follows docs/result-json.md', () => {
    const doc = parseResult(
      mutated(() => {}),
      'out/result.json',
    );
    assert.equal(doc.ops[0].failures[0].seed, '1');
  });

  it('accepts the non-finite number strings and a ci section with null parts', () => {
    const text = mutated((d) => {
      d.ops[0].failures[0].tolerance_used = 'NaN';
      d.ops[0].dtypes[0].max_rel = 'Infinity';
      d.command = 'ci';
      d.ci = { quick: true, shard: null, baseline: null, lint: null };
    });
    assert.equal(parseResult(text, 'r.json').ci?.quick, true);
  });

  it('rejects text that is not JSON, and an empty file', () => {
    assert.throws(
      () => parseResult('{"schema_version": 1,', 'out/result.json'),
      /^ResultError: out\/result\.json: not valid JSON \(.+\); truncated or not a result\.json: regenerate it with `gpuemu ci run`$/,
    );
    rejects(
      '  \n',
      'out/result.json: the file is empty; regenerate it with `gpuemu: Run CI gate` or `gpuemu ci run`',
    );
  });

  it('rejects a document that is not an object', () => {
    rejects('[1, 2]', `out/result.json: (document) should be a JSON object; ${NOT_A_RESULT}`);
  });

  it('rejects another schema version, saying what to do', () => {
    rejects(
      mutated((d) => (d.schema_version = 2)),
      'out/result.json: schema_version is 2 but this extension reads version 1; update the gpuemu extension to the ' +
        'release of the gpuemu that wrote it',
    );
    rejects(
      mutated((d) => delete d.schema_version),
      `out/result.json: schema_version is missing; ${NOT_A_RESULT}`,
    );
    rejects(
      mutated((d) => (d.schema_version = '1')),
      `out/result.json: schema_version should be a non-negative integer, found "1"; ${NOT_A_RESULT}`,
    );
  });

  it('names the first offending field, as the C++ reader does', () => {
    rejects(
      mutated((d) => (d.ops[0].failures[0].seed = 1234)),
      `out/result.json: ops[0].failures[0].seed should be a seed as a decimal string, found 1234; ${NOT_A_RESULT}`,
    );
    rejects(
      mutated((d) => (d.ops[0].failures[0].kind = 'wrong')),
      `out/result.json: ops[0].failures[0].kind names an unknown failure kind "wrong"; ${NOT_A_RESULT}`,
    );
    rejects(
      mutated((d) => (d.ops[0].failures[0].kind = 'regression')),
      `out/result.json: ops[0].failures[0].kind names an unknown failure kind "regression"; ${NOT_A_RESULT}`,
    );
    rejects(
      mutated((d) => (d.ops[0].dtypes[0].total = -1)),
      `out/result.json: ops[0].dtypes[0].total should be a non-negative integer, found -1; ${NOT_A_RESULT}`,
    );
    rejects(
      mutated((d) => (d.ops[0].failures[0].tolerance_used = 'nan')),
      `out/result.json: ops[0].failures[0].tolerance_used should be a number or "NaN", "Infinity", "-Infinity", ` +
        `found "nan"; ${NOT_A_RESULT}`,
    );
    rejects(
      mutated((d) => (d.ops[0].failures[0].message = 'x'.repeat(100).split(''))),
      `out/result.json: ops[0].failures[0].message should be a string, found ["x","x","x","x","x","x","x","x","x","x"...; ` +
        NOT_A_RESULT,
    );
    rejects(
      mutated((d) => delete d.ops),
      `out/result.json: ops is missing; ${NOT_A_RESULT}`,
    );
    rejects(
      mutated((d) => (d.ops[0].failures[0].worst = [3])),
      `out/result.json: ops[0].failures[0].worst[0] should be an object; ${NOT_A_RESULT}`,
    );
  });

  it('checks ci.baseline regressions and ci.lint violations', () => {
    rejects(
      mutated(
        (d) =>
          (d.ci = {
            quick: false,
            shard: null,
            baseline: { regressions: [{ op: 'a', dtype: 'f' }] },
            lint: null,
          }),
      ),
      `out/result.json: ci.baseline.regressions[0].reason is missing; ${NOT_A_RESULT}`,
    );
    const badViolation = { check: 'max_registers', message: 'too many', file: 'k.ptx' };
    rejects(
      mutated(
        (d) =>
          (d.ci = {
            quick: false,
            shard: null,
            baseline: null,
            lint: { passed: false, kernels: [kernel('k', 'k.ptx', 3, [badViolation as any])] },
          }),
      ),
      `out/result.json: ci.lint.kernels[0].violations[0].line is missing; ${NOT_A_RESULT}`,
    );
    rejects(
      mutated((d) => (d.ci = { quick: false, shard: 3, baseline: null, lint: null })),
      `out/result.json: ci.shard should be a string, found 3; ${NOT_A_RESULT}`,
    );
  });

  it('validateResult takes a parsed value', () => {
    assert.throws(() => validateResult(null, 'x.json'), /x\.json: \(document\) should be a JSON object/);
  });
});

describe('seeds and numbers', () => {
  it('a seed is a decimal string of an unsigned 64-bit integer', () => {
    assert.ok(isSeed('0') && isSeed('18446744073709551615') && isSeed('9223372036854775809'));
    for (const bad of [
      '18446744073709551616',
      '99999999999999999999',
      '',
      '-1',
      '1e3',
      ' 1',
      '123456789012345678901',
      12,
    ]) {
      assert.equal(isSeed(bad), false, String(bad));
    }
  });

  it('decodes the non-finite strings', () => {
    assert.equal(decodeNumber(2.5), 2.5);
    assert.equal(decodeNumber('Infinity'), Infinity);
    assert.equal(decodeNumber('-Infinity'), -Infinity);
    assert.ok(Number.isNaN(decodeNumber('NaN')));
    assert.ok(Number.isNaN(decodeNumber(undefined)));
  });
});

describe('parseLintReport', () => {
  it('reads the output of gpuemu lint --format json', () => {
    const text = JSON.stringify({ kernels: [kernel('k', 'k.ptx', 3, [])], passed: true, tools: {} });
    assert.equal(parseLintReport(text, 'lint').kernels[0].name, 'k');
  });

  it('names what is wrong', () => {
    assert.throws(
      () => parseLintReport('{"passed": true}', 'gpuemu lint --format json'),
      (e: unknown) => {
        assert.equal(
          (e as Error).message,
          'gpuemu lint --format json: kernels is missing; expected the JSON document ' +
            'of `gpuemu lint --format json` (docs/lint.md)',
        );
        return true;
      },
    );
    assert.throws(
      () => parseLintReport('error: no [[kernels]]', 'lint'),
      /^ResultError: lint: not valid JSON/,
    );
  });
});
