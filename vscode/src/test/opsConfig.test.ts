// opsConfig.ts's copy of the extends/implementations rule against the C++ loader's results in
// tests/vectors/op_family.json (written by scripts/gen-op-family-vectors.sh): names, dtypes, files.
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { describe, it } from 'node:test';

import { configOps } from '../opsConfig';
import { REPO } from '../testsupport/gpuemu';

interface VectorOp {
  name: string;
  spec: string;
  implementation: string;
  kernel: string;
  kernel_is_script: boolean;
  reference: string;
  reference_is_script: boolean;
  dtypes: string[];
}
interface Vector {
  name: string;
  toml: string[];
  ops: VectorOp[];
}

const vectors: Vector[] = JSON.parse(
  fs.readFileSync(path.join(REPO, 'tests', 'vectors', 'op_family.json'), 'utf8'),
).cases;

// What the Test Explorer shows of an op: the vectors' fields it has.
const shown = (o: {
  name: string;
  spec: string;
  implementation?: string;
  dtypes: string[];
  kernelFiles: string[];
}) => [o.name, o.spec, o.implementation ?? '', o.dtypes.join(','), o.kernelFiles.join(',')];

describe('the extends/implementations rule (tests/vectors/op_family.json)', () => {
  for (const vector of vectors) {
    it(vector.name, () => {
      assert.ok(vector.ops.length > 0, 'the vector has no ops: run scripts/gen-op-family-vectors.sh');
      const ops = configOps(vector.toml.join('\n'));
      assert.deepEqual(
        ops.map(shown),
        vector.ops.map((o) => shown({ ...o, kernelFiles: o.kernel_is_script ? [o.kernel] : [] })),
      );
      for (const op of ops) {
        const expected = vector.ops.find((o) => o.name === op.name)!;
        assert.deepEqual(op.referenceFiles, expected.reference_is_script ? [expected.reference] : []);
      }
    });
  }
});
