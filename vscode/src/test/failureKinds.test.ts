// failureKinds.ts: the generated table has every kind of src/check/failure_kinds.cpp, report-only ones
// included (the C++ test FailureKinds.VsCodeTableIsCurrent keeps the file current).
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import { Tier, failureKinds, findFailureKind, isCaseKind } from '../failureKinds';

describe('failure kinds', () => {
  it('knows the report-only kinds, not as case kinds', () => {
    for (const name of ['regression', 'lint_violation', 'not_run']) {
      assert.ok(findFailureKind(name), name);
      assert.equal(isCaseKind(name), false, name);
    }
    assert.equal(findFailureKind('not_run')?.ruleId, 'GPUEMU-NOT-RUN');
  });

  it('knows every case kind with its rule and tier', () => {
    assert.equal(isCaseKind('interpreter_unsupported'), true);
    assert.equal(findFailureKind('out_of_bounds')?.tier, Tier.WrongResult);
    assert.equal(findFailureKind('mismatch')?.ruleId, 'GPUEMU-MISMATCH');
    assert.equal(isCaseKind('no_such_kind'), false);
    const names = failureKinds().map((k) => k.name);
    assert.equal(new Set(names).size, names.length);
  });
});
